//! Parser names (vLLM's CLI names and aliases) → factories. Built-in
//! families and plugins register alike; a plugin name shadows a built-in
//! one, as a later `register_module` does in vLLM. Nothing here names a
//! family.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::family::{Composition, Family, ReasoningFamily, ReasoningParserFactory, ToolFamily, ToolParserFactory};
use crate::model::Model;
use crate::structured::TagModel;

/// How a registered name makes its factory.
pub(super) enum Source<F: ?Sized + 'static> {
    Family(&'static Family<F>),
    Plugin(Arc<F>),
}

impl<F: ?Sized> Source<F> {
    pub(super) fn load(&self, model: &Model) -> Result<Arc<F>, String> {
        match self {
            Source::Family(family) => (family.load)(model),
            Source::Plugin(factory) => Ok(factory.clone()),
        }
    }
}

/// The two kinds of parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Tool,
    Reasoning,
}

/// A registered name, as `derender parsers` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    pub name: &'static str,
    /// The family's other names.
    pub aliases: &'static [&'static str],
    pub needs: &'static str,
}

/// Every parser name the server knows.
pub struct Registry {
    tools: BTreeMap<String, Source<dyn ToolParserFactory>>,
    reasoning: BTreeMap<String, Source<dyn ReasoningParserFactory>>,
    tags: BTreeMap<&'static str, &'static TagModel>,
    compositions: Vec<&'static Composition>,
}

impl Default for Registry {
    /// The built-in families.
    fn default() -> Self {
        let mut registry = Registry {
            tools: BTreeMap::new(),
            reasoning: BTreeMap::new(),
            tags: BTreeMap::new(),
            compositions: Vec::new(),
        };
        super::families::register(&mut registry);
        registry
    }
}

impl Registry {
    pub fn tool_family(&mut self, family: &'static ToolFamily) {
        for name in family.names {
            self.tools.insert(name.to_string(), Source::Family(family));
        }
    }

    pub fn reasoning_family(&mut self, family: &'static ReasoningFamily) {
        for name in family.names {
            self.reasoning.insert(name.to_string(), Source::Family(family));
        }
    }

    pub(super) fn tool(&self, name: &str) -> Option<&Source<dyn ToolParserFactory>> {
        self.tools.get(name)
    }

    pub(super) fn reasoning(&self, name: &str) -> Option<&Source<dyn ReasoningParserFactory>> {
        self.reasoning.get(name)
    }

    /// A plugin tool parser (`--tool-parser-plugin`).
    pub fn add_tool(&mut self, name: impl Into<String>, factory: Arc<dyn ToolParserFactory>) {
        self.tools.insert(name.into(), Source::Plugin(factory));
    }

    /// A plugin reasoning parser (`--reasoning-parser-plugin`).
    pub fn add_reasoning(&mut self, name: impl Into<String>, factory: Arc<dyn ReasoningParserFactory>) {
        self.reasoning.insert(name.into(), Source::Plugin(factory));
    }

    /// The built-in families of a kind (plugins aside), sorted by name.
    pub fn listing(&self, kind: Kind) -> Vec<Listing> {
        match kind {
            Kind::Tool => listing(&self.tools),
            Kind::Reasoning => listing(&self.reasoning),
        }
    }

    /// Can the parser `name` serve `model` (`None`: no such name)? The
    /// error is the reason its constructor would give at startup.
    pub fn fits(&self, kind: Kind, name: &str, model: &Model) -> Option<Result<(), String>> {
        match kind {
            Kind::Tool => self.tools.get(name).map(|s| s.load(model).map(drop)),
            Kind::Reasoning => self.reasoning.get(name).map(|s| s.load(model).map(drop)),
        }
    }

    /// A unified family's composition rules.
    pub fn composition(&mut self, composition: &'static Composition) {
        self.compositions.push(composition);
    }

    /// The composition that owns `name`.
    pub(super) fn composition_of(&self, name: &str) -> Option<&'static Composition> {
        self.compositions.iter().copied().find(|c| c.names.contains(&name))
    }

    /// The composition that claims every output of `model`'s type.
    pub(super) fn composition_for_model(&self, model: &Model) -> Option<&'static Composition> {
        let kind = model.model_type.as_deref()?;
        self.compositions.iter().copied().find(|c| c.model_type.is_some_and(|(t, _)| t == kind))
    }

    /// A structural-tag model, under vLLM's key for it.
    pub fn tag_model(&mut self, model: &'static TagModel) {
        self.tags.insert(model.name, model);
    }

    /// The structural-tag models, by name.
    pub fn tag_models(&self) -> impl Iterator<Item = &'static TagModel> + '_ {
        self.tags.values().copied()
    }

    /// The structural-tag model vLLM knows by `name`.
    pub fn find_tag_model(&self, name: &str) -> Option<&'static TagModel> {
        self.tags.get(name).copied()
    }
}

fn listing<F: ?Sized>(names: &BTreeMap<String, Source<F>>) -> Vec<Listing> {
    names
        .iter()
        .filter_map(|(name, source)| match source {
            Source::Family(f) if f.names.first() == Some(&name.as_str()) => {
                Some(Listing { name: f.names[0], aliases: &f.names[1..], needs: f.needs })
            }
            _ => None,
        })
        .collect()
}
