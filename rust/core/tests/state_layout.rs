//! A compact stream state's layout cannot change without a `stream::FORMAT`
//! bump. Every parser config's recorded streams are replayed with our
//! states; the shape of every payload (each JSON path and the types seen
//! there) is compared with `tests/data/state_layout.json`, recorded for the
//! current `FORMAT`. A changed shape under the same `FORMAT` fails: bump it,
//! then re-record with `DERENDER_RECORD_LAYOUT=1`.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use derender_core::stream::FORMAT;
use derender_core::Route;
use serde_json::{json, Value};

/// Streams replayed per config: enough to reach every parser phase.
const STREAMS_PER_CONFIG: usize = 40;

fn recorded() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/state_layout.json")
}

/// `path: type` for every node of `v`.
fn paths(v: &Value, at: String, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(o) => {
            out.insert(format!("{at}: object"));
            o.iter().for_each(|(k, item)| paths(item, format!("{at}.{k}"), out));
        }
        Value::Array(a) => {
            // A snapshot's field list is a positional array (items of mixed
            // types, or nested field lists): each position is a path of its
            // own. A homogeneous list (ids, texts, calls) shares one path.
            let kind = |v: &Value| std::mem::discriminant(v);
            let positional = a.iter().any(|v| kind(v) != kind(&a[0])) || a.iter().all(Value::is_array);
            out.insert(format!("{at}: array"));
            for (i, item) in a.iter().enumerate() {
                let at = if positional { format!("{at}[{i}]") } else { format!("{at}[]") };
                paths(item, at, out);
            }
        }
        Value::Null => drop(out.insert(format!("{at}: null"))),
        Value::Bool(_) => drop(out.insert(format!("{at}: bool"))),
        Value::Number(_) => drop(out.insert(format!("{at}: number"))),
        Value::String(_) => drop(out.insert(format!("{at}: string"))),
    }
}

/// The decoded payload of one of our states.
fn payload(state: &Value) -> Value {
    let data = state["data"].as_str().expect("a compact state has data");
    let bytes = URL_SAFE_NO_PAD.decode(data).expect("base64url payload");
    serde_json::from_slice(&bytes).expect("JSON payload")
}

/// Every payload path the config's streams produce.
fn layout(config: &str) -> BTreeSet<String> {
    let d = support::derenderer(config);
    let mut out = BTreeSet::new();
    let streams = support::goldens(config).into_iter().filter(|g| g["kind"] == "stream");
    for golden in streams.take(STREAMS_PER_CONFIG) {
        let mut lanes: BTreeMap<i64, Value> = BTreeMap::new();
        for call in golden["calls"].as_array().into_iter().flatten() {
            let lane = call["state_lane"].as_i64().unwrap_or(0);
            let mut request = call["request"].clone();
            request["stream_state"] = lanes.get(&lane).cloned().unwrap_or(Value::Null);
            let route = if golden["endpoint"] == "/v1/completions/derender" {
                Route::CompletionDerender
            } else {
                Route::ChatDerender
            };
            let (status, answer) = support::call(&d, route, &request);
            if status != 200 {
                break;
            }
            let state = answer["stream_state"].clone();
            if state.get("format").is_some() {
                paths(&payload(&state), String::new(), &mut out);
            }
            lanes.insert(lane, state);
        }
    }
    out
}

#[test]
fn the_state_layout_changes_only_with_the_format() {
    let configs: Vec<String> = support::facts().families.values().map(|f| f.config.clone()).collect();
    let now: BTreeMap<String, BTreeSet<String>> = configs.iter().map(|c| (c.clone(), layout(c))).collect();
    assert!(now.values().all(|paths| paths.len() > 3), "too few states seen: {now:?}");
    if std::env::var_os("DERENDER_RECORD_LAYOUT").is_some() {
        let text = serde_json::to_string_pretty(&json!({"format": FORMAT, "layouts": now})).expect("encode");
        std::fs::write(recorded(), text + "\n").expect("write the layout");
        return;
    }
    let text = std::fs::read_to_string(recorded()).expect("tests/data/state_layout.json");
    let was: Value = serde_json::from_str(&text).expect("layout JSON");
    let was_layouts: BTreeMap<String, BTreeSet<String>> =
        serde_json::from_value(was["layouts"].clone()).expect("layouts");
    assert_eq!(
        was["format"], FORMAT,
        "stream::FORMAT changed: re-record the layout with DERENDER_RECORD_LAYOUT=1 cargo test --test state_layout"
    );
    for (config, paths) in &now {
        let before = was_layouts.get(config).cloned().unwrap_or_default();
        let added: Vec<&String> = paths.difference(&before).collect();
        let removed: Vec<&String> = before.difference(paths).collect();
        assert!(
            added.is_empty() && removed.is_empty(),
            "{config}: the stream state's layout changed under {FORMAT} (added {added:?}, removed {removed:?}); \
             bump stream::FORMAT, then re-record with DERENDER_RECORD_LAYOUT=1"
        );
    }
}
