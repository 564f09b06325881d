//! A local Hugging Face model directory: the tokenizer plus the facts
//! derender needs (special ids, EOS ids, context length, decode tables).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use tokenizers::{Decoder, Tokenizer};

use crate::hub::Source;

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("model directory {0} has no tokenizer.json")]
    NoTokenizer(PathBuf),
    #[error("could not load {path}: {reason}")]
    Load { path: PathBuf, reason: String },
    #[error(transparent)]
    NotFound(#[from] crate::hub::NotFound),
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
    /// The decoder is a plain ByteLevel one, so pieces decode through the
    /// byte table below without the generic decoder machinery.
    byte_level: bool,
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
        let (model, tokenizer) = source.resolve()?;
        Self::load_dirs(&model, &tokenizer, hf_overrides)
    }

    pub fn load_dir(dir: &Path) -> Result<Model, ModelError> {
        Self::load_dirs(dir, dir, &Map::new())
    }

    /// The tokenizer's files from `tok_dir`, the model's configuration from
    /// `dir`, as vLLM reads them.
    fn load_dirs(dir: &Path, tok_dir: &Path, hf_overrides: &Map<String, Value>) -> Result<Model, ModelError> {
        let mut tokenizer = load_tokenizer(tok_dir)?;
        let tok_config = read_json(&tok_dir.join("tokenizer_config.json"))?;
        let special_map = read_json(&tok_dir.join("special_tokens_map.json"))?;
        register_named_specials(&mut tokenizer, &tok_config, &special_map);
        let gen_config = read_json(&dir.join("generation_config.json"))?;
        let mut config = read_json(&dir.join("config.json"))?;
        if !hf_overrides.is_empty() {
            apply_hf_overrides(&mut config, hf_overrides);
            let text_config = config.get("text_config").filter(|t| t.is_object());
            if text_config.is_some_and(|t| t.get("num_attention_heads").is_none()) {
                return Err(ModelError::TextConfig);
            }
        }

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
        for source in [&tok_config, &special_map] {
            for key in ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"] {
                if let Some(t) = source.get(key).and_then(token_text) {
                    mark(t);
                }
            }
            for key in ["additional_special_tokens", "extra_special_tokens"] {
                if let Some(list) = source.get(key).and_then(Value::as_array) {
                    list.iter().filter_map(token_text).for_each(&mut mark);
                }
            }
        }

        let eos_token_id = tok_config
            .get("eos_token")
            .and_then(token_text)
            .or_else(|| special_map.get("eos_token").and_then(token_text))
            .and_then(|t| tokenizer.token_to_id(t))
            .map(i64::from);
        let mut model_eos_ids: HashSet<i64> = match gen_config.get("eos_token_id") {
            Some(Value::Number(n)) => n.as_i64().into_iter().collect(),
            Some(Value::Array(a)) => a.iter().filter_map(Value::as_i64).collect(),
            _ => HashSet::new(),
        };
        model_eos_ids.extend(eos_token_id);

        let config_max_len = derive_max_len(&config);
        let space_marker = metaspace_marker(&tokenizer);
        let chat_template = match tok_config.get("chat_template") {
            Some(Value::String(s)) => Some(s.clone()),
            _ => std::fs::read_to_string(tok_dir.join("chat_template.jinja")).ok(),
        };
        let model_type = config.get("model_type").and_then(Value::as_str).map(str::to_string);
        let mut special_tokens_map = serde_json::Map::new();
        for key in ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"] {
            let text = tok_config.get(key).and_then(token_text).or_else(|| special_map.get(key).and_then(token_text));
            if let Some(t) = text {
                special_tokens_map.insert(key.into(), Value::String(t.to_string()));
            }
        }
        let byte_level = matches!(tokenizer.get_decoder(), Some(tokenizers::DecoderWrapper::ByteLevel(_)));

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
            generation_config: gen_config,
            tokenizer_config: tok_config,
            special_tokens_map,
            max_chars_per_token,
            byte_level,
        })
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

    /// `convert_tokens_to_string`: the tokenizer's decoder over raw pieces.
    pub fn pieces_to_string(&self, pieces: &[String]) -> String {
        if pieces.is_empty() {
            return String::new();
        }
        if self.byte_level {
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
        let Some(piece) = self.piece(id) else { return false };
        if self.is_special(id) {
            out.extend_from_slice(piece.as_bytes());
        } else if self.byte_level {
            byte_level_piece(piece, out);
        } else {
            return false;
        }
        true
    }

    /// `tokenizer.encode(text, add_special_tokens=False)`.
    pub fn encode_plain(&self, text: &str) -> Vec<i64> {
        self.tokenizer
            .encode(text, false)
            .map(|e| e.get_ids().iter().map(|&i| i64::from(i)).collect())
            .unwrap_or_default()
    }

    /// `tokenizer.decode(ids)` with special tokens kept (ids must be known).
    pub fn decode(&self, ids: &[i64]) -> String {
        let ids: Vec<u32> = ids.iter().filter_map(|&i| u32::try_from(i).ok()).collect();
        self.tokenizer.decode(&ids, false).unwrap_or_default()
    }
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
fn register_named_specials(tokenizer: &mut Tokenizer, tok_config: &Value, special_map: &Value) {
    let added: HashSet<String> = tokenizer.get_added_tokens_decoder().values().map(|t| t.content.clone()).collect();
    let mut missing: Vec<String> = Vec::new();
    for source in [tok_config, special_map] {
        for key in ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"] {
            if let Some(t) = source.get(key).and_then(token_text) {
                missing.push(t.to_string());
            }
        }
        for key in ["additional_special_tokens", "extra_special_tokens"] {
            if let Some(list) = source.get(key).and_then(Value::as_array) {
                missing.extend(list.iter().filter_map(token_text).map(str::to_string));
            }
        }
    }
    let mut seen = HashSet::new();
    missing.retain(|t| !t.is_empty() && !added.contains(t) && seen.insert(t.clone()));
    if !missing.is_empty() {
        let tokens: Vec<tokenizers::AddedToken> =
            missing.into_iter().map(|t| tokenizers::AddedToken::from(t, true)).collect();
        tokenizer.add_special_tokens(&tokens);
    }
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
