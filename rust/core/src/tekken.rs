//! Mistral's tekken tokenizer as mistral_common's `Tekkenizer` runs it: a
//! tiktoken byte-level BPE (merges by rank, text split by the file's
//! pattern), with the special ranks laid before the vocabulary. Text never
//! encodes to a special token: mistral_common inserts them by id.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::Value;

#[derive(Debug, thiserror::Error)]
#[error("could not load {path}: {reason}")]
pub struct TekkenError {
    pub path: PathBuf,
    pub reason: String,
}

/// The three special tokens vLLM's Mistral tokenizer keeps in text when
/// special tokens are skipped, besides `[TOOL_CALLS]`
/// (`MistralTokenizer.convert_ids_to_tokens`).
pub const KEPT_SPECIALS: [&str; 4] = ["[TOOL_CALLS]", "[ARGS]", "[THINK]", "[/THINK]"];

/// A loaded `tekken.json`.
pub struct Tekken {
    /// The `vNN` version number (`v13` → 13).
    pub version: u32,
    /// Special token text by rank (fillers are `<SPECIAL_N>`).
    specials: Vec<String>,
    special_ids: HashMap<String, u32>,
    /// Token bytes by inner rank (id minus the special count).
    tokens: Vec<Vec<u8>>,
    ranks: HashMap<Vec<u8>, u32>,
    pattern: onig::Regex,
}

impl Tekken {
    /// `tekken.json`, or gzip'd as `tekken.json.gz` (how a bundled
    /// fixture ships).
    pub fn load(path: &Path) -> Result<Tekken, TekkenError> {
        let fail = |reason: String| TekkenError { path: path.to_path_buf(), reason };
        let mut bytes = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
        if path.extension().is_some_and(|e| e == "gz") {
            let mut plain = Vec::new();
            std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(bytes.as_slice()), &mut plain)
                .map_err(|e| fail(e.to_string()))?;
            bytes = plain;
        }
        let data: Value = serde_json::from_slice(&bytes).map_err(|e| fail(format!("invalid JSON: {e}")))?;
        Self::from_json(&data).map_err(fail)
    }

    /// The tekken file of a directory: `tekken.json` or `tekken.json.gz`.
    pub fn find(dir: &Path) -> Option<PathBuf> {
        ["tekken.json", "tekken.json.gz"].iter().map(|name| dir.join(name)).find(|p| p.is_file())
    }

    fn from_json(data: &Value) -> Result<Tekken, String> {
        let config = data.get("config").ok_or("no `config`")?;
        let version = config.get("version").and_then(Value::as_str).ok_or("no `config.version`")?;
        let version: u32 =
            version.strip_prefix('v').and_then(|v| v.parse().ok()).ok_or(format!("Unknown version: {version}"))?;
        let num = |key: &str| config.get(key).and_then(Value::as_u64).map(|n| n as usize).ok_or(format!("no `{key}`"));
        let vocab_size = num("default_vocab_size")?;
        let num_special = num("default_num_special_tokens")?;
        let pattern = config.get("pattern").and_then(Value::as_str).ok_or("no `config.pattern`")?;
        let pattern = onig::Regex::new(pattern).map_err(|e| format!("pattern: {e}"))?;

        let mut specials: Vec<String> = match data.get("special_tokens").and_then(Value::as_array) {
            Some(list) => list
                .iter()
                .map(|t| t.get("token_str").and_then(Value::as_str).map(str::to_string))
                .collect::<Option<_>>()
                .ok_or("a special token without `token_str`")?,
            // Files up to v7 carry no table: mistral_common's deprecated one.
            None if version <= 7 => DEPRECATED_SPECIALS.iter().map(|s| s.to_string()).collect(),
            None => return Err("no `special_tokens` (required after v7)".into()),
        };
        if specials.len() > num_special {
            return Err("more special tokens than `default_num_special_tokens`".into());
        }
        specials.extend((specials.len()..num_special).map(|i| format!("<SPECIAL_{i}>")));
        let special_ids: HashMap<String, u32> =
            specials.iter().enumerate().map(|(i, s)| (s.clone(), i as u32)).collect();
        if special_ids.len() != specials.len() {
            return Err("special tokens must be unique".into());
        }

        let inner = vocab_size.checked_sub(num_special).ok_or("vocab size below the special count")?;
        let vocab = data.get("vocab").and_then(Value::as_array).ok_or("no `vocab`")?;
        if vocab.len() < inner {
            return Err(format!("vocab has {} tokens, {inner} needed", vocab.len()));
        }
        let mut tokens = Vec::with_capacity(inner);
        for (rank, entry) in vocab[..inner].iter().enumerate() {
            let encoded = entry.get("token_bytes").and_then(Value::as_str).ok_or("a token without `token_bytes`")?;
            let bytes = STANDARD.decode(encoded).map_err(|e| format!("token {rank}: {e}"))?;
            tokens.push(bytes);
        }
        let ranks: HashMap<Vec<u8>, u32> = tokens.iter().enumerate().map(|(i, b)| (b.clone(), i as u32)).collect();
        if ranks.len() != tokens.len() {
            return Err("duplicate token bytes in `vocab`".into());
        }
        Ok(Tekken { version, specials, special_ids, tokens, ranks, pattern })
    }

    /// Ids below this are special.
    pub fn num_special(&self) -> usize {
        self.specials.len()
    }

    /// `n_words`: special plus regular ids.
    pub fn vocab_size(&self) -> usize {
        self.specials.len() + self.tokens.len()
    }

    /// `get_special_token`.
    pub fn special_id(&self, text: &str) -> Option<u32> {
        self.special_ids.get(text).copied()
    }

    /// The text of special id `id`.
    pub fn special_text(&self, id: u32) -> Option<&str> {
        self.specials.get(id as usize).map(String::as_str)
    }

    pub fn is_special(&self, id: u32) -> bool {
        (id as usize) < self.specials.len()
    }

    /// The bytes of regular id `id` (`decode_single_token_bytes`).
    pub fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        (id as usize).checked_sub(self.specials.len()).and_then(|r| self.tokens.get(r)).map(Vec::as_slice)
    }

    /// `encode(text, bos=False, eos=False)`: every piece the pattern finds,
    /// as one token when it is one, else merged pair by pair by rank.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let offset = self.specials.len() as u32;
        let mut out = Vec::new();
        for (start, end) in self.pattern.find_iter(text) {
            let piece = &text.as_bytes()[start..end];
            match self.ranks.get(piece) {
                Some(&rank) => out.push(rank + offset),
                None => self.merge(piece, &mut out),
            }
        }
        out
    }

    /// Rank-ordered byte-pair merging of one piece: repeatedly join the
    /// adjacent pair whose join has the lowest rank (leftmost on ties).
    fn merge(&self, piece: &[u8], out: &mut Vec<u32>) {
        let offset = self.specials.len() as u32;
        let rank_of = |bytes: &[u8]| self.ranks.get(bytes).copied();
        // Part boundaries; `pair[i]` is the rank of parts i and i+1 joined.
        let mut bounds: Vec<usize> = (0..=piece.len()).collect();
        let pair = |bounds: &[usize], i: usize| -> Option<u32> {
            (i + 2 < bounds.len()).then(|| rank_of(&piece[bounds[i]..bounds[i + 2]])).flatten()
        };
        let mut pairs: Vec<Option<u32>> = (0..bounds.len() - 1).map(|i| pair(&bounds, i)).collect();
        loop {
            let best = pairs.iter().enumerate().filter_map(|(i, r)| r.map(|r| (r, i))).min();
            let Some((_, i)) = best else { break };
            bounds.remove(i + 1);
            pairs.remove(i + 1);
            pairs[i] = pair(&bounds, i);
            if i > 0 {
                pairs[i - 1] = pair(&bounds, i - 1);
            }
        }
        for w in bounds.windows(2) {
            // Every single byte is a token, so each part has a rank.
            out.push(rank_of(&piece[w[0]..w[1]]).map_or(0, |r| r + offset));
        }
    }

    /// `decode(ids, policy)`: runs of regular ids as UTF-8 with
    /// replacement, special ids as their text (`keep_special`) or nothing.
    pub fn decode(&self, ids: &[u32], keep_special: bool) -> String {
        let mut text = String::new();
        let mut run: Vec<u8> = Vec::new();
        for &id in ids {
            match self.token_bytes(id) {
                Some(bytes) => run.extend_from_slice(bytes),
                None => {
                    text.push_str(&String::from_utf8_lossy(&run));
                    run.clear();
                    if keep_special {
                        text.push_str(self.special_text(id).unwrap_or(""));
                    }
                }
            }
        }
        text.push_str(&String::from_utf8_lossy(&run));
        text
    }

    /// `id_to_piece`: one id decoded with special tokens kept.
    pub fn piece(&self, id: u32) -> String {
        self.decode(&[id], true)
    }
}

/// `Tekkenizer.DEPRECATED_SPECIAL_TOKENS`: the table of files up to v7.
const DEPRECATED_SPECIALS: [&str; 20] = [
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Tekken {
        // Bytes 0..=255 as ranks 0..=255, then "ab" 256, "abc" 257, "c " 258.
        let mut vocab: Vec<Value> = (0..=255u8)
            .map(|b| serde_json::json!({"rank": b, "token_bytes": STANDARD.encode([b]), "token_str": null}))
            .collect();
        for (rank, t) in [(256, "ab"), (257, "abc"), (258, "bc")] {
            vocab.push(serde_json::json!({"rank": rank, "token_bytes": STANDARD.encode(t), "token_str": t}));
        }
        let data = serde_json::json!({
            "config": {"pattern": r"\S+|\s+", "default_vocab_size": 3 + 259, "default_num_special_tokens": 3, "version": "v13"},
            "vocab": vocab,
            "special_tokens": [{"rank": 0, "token_str": "<unk>"}, {"rank": 1, "token_str": "<s>"}, {"rank": 2, "token_str": "</s>"}],
        });
        Tekken::from_json(&data).expect("loads")
    }

    #[test]
    fn merges_by_lowest_rank_first_and_offsets_ids_by_the_specials() {
        let t = tiny();
        // "abc" is one token; "abcb": "ab" (256) merges before "bc" (258).
        assert_eq!(t.encode("abc"), vec![3 + 257]);
        assert_eq!(t.encode("abcb"), vec![3 + 257, 3 + u32::from(b'b')]);
        assert_eq!(t.encode("xbc"), vec![3 + u32::from(b'x'), 3 + 258]);
    }

    #[test]
    fn special_text_is_never_matched_when_encoding() {
        let t = tiny();
        assert!(t.encode("<s>").iter().all(|&id| !t.is_special(id)));
    }

    #[test]
    fn decode_keeps_or_drops_specials_and_replaces_broken_utf8() {
        let t = tiny();
        let ids = [1, 3 + 256, 2];
        assert_eq!(t.decode(&ids, true), "<s>ab</s>");
        assert_eq!(t.decode(&ids, false), "ab");
        // Half of "é" (C3 A9), then a special: the half is replaced.
        assert_eq!(t.decode(&[3 + 0xC3, 2], true), "\u{FFFD}</s>");
        assert_eq!(t.decode(&[3 + 0xC3, 3 + 0xA9], true), "é");
    }

    #[test]
    fn fills_the_special_table_to_its_declared_size() {
        let t = tiny();
        assert_eq!(t.special_id("</s>"), Some(2));
        assert_eq!(t.vocab_size(), 262);
        let mut data = serde_json::json!({"config": {"pattern": ".", "default_vocab_size": 5, "default_num_special_tokens": 5, "version": "v13"}, "vocab": [], "special_tokens": [{"rank": 0, "token_str": "<unk>"}]});
        let t = Tekken::from_json(&data).expect("loads");
        assert_eq!(t.special_text(4), Some("<SPECIAL_4>"));
        data["config"]["version"] = "v99x".into();
        assert!(Tekken::from_json(&data).is_err());
    }
}
