//! Parsers registered at startup from outside the core (`--tool-parser-plugin`,
//! `--reasoning-parser-plugin`). The core only sees factories of trait
//! objects; the PyO3 crate implements them by calling Python, so this crate
//! stays free of any interpreter.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use super::{ChatContext, ReasoningParser, ToolParser};
use crate::error::ApiError;
use crate::model::Model;

/// Makes a fresh tool parser for one request (batch) or one replayed stream call.
pub trait ToolParserFactory: Send + Sync {
    fn create(&self, ctx: &ChatContext, model: &Arc<Model>) -> Box<dyn ToolParser>;
    /// Render: does `adjust_request` keep special tokens when tools may be called?
    fn keep_special_tokens(&self) -> bool {
        false
    }
    /// Render and parse: forced tool choices are answered as a JSON array
    /// (vLLM's base `adjust_request` then sets a JSON schema).
    fn supports_required_and_named(&self) -> bool {
        true
    }
}

/// Makes a fresh reasoning parser.
pub trait ReasoningParserFactory: Send + Sync {
    fn create(&self, ctx: &ChatContext, model: &Arc<Model>) -> Box<dyn ReasoningParser>;
    /// Render: does `adjust_request` keep special tokens?
    fn keep_special_tokens(&self) -> bool {
        false
    }
}

/// A registered factory and the name it was registered under.
pub struct Registered<F: ?Sized> {
    pub name: String,
    pub factory: Arc<F>,
}

impl<F: ?Sized> Clone for Registered<F> {
    fn clone(&self) -> Self {
        Registered { name: self.name.clone(), factory: self.factory.clone() }
    }
}

impl<F: ?Sized> fmt::Debug for Registered<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "plugin {:?}", self.name)
    }
}

/// Plugin parsers by CLI name. A plugin name shadows a built-in one, as a
/// later `register_module` does in vLLM.
#[derive(Clone, Default)]
pub struct PluginRegistry {
    tools: BTreeMap<String, Arc<dyn ToolParserFactory>>,
    reasoning: BTreeMap<String, Arc<dyn ReasoningParserFactory>>,
}

impl PluginRegistry {
    pub fn add_tool(&mut self, name: impl Into<String>, factory: Arc<dyn ToolParserFactory>) {
        self.tools.insert(name.into(), factory);
    }

    pub fn add_reasoning(&mut self, name: impl Into<String>, factory: Arc<dyn ReasoningParserFactory>) {
        self.reasoning.insert(name.into(), factory);
    }

    pub fn tool(&self, name: &str) -> Option<Registered<dyn ToolParserFactory>> {
        self.tools.get(name).map(|f| Registered { name: name.to_string(), factory: f.clone() })
    }

    pub fn reasoning(&self, name: &str) -> Option<Registered<dyn ReasoningParserFactory>> {
        self.reasoning.get(name).map(|f| Registered { name: name.to_string(), factory: f.clone() })
    }
}

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
    use super::*;
    use crate::parse::{Extracted, Ids, Texts};
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
        fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>) -> Box<dyn ToolParser> {
            Box::new(Failing(FailureSlot::default()))
        }
    }

    #[test]
    fn registry_and_first_failure() {
        let mut reg = PluginRegistry::default();
        reg.add_tool("mine", Arc::new(Factory));
        assert!(reg.tool("mine").is_some());
        assert!(reg.tool("other").is_none());
        assert!(reg.reasoning("mine").is_none());
        assert_eq!(format!("{:?}", reg.tool("mine").map(|r| r.name)), "Some(\"mine\")");
        let parser = Failing(FailureSlot::default());
        let ctx = ChatContext::from_request(&serde_json::Map::new(), &serde_json::Map::new());
        parser.extract_tool_calls("x", &ctx);
        assert_eq!(parser.failure().map(|e| e.message), Some("first".to_string()));
    }
}
