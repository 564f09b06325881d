//! Mistral's tekken tokenizer (the `mistral` tokenizer mode) against vLLM
//! 0.33.0's own `MistralTokenizer`, recorded in process by
//! tests/reference/record_tekken_oracle.py over tests/models/magistral:
//! encoding, decoding, pieces, and incremental detokenization per chunk.

use std::io::BufRead;
use std::path::PathBuf;

use derender_core::detok::Window;
use derender_core::hub::Source;
use derender_core::model::{Model, TokenizerMode};
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn model() -> Model {
    let dir = root().join("tests/models/magistral");
    let source = Source::model(dir.to_str().expect("utf-8 path"));
    Model::load_mode(&source, TokenizerMode::Mistral, &Default::default()).expect("magistral loads")
}

fn oracle(kind: &str) -> Vec<Value> {
    let file = std::fs::File::open(root().join("tests/reference/tekken_oracle.jsonl.gz")).expect("oracle");
    std::io::BufReader::new(flate2::read::GzDecoder::new(file))
        .lines()
        .map(|l| serde_json::from_str::<Value>(&l.expect("line")).expect("json"))
        .filter(|r| r["kind"] == kind)
        .collect()
}

fn ids(v: &Value) -> Vec<i64> {
    v.as_array().expect("ids").iter().map(|i| i.as_i64().expect("id")).collect()
}

#[test]
fn encodes_text_as_mistral_common_does() {
    let m = model();
    let cases = oracle("encode");
    assert!(cases.len() > 400);
    for case in cases {
        let text = case["text"].as_str().expect("text");
        assert_eq!(m.encode_plain(text), ids(&case["ids"]), "{text:?}");
    }
}

#[test]
fn decodes_and_names_pieces_as_vllm_does() {
    let m = model();
    let tekken = m.tekken().expect("a tekken model");
    let cases = oracle("decode");
    assert!(cases.len() >= 400);
    for case in cases {
        let ids = ids(&case["ids"]);
        assert_eq!(m.decode(&ids), case["keep"].as_str().expect("keep"), "{ids:?}");
        let unsigned: Vec<u32> = ids.iter().map(|&i| i as u32).collect();
        assert_eq!(tekken.decode(&unsigned, false), case["skip"].as_str().expect("skip"), "{ids:?}");
        let pieces: Vec<&str> = ids.iter().map(|&i| m.piece(i).expect("in vocabulary")).collect();
        let expected: Vec<&str> = case["pieces"].as_array().expect("pieces").iter().filter_map(Value::as_str).collect();
        assert_eq!(pieces, expected, "{ids:?}");
    }
}

#[test]
fn streams_decode_chunk_by_chunk_as_vllm_does() {
    let m = model();
    let cases = oracle("stream");
    assert!(cases.len() >= 1000);
    for case in cases {
        let skip = case["skip_special_tokens"].as_bool().expect("skip");
        let prompt = ids(&case["prompt"]);
        let mut window = Window::seed(&m, Some(&prompt), skip);
        let texts: Vec<String> =
            case["chunks"].as_array().expect("chunks").iter().map(|c| window.decode(&m, &ids(c), skip)).collect();
        let expected: Vec<&str> = case["texts"].as_array().expect("texts").iter().filter_map(Value::as_str).collect();
        assert_eq!(texts, expected, "prompt {prompt:?} chunks {} skip {skip}", case["chunks"]);
    }
}

#[test]
fn the_vocabulary_maps_pieces_to_their_lowest_id() {
    let m = model();
    assert_eq!(m.vocab_len, 131072);
    for (text, id) in [("[TOOL_CALLS]", 9), ("[ARGS]", 32), ("[THINK]", 34), ("[/THINK]", 35), ("</s>", 2)] {
        assert_eq!(m.tokenizer.token_to_id(text), Some(id), "{text}");
    }
    assert_eq!(m.eos_token_id, Some(2));
    assert!(m.is_special(999) && !m.is_special(1000));
}
