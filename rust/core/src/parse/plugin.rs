//! Parsers registered at startup from outside the core (`--tool-parser-plugin`,
//! `--reasoning-parser-plugin`). The core sees them as the factories every
//! family registers (`parse::family`, `Registry::add_tool`); the PyO3 crate
//! implements them by calling Python, so this crate stays free of any
//! interpreter. What is left here is how a plugin's failure reaches the caller.

use crate::error::ApiError;

/// The first failure a plugin parser hit. Parser trait methods cannot fail
/// (the built-in families never do), so a plugin records its error, answers
/// neutrally, and the caller turns the record into an error reply.
#[derive(Default)]
pub struct FailureSlot(std::sync::Mutex<Option<ApiError>>);

impl FailureSlot {
    /// Keep the first error only: later ones are usually its consequences.
    pub fn record(&self, error: ApiError) {
        if let Ok(mut slot) = self.0.lock() {
            slot.get_or_insert(error);
        }
    }

    pub fn get(&self) -> Option<ApiError> {
        self.0.lock().ok().and_then(|slot| slot.clone())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::model::Model;
    use crate::parse::family::ToolParserFactory;
    use crate::parse::{ChatContext, Extracted, Ids, ParserSpec, Registry, Texts, ToolParser};
    use crate::wire::response::Delta;

    struct Failing(FailureSlot);

    impl ToolParser for Failing {
        fn extract_tool_calls(&self, text: &str, _ctx: &ChatContext) -> Extracted {
            self.0.record(ApiError::internal("first"));
            self.0.record(ApiError::internal("second"));
            Extracted { tools_called: false, calls: Vec::new(), content: Some(text.to_string()) }
        }
        fn extract_tool_calls_streaming(&mut self, _t: &Texts, _i: &Ids, _c: &ChatContext) -> Option<Delta> {
            None
        }
        fn failure(&self) -> Option<ApiError> {
            self.0.get()
        }
    }

    struct Factory;
    impl ToolParserFactory for Factory {
        fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
            Box::new(Failing(FailureSlot::default()))
        }
    }

    #[test]
    fn registry_and_first_failure() {
        let mut reg = Registry::default();
        reg.add_tool("hermes", Arc::new(Factory));
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/derender/models/qwen3");
        let model = Arc::new(Model::load_dir(&dir).expect("bundled model"));
        // The plugin shadows the built-in name; a tool name is no reasoning name.
        let spec = ParserSpec::resolve(None, Some("hermes"), true, &model, &reg).expect("resolves").expect("a spec");
        let ctx0 = ChatContext::from_request(&serde_json::Map::new(), &Default::default());
        assert!(spec.build(&ctx0, &model).failure().is_none());
        assert!(ParserSpec::resolve(Some("hermes"), None, false, &model, &reg).is_err());
        let parser = Failing(FailureSlot::default());
        let ctx = ChatContext::from_request(&serde_json::Map::new(), &Default::default());
        parser.extract_tool_calls("x", &ctx);
        assert_eq!(parser.failure().map(|e| e.message), Some("first".to_string()));
    }
}
