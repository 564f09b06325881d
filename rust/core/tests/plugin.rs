//! Plugin parsers seen from the core: a registered factory is selected by
//! name (before the built-ins), and a parser that fails makes the call an
//! error envelope instead of an answer.

use std::path::PathBuf;
use std::sync::Arc;

use derender_core::parse::family::ToolParserFactory;
use derender_core::parse::plugin::FailureSlot;
use derender_core::parse::{ChatContext, Extracted, FunctionCall, Ids, Registry, Texts, ToolParser};
use derender_core::served::Flags;
use derender_core::wire::response::Delta;
use derender_core::{ApiError, Derenderer, Model, Route, Settings};

fn model() -> Model {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/derender/models/qwen3");
    Model::load_dir(&dir).expect("bundled model loads")
}

/// Every output is one call to `echo` with the text as argument; `fail`
/// records an error instead.
struct Echo {
    fail: bool,
    failure: FailureSlot,
}

impl ToolParser for Echo {
    fn extract_tool_calls(&self, text: &str, _ctx: &ChatContext) -> Extracted {
        if self.fail {
            self.failure.record(ApiError::internal("echo broke"));
        }
        let arguments = serde_json::json!({ "text": text }).to_string();
        Extracted {
            tools_called: true,
            calls: vec![FunctionCall { id: None, name: "echo".into(), arguments }],
            content: None,
        }
    }
    fn extract_tool_calls_streaming(&mut self, t: &Texts, _ids: &Ids, _ctx: &ChatContext) -> Option<Delta> {
        if self.fail {
            self.failure.record(ApiError::internal("echo broke"));
        }
        Some(Delta { content: Some(t.delta.to_string()), ..Default::default() })
    }
    fn failure(&self) -> Option<ApiError> {
        self.failure.get()
    }
}

struct EchoFactory(bool);

impl ToolParserFactory for EchoFactory {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(Echo { fail: self.0, failure: FailureSlot::default() })
    }
}

fn core(name: &str, fail: bool) -> Derenderer {
    let model = model();
    let mut plugins = Registry::default();
    plugins.add_tool(name, Arc::new(EchoFactory(fail)));
    let flags = Flags {
        served_model_names: vec!["qwen3".into()],
        max_model_len: Some(4096),
        max_n_sequences: 16,
        tool_call_parser: Some(name.to_string()),
        enable_auto_tool_choice: true,
        ..Flags::default()
    };
    let settings = Settings::resolve(flags, &model, &plugins).expect("plugin resolves");
    Derenderer::new(model, settings).expect("core builds")
}

fn batch_body() -> Vec<u8> {
    serde_json::json!({
        "generate_response": {"request_id": "r", "choices": [{"index": 0, "token_ids": [9707, 1052], "finish_reason": "stop"}]},
        "chat_request": {
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "echo", "parameters": {"type": "object"}}}]
        }
    })
    .to_string()
    .into_bytes()
}

#[test]
fn a_plugin_name_shadows_a_builtin_and_answers() {
    // "hermes" would parse nothing out of "Hello there"; the plugin calls echo.
    let reply = core("hermes", false).handle(Route::ChatDerender, Some("application/json"), None, &batch_body());
    assert_eq!(reply.status, 200);
    let answer: serde_json::Value = serde_json::from_slice(&reply.body).unwrap();
    let call = &answer["choices"][0]["message"]["tool_calls"][0]["function"];
    assert_eq!(call["name"], "echo");
    assert_eq!(call["arguments"], "{\"text\":\"Hello there\"}");
}

#[test]
fn a_failing_plugin_is_an_error_envelope() {
    let reply = core("mine", true).handle(Route::ChatDerender, Some("application/json"), None, &batch_body());
    assert_eq!(reply.status, 500);
    let answer: serde_json::Value = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(answer["error"]["type"], "InternalServerError");
    assert_eq!(answer["error"]["message"], "echo broke");
}
