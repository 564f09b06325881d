//! A local Hugging Face model directory: the tokenizer plus the facts
//! derender needs (special ids, EOS ids, context length, decode tables).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use tokenizers::{Decoder, Tokenizer};

use crate::hub::Source;
use crate::tekken::{Tekken, KEPT_SPECIALS};

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("model directory {0} has no tokenizer.json")]
    NoTokenizer(PathBuf),
    #[error("could not load {path}: {reason}")]
    Load { path: PathBuf, reason: String },
    #[error(transparent)]
    NotFound(#[from] crate::hub::NotFound),
    #[error(transparent)]
    Tekken(#[from] crate::tekken::TekkenError),
    #[error("tokenizer mode mistral: {0} has no tekken.json")]
    NoTekken(PathBuf),
    /// Requests are rendered as mistral_common's `InstructTokenizerV13`.
    #[error("tokenizer mode mistral: derender renders requests for tekken v7, v11 and v13 tokenizers (Mistral Small 3 and 3.2; Magistral, Devstral); {0} is v{1}")]
    TekkenVersion(PathBuf, u32),
    /// vLLM's `get_hf_text_config` check, reached through `--hf-overrides`.
    /// vLLM's `get_hf_text_config` check, reached through `--hf-overrides`.
    #[error("--hf-overrides: The text_config extracted from the model config does not have `num_attention_heads` attribute. This indicates a mismatch between the model config and vLLM's expectations. Please ensure that the model config is compatible with vLLM.")]
    TextConfig,
}

/// A loaded model: tokenizer and per-id tables built once at startup.
pub struct Model {
    /// The model's directory (`config.json`, `generation_config.json`).
    pub path: PathBuf,
    /// The tokenizer's directory (`--tokenizer`; the model's by default).
    pub tokenizer_path: PathBuf,
    pub tokenizer: Tokenizer,
    /// `len(tokenizer)`: regular vocabulary plus added tokens.
    pub vocab_len: usize,
    /// Raw vocabulary piece per id (`convert_ids_to_tokens`).
    pieces: Vec<Option<String>>,
    /// Ids skipped by `skip_special_tokens` (transformers' `all_special_ids`).
    special: Vec<bool>,
    /// `(id, piece)` of every special id, listed once at load: parsers ask
    /// for it on every request.
    special_list: Vec<(i64, String)>,
    /// The tokenizer's EOS id (the primary stop token).
    pub eos_token_id: Option<i64>,
    /// generation_config `eos_token_id` plus the tokenizer's EOS.
    pub model_eos_ids: HashSet<i64>,
    /// The context length the config declares (`max_position_embeddings`...).
    pub config_max_len: Option<usize>,
    /// SentencePiece space marker when the pre-tokenizer is Metaspace.
    pub space_marker: Option<char>,
    pub chat_template: Option<String>,
    pub model_type: Option<String>,
    /// `config.json`'s first architecture (vLLM's `ModelConfig.architecture`).
    pub architecture: Option<String>,
    /// `generation_config.json` (the model's default sampling values).
    pub generation_config: Value,
    /// `tokenizer_config.json` as read (the tokenizer's `init_kwargs`:
    /// families read checkpoint fields such as Hunyuan's `token_suffix`).
    pub tokenizer_config: Value,
    /// Named special tokens as templates see them (`bos_token`, `eos_token`, ...).
    pub special_tokens_map: serde_json::Map<String, Value>,
    /// The longest vocabulary piece in chars (`max_chars_per_token`): a text
    /// prompt longer than this times the context cannot fit it.
    pub max_chars_per_token: usize,
    /// How ids become text: a Hugging Face tokenizer's decoder or tekken.
    codec: Codec,
    /// The tokenizer mode it was loaded in (what writes chat prompts).
    pub mode: TokenizerMode,
}

/// vLLM's tokenizer modes that derender builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TokenizerMode {
    /// `tokenizer.json` through transformers (`hf`; `auto` for most models).
    #[default]
    Hf,
    /// `tekken.json` through mistral_common (`mistral`).
    Mistral,
    /// `tokenizer.json` with DeepSeek-V3.2's prompt encoder in place of a
    /// chat template (`deepseek_v32`).
    DeepseekV32,
    /// ...and DeepSeek-V4's (`deepseek_v4`).
    DeepseekV4,
    /// ...and DeepSeek-V4.1's (`deepseek_v41`).
    DeepseekV41,
    /// `tokenizer.json` under Inkling's encoding, which writes ids, not a
    /// prompt text (`inkling`).
    Inkling,
    /// `tokenizer.json` under Kimi K3's encoding, which writes ids segment
    /// by segment (`kimi_k3`).
    KimiK3,
    /// `tokenizer.json` under cohere-melody's prompt templates (`cohere`).
    Cohere,
}

enum Codec {
    /// `byte_level`: the decoder is a plain ByteLevel one, so pieces decode
    /// through the byte table below without the generic decoder machinery.
    Hf {
        byte_level: bool,
    },
    Tekken(Box<Tekken>),
}

fn first_architecture(config: &Value) -> Option<String> {
    config.get("architectures")?.as_array()?.first()?.as_str().map(str::to_string)
}

/// GPT-2's `bytes_to_unicode`, inverted: char code → byte, for the 324
/// chars ByteLevel uses.
fn byte_level_table() -> &'static [Option<u8>; 324] {
    static TABLE: std::sync::OnceLock<[Option<u8>; 324]> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = [None; 324];
        let direct = |b: u8| (b'!'..=b'~').contains(&b) || (0xA1..=0xAC).contains(&b) || (0xAE..=0xFF).contains(&b);
        let mut n = 0usize;
        for b in 0..=255u8 {
            if direct(b) {
                table[b as usize] = Some(b);
            } else {
                table[256 + n] = Some(b);
                n += 1;
            }
        }
        table
    })
}

/// ByteLevel decoding of one piece: its bytes through the table, or the
/// piece's own UTF-8 when a char is outside it (added tokens like `<｜…｜>`).
fn byte_level_piece(piece: &str, out: &mut Vec<u8>) {
    let table = byte_level_table();
    let start = out.len();
    for c in piece.chars() {
        match table.get(c as usize).copied().flatten() {
            Some(b) => out.push(b),
            None => {
                out.truncate(start);
                out.extend_from_slice(piece.as_bytes());
                return;
            }
        }
    }
}

/// A JSON file of the model directory: `Null` when absent; unreadable or
/// malformed JSON stops the load (transformers would fail on it too).
fn read_json(path: &Path) -> Result<Value, ModelError> {
    let fail = |reason: String| ModelError::Load { path: path.to_path_buf(), reason };
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| fail(format!("invalid JSON: {e}"))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Value::Null),
        Err(e) => Err(fail(e.to_string())),
    }
}

/// `"tok"` or `{"content": "tok", ...}` as written in tokenizer configs.
fn token_text(v: &Value) -> Option<&str> {
    match v {
        Value::String(s) => Some(s),
        Value::Object(o) => o.get("content").and_then(Value::as_str),
        _ => None,
    }
}

impl Model {
    /// Load a model directory, or resolve a model id from the local HF cache.
    pub fn load(spec: &str) -> Result<Model, ModelError> {
        Self::load_with(spec, &Map::new())
    }

    /// `load` with `--hf-overrides` laid over `config.json` (the model's
    /// architecture, type and context length; not its tokenizer).
    pub fn load_with(spec: &str, hf_overrides: &Map<String, Value>) -> Result<Model, ModelError> {
        Self::load_from(&Source::model(spec), hf_overrides)
    }

    /// The model and tokenizer `source` names (`--tokenizer`, revisions).
    pub fn load_from(source: &Source, hf_overrides: &Map<String, Value>) -> Result<Model, ModelError> {
        Self::load_mode(source, TokenizerMode::Hf, hf_overrides)
    }

    /// `load_from` with the tokenizer of `mode`.
    pub fn load_mode(
        source: &Source,
        mode: TokenizerMode,
        hf_overrides: &Map<String, Value>,
    ) -> Result<Model, ModelError> {
        let (model, tokenizer) = source.resolve()?;
        let mut loaded = match mode {
            TokenizerMode::Hf | TokenizerMode::DeepseekV32 | TokenizerMode::DeepseekV4 | TokenizerMode::DeepseekV41 => {
                Self::load_dirs(&model, &tokenizer, hf_overrides)?
            }
            TokenizerMode::Inkling | TokenizerMode::KimiK3 | TokenizerMode::Cohere => {
                Self::load_dirs(&model, &tokenizer, hf_overrides)?
            }
            TokenizerMode::Mistral => Self::load_tekken(&model, &tokenizer, hf_overrides)?,
        };
        loaded.mode = mode;
        Ok(loaded)
    }

    pub fn load_dir(dir: &Path) -> Result<Model, ModelError> {
        Self::load_dirs(dir, dir, &Map::new())
    }

    /// The model's own files: `generation_config.json` and `config.json`
    /// with `--hf-overrides` laid over it.
    fn read_configs(dir: &Path, hf_overrides: &Map<String, Value>) -> Result<(Value, Value), ModelError> {
        let gen_config = read_json(&dir.join("generation_config.json"))?;
        let mut config = read_json(&dir.join("config.json"))?;
        if !hf_overrides.is_empty() {
            apply_hf_overrides(&mut config, hf_overrides);
            let text_config = config.get("text_config").filter(|t| t.is_object());
            if text_config.is_some_and(|t| t.get("num_attention_heads").is_none()) {
                return Err(ModelError::TextConfig);
            }
        }
        Ok((gen_config, config))
    }

    /// The tokenizer's files from `tok_dir`, the model's configuration from
    /// `dir`, as vLLM reads them.
    fn load_dirs(dir: &Path, tok_dir: &Path, hf_overrides: &Map<String, Value>) -> Result<Model, ModelError> {
        let mut tokenizer = load_tokenizer(tok_dir)?;
        let tok_config = read_json(&tok_dir.join("tokenizer_config.json"))?;
        let special_map = read_json(&tok_dir.join("special_tokens_map.json"))?;
        let fields = special_fields(&tok_config, &special_map);
        register_named_specials(&mut tokenizer, &fields);
        let (gen_config, config) = Self::read_configs(dir, hf_overrides)?;

        let vocab_len = tokenizer.get_vocab_size(true);
        let pieces: Vec<Option<String>> = (0..vocab_len as u32).map(|id| tokenizer.id_to_token(id)).collect();

        let mut special = vec![false; vocab_len];
        let mut mark = |text: &str| {
            if let Some(id) = tokenizer.token_to_id(text) {
                if let Some(slot) = special.get_mut(id as usize) {
                    *slot = true;
                }
            }
        };
        named_special_texts(&fields).for_each(&mut mark);

        let eos_token_id =
            fields.get("eos_token").and_then(token_text).and_then(|t| tokenizer.token_to_id(t)).map(i64::from);
        let model_eos_ids = model_eos_ids(&gen_config, eos_token_id);

        let config_max_len = derive_max_len(&config);
        let space_marker = metaspace_marker(&tokenizer);
        let chat_template = match tok_config.get("chat_template") {
            Some(Value::String(s)) => Some(s.clone()),
            _ => std::fs::read_to_string(tok_dir.join("chat_template.jinja")).ok(),
        };
        let model_type = config.get("model_type").and_then(Value::as_str).map(str::to_string);
        let mut special_tokens_map = serde_json::Map::new();
        for key in NAMED_SPECIALS {
            if let Some(t) = fields.get(key).and_then(token_text) {
                special_tokens_map.insert(key.into(), Value::String(t.to_string()));
            }
        }
        let codec =
            Codec::Hf { byte_level: matches!(tokenizer.get_decoder(), Some(tokenizers::DecoderWrapper::ByteLevel(_))) };

        let max_chars_per_token = pieces.iter().flatten().map(|p| p.chars().count()).max().unwrap_or(0);
        Ok(Model {
            path: dir.to_path_buf(),
            tokenizer_path: tok_dir.to_path_buf(),
            tokenizer,
            vocab_len,
            special_list: special_list(&special, &pieces),
            pieces,
            special,
            eos_token_id,
            model_eos_ids,
            config_max_len,
            space_marker,
            chat_template,
            model_type,
            architecture: first_architecture(&config),
            generation_config: gen_config,
            tokenizer_config: tok_config,
            special_tokens_map,
            max_chars_per_token,
            codec,
            mode: TokenizerMode::Hf,
        })
    }

    /// A mistral_common directory (`tekken.json`), as vLLM's Mistral
    /// tokenizer sees it: ids below the special count are all special, a
    /// piece is an id decoded alone, and the vocabulary maps each piece to
    /// its lowest id.
    fn load_tekken(dir: &Path, tok_dir: &Path, hf_overrides: &Map<String, Value>) -> Result<Model, ModelError> {
        let path = Tekken::find(tok_dir).ok_or_else(|| ModelError::NoTekken(tok_dir.to_path_buf()))?;
        let tekken = Tekken::load(&path)?;
        if !matches!(tekken.version, 7 | 11 | 13) {
            return Err(ModelError::TekkenVersion(path, tekken.version));
        }
        let (gen_config, config) = Self::read_configs(dir, hf_overrides)?;
        let vocab_len = tekken.vocab_size();
        let pieces: Vec<Option<String>> = (0..vocab_len as u32).map(|id| Some(tekken.piece(id))).collect();
        let special: Vec<bool> = (0..vocab_len as u32).map(|id| tekken.is_special(id)).collect();
        let mut vocab: std::collections::HashMap<String, u32> = Default::default();
        for (id, piece) in pieces.iter().enumerate().rev() {
            vocab.insert(piece.clone().unwrap_or_default(), id as u32);
        }
        let word_level = tokenizers::models::wordlevel::WordLevel::builder()
            .vocab(vocab.into_iter().collect())
            .unk_token("<unk>".into())
            .build()
            .map_err(|e| ModelError::Load { path: path.clone(), reason: e.to_string() })?;
        let tokenizer = Tokenizer::new(word_level);
        let eos_token_id = tekken.special_id("</s>").map(i64::from);
        let model_eos_ids = model_eos_ids(&gen_config, eos_token_id);
        let mut special_tokens_map = serde_json::Map::new();
        for (key, text) in [("bos_token", "<s>"), ("eos_token", "</s>"), ("unk_token", "<unk>"), ("pad_token", "<pad>")]
        {
            if tekken.special_id(text).is_some() {
                special_tokens_map.insert(key.into(), Value::String(text.to_string()));
            }
        }
        let max_chars_per_token = pieces.iter().flatten().map(|p| p.chars().count()).max().unwrap_or(0);
        Ok(Model {
            path: dir.to_path_buf(),
            tokenizer_path: tok_dir.to_path_buf(),
            tokenizer,
            vocab_len,
            special_list: special_list(&special, &pieces),
            pieces,
            special,
            eos_token_id,
            model_eos_ids,
            config_max_len: derive_max_len(&config),
            space_marker: None,
            chat_template: None,
            model_type: config.get("model_type").and_then(Value::as_str).map(str::to_string),
            architecture: first_architecture(&config),
            generation_config: gen_config,
            tokenizer_config: Value::Null,
            special_tokens_map,
            max_chars_per_token,
            codec: Codec::Tekken(Box::new(tekken)),
            mode: TokenizerMode::Mistral,
        })
    }

    /// The tekken tokenizer of a `mistral` mode model.
    pub fn tekken(&self) -> Option<&Tekken> {
        match &self.codec {
            Codec::Tekken(t) => Some(t),
            Codec::Hf { .. } => None,
        }
    }

    /// `convert_ids_to_tokens([id])[0]` for an id inside the vocabulary.
    pub fn piece(&self, id: i64) -> Option<&str> {
        usize::try_from(id).ok().and_then(|i| self.pieces.get(i)).and_then(|p| p.as_deref())
    }

    /// `(id, text)` of every special token (`all_special_ids`).
    pub fn special_tokens(&self) -> &[(i64, String)] {
        &self.special_list
    }

    pub fn is_special(&self, id: i64) -> bool {
        usize::try_from(id).ok().and_then(|i| self.special.get(i)).copied().unwrap_or(false)
    }

    /// Is `id` inside `len(tokenizer)`?
    pub fn in_vocab(&self, id: i64) -> bool {
        id >= 0 && (id as u64) < self.vocab_len as u64
    }

    /// The pieces an incremental decode window holds for `ids`
    /// (`convert_ids_to_tokens(ids, skip_special_tokens)`), without the ids
    /// skipping drops. vLLM's Mistral tokenizer, skipping special tokens,
    /// turns every regular piece of the batch into `bytes` once one of them
    /// would carry U+FFFD: such a piece is held here as U+FFFD and its bytes
    /// in byte-level form (no other piece of such a window has U+FFFD).
    pub fn window_pieces(&self, ids: &[i64], skip_special: bool) -> Vec<String> {
        let tekken = match &self.codec {
            Codec::Hf { .. } => {
                return ids
                    .iter()
                    .filter(|&&id| !(skip_special && self.is_special(id)))
                    .map(|&id| self.piece(id).unwrap_or("").to_string())
                    .collect()
            }
            Codec::Tekken(tekken) => tekken,
        };
        let kept: Vec<u32> = ids
            .iter()
            .filter_map(|&id| u32::try_from(id).ok())
            .filter(|&id| !skip_special || !tekken.is_special(id) || tekken.special_text(id).is_some_and(kept_special))
            .collect();
        let pieces: Vec<String> = kept.iter().map(|&id| tekken.piece(id)).collect();
        if !skip_special || !pieces.iter().any(|p| p.contains('\u{FFFD}')) {
            return pieces;
        }
        kept.iter()
            .zip(pieces)
            .map(|(&id, piece)| match tekken.token_bytes(id) {
                Some(bytes) => format!("\u{FFFD}{}", byte_level_string(bytes)),
                None => piece,
            })
            .collect()
    }

    /// `window_pieces` of one id.
    pub fn window_piece(&self, id: i64, skip_special: bool) -> Option<String> {
        match &self.codec {
            Codec::Hf { .. } => {
                (!(skip_special && self.is_special(id))).then(|| self.piece(id).unwrap_or("").to_string())
            }
            Codec::Tekken(_) => self.window_pieces(&[id], skip_special).pop(),
        }
    }

    /// `convert_tokens_to_string` over window pieces of one `skip_special`
    /// setting: the tokenizer's decoder. For tekken, special token text is
    /// dropped (but the four markers parsers read) and the rest joined; a
    /// window holding `bytes` pieces is decoded as bytes, where an empty
    /// piece (an id outside the vocabulary) reads as `<unk>`.
    pub fn pieces_to_string(&self, pieces: &[String], skip_special: bool) -> String {
        if pieces.is_empty() {
            return String::new();
        }
        let byte_level = match &self.codec {
            Codec::Hf { byte_level } => *byte_level,
            Codec::Tekken(tekken) => {
                let kept = pieces.iter().filter(|p| kept_special(p) || tekken.special_id(p).is_none());
                if !(skip_special && pieces.iter().any(|p| p.starts_with('\u{FFFD}'))) {
                    return kept.map(String::as_str).collect();
                }
                let unk = if tekken.special_id("<unk>").is_some() { "<unk>" } else { "" };
                let mut bytes = Vec::new();
                for piece in kept {
                    match piece.strip_prefix('\u{FFFD}') {
                        Some(byte_level) => byte_level_piece(byte_level, &mut bytes),
                        None if piece.is_empty() => bytes.extend_from_slice(unk.as_bytes()),
                        None => bytes.extend_from_slice(piece.as_bytes()),
                    }
                }
                return String::from_utf8_lossy(&bytes).into_owned();
            }
        };
        if byte_level {
            let mut bytes = Vec::with_capacity(pieces.iter().map(String::len).sum());
            for p in pieces {
                byte_level_piece(p, &mut bytes);
            }
            return match String::from_utf8(bytes) {
                Ok(s) => s,
                Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
            };
        }
        match self.tokenizer.get_decoder() {
            Some(decoder) => decoder.decode(pieces.to_vec()).unwrap_or_default(),
            None => pieces.join(" "),
        }
    }

    /// The bytes one token stands for (a special token: its text), as
    /// tiktoken's `decode_bytes` gives them; `false` for an id outside the
    /// vocabulary or a tokenizer that is not byte-level.
    pub fn token_bytes(&self, id: i64, out: &mut Vec<u8>) -> bool {
        if let Codec::Tekken(tekken) = &self.codec {
            let Some(id) = u32::try_from(id).ok().filter(|&i| (i as usize) < self.vocab_len) else { return false };
            match tekken.token_bytes(id) {
                Some(bytes) => out.extend_from_slice(bytes),
                None => out.extend_from_slice(tekken.special_text(id).unwrap_or("").as_bytes()),
            }
            return true;
        }
        let Some(piece) = self.piece(id) else { return false };
        if self.is_special(id) {
            out.extend_from_slice(piece.as_bytes());
        } else if matches!(self.codec, Codec::Hf { byte_level: true }) {
            byte_level_piece(piece, out);
        } else {
            return false;
        }
        true
    }

    /// `tokenizer.encode(text, add_special_tokens=False)`.
    pub fn encode_plain(&self, text: &str) -> Vec<i64> {
        self.encode_text(text).map(|ids| ids.into_iter().map(i64::from).collect()).unwrap_or_default()
    }

    /// The same as the tokenizer answers it, its error included.
    pub fn encode_text(&self, text: &str) -> Result<Vec<u32>, String> {
        if let Codec::Tekken(tekken) = &self.codec {
            return Ok(tekken.encode(text));
        }
        self.tokenizer.encode(text, false).map(|e| e.get_ids().to_vec()).map_err(|e| e.to_string())
    }

    /// `tokenizer.decode(ids)` with special tokens kept (ids must be known).
    pub fn decode(&self, ids: &[i64]) -> String {
        let ids: Vec<u32> = ids.iter().filter_map(|&i| u32::try_from(i).ok()).collect();
        if let Codec::Tekken(tekken) = &self.codec {
            return tekken.decode(&ids, true);
        }
        self.tokenizer.decode(&ids, false).unwrap_or_default()
    }
}

/// GPT-2's `bytes_to_unicode` over `bytes`: the inverse of
/// `byte_level_piece`, so raw bytes can sit in a window of strings.
fn byte_level_string(bytes: &[u8]) -> String {
    static TO_CHAR: std::sync::OnceLock<[char; 256]> = std::sync::OnceLock::new();
    let to_char = TO_CHAR.get_or_init(|| {
        let mut to_char = ['\0'; 256];
        for (code, byte) in byte_level_table().iter().enumerate() {
            if let (Some(b), Some(c)) = (byte, char::from_u32(code as u32)) {
                to_char[*b as usize] = c;
            }
        }
        to_char
    });
    bytes.iter().map(|&b| to_char[b as usize]).collect()
}

/// generation_config's `eos_token_id` (one or a list) plus the tokenizer's.
fn model_eos_ids(gen_config: &Value, eos_token_id: Option<i64>) -> HashSet<i64> {
    let mut ids: HashSet<i64> = match gen_config.get("eos_token_id") {
        Some(Value::Number(n)) => n.as_i64().into_iter().collect(),
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_i64).collect(),
        _ => HashSet::new(),
    };
    ids.extend(eos_token_id);
    ids
}

fn kept_special(text: &str) -> bool {
    KEPT_SPECIALS.contains(&text)
}

fn special_list(special: &[bool], pieces: &[Option<String>]) -> Vec<(i64, String)> {
    special
        .iter()
        .enumerate()
        .filter(|(_, s)| **s)
        .filter_map(|(i, _)| pieces.get(i).cloned().flatten().map(|p| (i as i64, p)))
        .collect()
}

/// `tokenizer.json`, or `tokenizer.json.gz` (how the bundled model ships).
fn load_tokenizer(dir: &Path) -> Result<Tokenizer, ModelError> {
    let plain = dir.join("tokenizer.json");
    let gz = dir.join("tokenizer.json.gz");
    let load_err = |path: &Path, reason: String| ModelError::Load { path: path.to_path_buf(), reason };
    if plain.is_file() {
        return Tokenizer::from_file(&plain).map_err(|e| load_err(&plain, e.to_string()));
    }
    if gz.is_file() {
        let file = std::fs::File::open(&gz).map_err(|e| load_err(&gz, e.to_string()))?;
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(file), &mut bytes)
            .map_err(|e| load_err(&gz, e.to_string()))?;
        return Tokenizer::from_bytes(&bytes).map_err(|e| load_err(&gz, e.to_string()));
    }
    Err(ModelError::NoTokenizer(dir.to_path_buf()))
}

/// `PreTrainedTokenizerFast.__init__`: the named special tokens
/// (`bos_token`, ..., `additional_special_tokens`) that `tokenizer.json`
/// does not list as added tokens are added as special ones, so text such as
/// a template's `<s>` encodes as that one token (its vocabulary id when it
/// has one).
fn register_named_specials(tokenizer: &mut Tokenizer, fields: &Map<String, Value>) {
    let added: HashSet<String> = tokenizer.get_added_tokens_decoder().values().map(|t| t.content.clone()).collect();
    let mut seen = HashSet::new();
    let missing: Vec<tokenizers::AddedToken> = named_special_texts(fields)
        .filter(|t| !t.is_empty() && !added.contains(*t) && seen.insert(t.to_string()))
        .map(|t| tokenizers::AddedToken::from(t, true))
        .collect();
    if !missing.is_empty() {
        tokenizer.add_special_tokens(&missing);
    }
}

const NAMED_SPECIALS: [&str; 7] =
    ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"];

/// The special-token fields transformers 5 initialises a tokenizer with:
/// `tokenizer_config.json`'s alone when it lists `added_tokens_decoder`,
/// else those overridden key by key by the legacy `special_tokens_map.json`
/// (`extra_special_tokens` merged). A pad token the two files disagree on
/// is therefore skipped, or not, as vLLM skips it.
fn special_fields(tok_config: &Value, special_map: &Value) -> Map<String, Value> {
    let mut fields = tok_config.as_object().cloned().unwrap_or_default();
    if fields.contains_key("added_tokens_decoder") {
        return fields;
    }
    for (key, value) in special_map.as_object().into_iter().flatten() {
        match (key.as_str(), value, fields.get_mut(key)) {
            ("extra_special_tokens", Value::Array(new), Some(Value::Array(existing))) => {
                for token in new {
                    if !existing.contains(token) {
                        existing.push(token.clone());
                    }
                }
            }
            _ => {
                fields.insert(key.clone(), value.clone());
            }
        }
    }
    fields
}

/// The texts of the named special tokens and the additional / extra lists
/// (`all_special_tokens`).
fn named_special_texts(fields: &Map<String, Value>) -> impl Iterator<Item = &str> {
    let named = NAMED_SPECIALS.iter().filter_map(|key| fields.get(*key).and_then(token_text));
    let lists = ["additional_special_tokens", "extra_special_tokens"]
        .iter()
        .filter_map(|key| fields.get(*key).and_then(Value::as_array))
        .flat_map(|list| list.iter().filter_map(token_text));
    named.chain(lists)
}

/// vLLM's `_get_and_verify_max_len`: the smallest length key the config
/// declares (rope scaling factors aside).
/// vLLM's `hf_overrides`: an object value updates a nested config of that
/// name (`text_config`, `..._config`) field by field
/// (`_apply_dict_overrides`); anything else replaces the field.
pub fn apply_hf_overrides(config: &mut Value, overrides: &Map<String, Value>) {
    if !config.is_object() {
        *config = Value::Object(Map::new());
    }
    let Some(fields) = config.as_object_mut() else { return };
    for (key, value) in overrides {
        match (fields.get_mut(key), value) {
            (Some(Value::Object(nested)), Value::Object(update)) if key.ends_with("_config") => {
                nested.extend(update.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            _ => {
                fields.insert(key.clone(), value.clone());
            }
        }
    }
}

fn derive_max_len(config: &Value) -> Option<usize> {
    let keys = [
        "max_position_embeddings",
        "n_positions",
        "max_seq_len",
        "seq_length",
        "model_max_length",
        "max_sequence_length",
        "max_seq_length",
        "seq_len",
    ];
    let text = config.get("text_config").filter(|t| t.is_object()).unwrap_or(config);
    keys.iter().filter_map(|k| text.get(*k).and_then(Value::as_u64)).min().map(|v| v as usize)
}

/// `get_leading_space_marker`: the replacement char of a Metaspace
/// pre-tokenizer (alone or inside a Sequence), whose leading instance
/// SentencePiece decoding strips.
fn metaspace_marker(tokenizer: &Tokenizer) -> Option<char> {
    use tokenizers::PreTokenizerWrapper as P;
    fn marker(p: &P) -> Option<char> {
        match p {
            P::Metaspace(m) => Some(m.get_replacement()),
            P::Sequence(seq) => seq.as_ref().iter().find_map(marker),
            _ => None,
        }
    }
    marker(tokenizer.get_pre_tokenizer()?)
}

#[cfg(test)]
mod tests {
    use super::{named_special_texts, special_fields};
    use serde_json::json;

    fn texts(config: serde_json::Value, map: serde_json::Value) -> Vec<String> {
        named_special_texts(&special_fields(&config, &map)).map(str::to_string).collect()
    }

    #[test]
    fn special_tokens_map_is_ignored_beside_an_added_tokens_decoder() {
        // Kimi K2's fixture: its pad token is `[PAD]`, the map (copied from
        // the base vocabulary) still says `<|endoftext|>`, which vLLM keeps.
        let config = json!({"added_tokens_decoder": {}, "pad_token": "[PAD]", "eos_token": "<|im_end|>"});
        let map = json!({"pad_token": {"content": "<|endoftext|>"}, "eos_token": "<|im_end|>"});
        assert_eq!(texts(config, map), ["<|im_end|>", "[PAD]"]);
    }

    #[test]
    fn special_tokens_map_overrides_a_legacy_config_key_by_key() {
        let config = json!({"pad_token": "[PAD]", "bos_token": "<s>", "extra_special_tokens": ["<a>"]});
        let map = json!({"pad_token": "<pad>", "extra_special_tokens": ["<a>", "<b>"]});
        assert_eq!(texts(config, map), ["<s>", "<pad>", "<a>", "<b>"]);
    }
}
