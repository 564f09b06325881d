//! Shared helpers for the golden-driven integration tests: the recorded
//! configs and goldens under `tests/reference`, a `Derenderer` built from a
//! config's server flags, and the parser families' test facts
//! (`tests/reference/families.json`: configs, excused case classes).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use derender_core::model::TokenizerMode;
use derender_core::parse::Registry;
use derender_core::served::Flags;
use derender_core::{Derenderer, Model, Route, Settings};
use serde::Deserialize;
use serde_json::Value;

/// The repository root (two levels above this crate).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn reference() -> PathBuf {
    repo_root().join("tests/reference")
}

/// `tests/reference/configs.json`, one entry.
pub fn config(name: &str) -> Value {
    let text = std::fs::read_to_string(reference().join("configs.json")).expect("configs.json");
    let all: Value = serde_json::from_str(&text).expect("configs.json is JSON");
    all.get(name).cloned().unwrap_or_else(|| panic!("no config {name}"))
}

/// Every record of `tests/reference/goldens/<config>.jsonl.gz`.
pub fn goldens(config: &str) -> Vec<Value> {
    let path = reference().join("goldens").join(format!("{config}.jsonl.gz"));
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut text = String::new();
    flate2::read::GzDecoder::new(file).read_to_string(&mut text).expect("goldens gunzip");
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).expect("golden line")).collect()
}

/// The model directory a config names, as `tests/conftest.py` maps it.
pub fn model_dir(config_model: &str) -> PathBuf {
    match config_model {
        "models/qwen3" => repo_root().join("python/derender/models/qwen3"),
        other => repo_root().join("tests").join(other),
    }
}

fn flag<'a>(flags: &'a [String], name: &str) -> Option<&'a str> {
    flags.iter().position(|f| f == name).and_then(|i| flags.get(i + 1)).map(String::as_str)
}

/// A core configured like `derender serve <model> <config flags>`.
pub fn derenderer(config_name: &str) -> Derenderer {
    derenderer_with_states(config_name, Default::default())
}

/// The same, with the given `--stream-state-mode` / secret.
pub fn derenderer_with_states(config_name: &str, stream_state: derender_core::stream::StateCodec) -> Derenderer {
    let c = config(config_name);
    let flags: Vec<String> =
        c["flags"].as_array().expect("flags").iter().map(|f| f.as_str().expect("flag").to_string()).collect();
    let dir = model_dir(c["model"].as_str().expect("model"));
    // A fixture with a tekken file is served in the mistral mode, as
    // `derender serve` picks it (`consolidated.safetensors` beside it).
    let mode =
        if derender_core::tekken::Tekken::find(&dir).is_some() { TokenizerMode::Mistral } else { TokenizerMode::Hf };
    let source = derender_core::hub::Source::model(&dir.to_string_lossy());
    let model = Model::load_mode(&source, mode, &Default::default()).expect("model loads");
    let flags = Flags {
        served_model_names: vec![c["served_model_name"].as_str().expect("name").to_string()],
        max_model_len: flag(&flags, "--max-model-len").map(|m| m.parse().expect("--max-model-len")),
        max_logprobs: flag(&flags, "--max-logprobs").map_or(20, |m| m.parse().expect("--max-logprobs")),
        reasoning_parser: flag(&flags, "--reasoning-parser").map(str::to_string),
        tool_call_parser: flag(&flags, "--tool-call-parser").map(str::to_string),
        enable_auto_tool_choice: flags.iter().any(|f| f == "--enable-auto-tool-choice"),
        ..Flags::default()
    };
    let mut settings = Settings::resolve(flags, &model, &Registry::default()).expect("the config's flags resolve");
    settings.stream_state = stream_state;
    Derenderer::new(model, settings).expect("derenderer")
}

/// POST a JSON body to a native route: `(status, parsed answer)`.
pub fn call(d: &Derenderer, route: Route, body: &Value) -> (u16, Value) {
    let bytes = serde_json::to_vec(body).expect("encode body");
    let reply = d.handle(route, Some("application/json"), None, &bytes);
    let value = serde_json::from_slice(&reply.body).expect("answer is JSON");
    (reply.status, value)
}

/// One parser family of `tests/reference/families.json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Family {
    /// Its config in `tests/reference/configs.json`.
    pub config: String,
    pub tool_parser: Option<String>,
    pub reasoning_parser: Option<String>,
    /// The model fixture directory, from the repository root.
    pub model_dir: String,
    /// How `tests/test_parser_properties.py` writes its outputs (none for a
    /// family whose outputs it cannot write).
    #[serde(default)]
    pub generated: Option<Value>,
    /// `"vllm_or_batch"`: the family follows vLLM's stream algorithm where
    /// it disagrees with vLLM's batch answer, so its streams are held to
    /// vLLM's chunks or to batch by the golden suites, and chunk invariance
    /// (every chunking assembles to batch) does not apply.
    #[serde(default)]
    pub streams: Option<String>,
}

impl Family {
    /// Do its streams assemble to the batch answer under any chunking?
    pub fn chunk_invariant(&self) -> bool {
        self.streams.is_none()
    }
}

/// One class of excused cases: ids containing one of `id_contains` or equal
/// to one of `ids`, on `configs` (`"all"`: any config).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Excuse {
    pub why: String,
    configs: Value,
    #[serde(default)]
    id_contains: Vec<String>,
    #[serde(default)]
    ids: Vec<String>,
}

impl Excuse {
    pub fn applies_to(&self, config: &str) -> bool {
        match &self.configs {
            Value::String(all) if all == "all" => true,
            Value::Array(list) => list.iter().any(|c| c.as_str() == Some(config)),
            other => panic!("families.json: configs must be \"all\" or a list, not {other}"),
        }
    }

    pub fn covers(&self, id: &str) -> bool {
        self.ids.iter().any(|i| i == id) || self.id_contains.iter().any(|s| id.contains(s.as_str()))
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Section {
    about: Value,
    classes: Vec<Excuse>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Plain {
    about: Value,
    configs: Vec<String>,
}

/// `tests/reference/families.json`: the parser families' test facts, shared
/// with the Python suites (`tests/families.py`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Facts {
    about: Value,
    plain_configs: Plain,
    pub families: BTreeMap<String, Family>,
    /// Families recorded but not yet run by the suites.
    pending: Value,
    excused: BTreeMap<String, Section>,
}

impl Facts {
    /// The family whose config is `config`.
    pub fn family_of(&self, config: &str) -> Option<(&str, &Family)> {
        self.families.iter().find(|(_, f)| f.config == config).map(|(n, f)| (n.as_str(), f))
    }

    /// The configs the golden suites run: the plain ones and each family's.
    pub fn configs(&self) -> Vec<&str> {
        let plain = self.plain_configs.configs.iter().map(String::as_str);
        plain.chain(self.families.values().map(|f| f.config.as_str())).collect()
    }

    /// The classes of the given sections (`goldens`, `chunk_invariance`, ...)
    /// that apply to `config`.
    pub fn excuses(&self, config: &str, sections: &[&str]) -> Vec<&Excuse> {
        sections
            .iter()
            .flat_map(|s| &self.excused.get(*s).unwrap_or_else(|| panic!("families.json: no excused.{s}")).classes)
            .filter(|e| e.applies_to(config))
            .collect()
    }
}

/// The parser families' test facts, `tests/reference/families.json`.
pub fn facts() -> Facts {
    let path = reference().join("families.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Is the file a directory that exists (for skipping absent model dirs)?
pub fn exists(p: &Path) -> bool {
    p.is_dir()
}
