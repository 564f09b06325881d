//! Shared helpers for the golden-driven integration tests: the recorded
//! configs and goldens under `tests/reference`, a `Derenderer` built from a
//! config's server flags, and the documented divergence classes.

#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};

use derender_core::parse::Registry;
use derender_core::served::Flags;
use derender_core::{Derenderer, Model, Route, Settings};
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
    let model = Model::load_dir(&model_dir(c["model"].as_str().expect("model"))).expect("model loads");
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

/// The quoted strings between `start` and the next line that is exactly `}`.
fn python_block(src: &str, start: &str) -> Vec<String> {
    let Some(at) = src.find(start) else { return Vec::new() };
    let body = &src[at + start.len()..];
    let end = body.find("\n}").unwrap_or(body.len());
    body[..end].lines().map(|l| l.split('#').next().unwrap_or("")).map(str::to_string).collect()
}

fn quoted(line: &str) -> Vec<String> {
    line.split('"').skip(1).step_by(2).map(str::to_string).collect()
}

/// The documented divergence classes, read from `tests/test_goldens.py`
/// (`DIVERGENT`, and `CONFIG_DIVERGENT[config]`) so there is one list.
pub fn excused_ids(config: &str) -> Vec<String> {
    let src = std::fs::read_to_string(repo_root().join("tests/test_goldens.py")).expect("test_goldens.py");
    let mut out: Vec<String> = python_block(&src, "DIVERGENT = {").iter().flat_map(|l| quoted(l)).collect();
    assert!(out.len() > 5, "could not read DIVERGENT from tests/test_goldens.py");
    for line in python_block(&src, "CONFIG_DIVERGENT = {") {
        let q = quoted(&line);
        if q.first().map(String::as_str) == Some(config) && line.contains(':') {
            out.extend(q.into_iter().skip(1));
        }
    }
    out
}

pub fn is_excused(id: &str, excused: &[String]) -> bool {
    excused.iter().any(|e| id.contains(e.as_str()))
}

/// Is the file a directory that exists (for skipping absent model dirs)?
pub fn exists(p: &Path) -> bool {
    p.is_dir()
}
