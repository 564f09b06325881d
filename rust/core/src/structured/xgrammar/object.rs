//! Objects, as xgrammar 0.2.8 spells them with `any_order=False`: properties
//! in document order, each optional one skippable. After the first member, a
//! chain of `<name>_part_<i>` rules says what may follow property `i`; those
//! rules are created from the last property backwards. With min/max
//! properties the chain is split per number of members matched so far
//! (`<name>_part_<i>_<count>`).

use std::collections::{BTreeMap, HashSet};
use std::rc::Rc;

use super::convert::{
    colon, comma, string_end_lookahead, string_excluded_class, whitespace, Converter, BASIC_ESCAPE, BASIC_STRING,
    BASIC_STRING_SUB,
};
use super::error::XgrammarError;
use super::grammar::{choice, seq, Expr};
use super::pattern;
use super::schema::{Kind, ObjectSpec, Spec};

/// Longest property name the key-exclusion trie walks (one recursion level
/// per byte).
const MAX_EXCLUDED_KEY_BYTES: usize = 256;

type Properties = [(String, Rc<Spec>)];

/// Where extra members come from: the rule-name suffix and their schema.
type Additional<'s> = Option<(&'s str, &'s Spec)>;

pub(super) struct ObjectBuilder<'c, 'a> {
    conv: &'c mut Converter<'a>,
    name: String,
    depth: usize,
}

/// Content between the braces, and whether `{}` is also allowed.
struct Body {
    content: Expr,
    has_content: bool,
    could_be_empty: bool,
}

impl<'c, 'a> ObjectBuilder<'c, 'a> {
    pub(super) fn new(conv: &'c mut Converter<'a>, name: &str, depth: usize) -> Self {
        ObjectBuilder { conv, name: name.to_string(), depth }
    }

    pub(super) fn build(mut self, spec: &ObjectSpec) -> Result<Expr, XgrammarError> {
        // `additionalProperties: true` (or unevaluated ones) get a rule of
        // their own, not the cached `basic_any`.
        let uncached_any = Spec { key: String::new(), kind: Kind::Any };
        let additional: Additional = match (&spec.additional_schema, &spec.unevaluated_schema) {
            (Some(schema), _) if spec.allow_additional => Some(("addl", schema.as_ref())),
            (_, Some(schema)) if spec.allow_unevaluated => Some(("uneval", schema.as_ref())),
            _ if spec.allow_additional || spec.allow_unevaluated => Some(("addl", &uncached_any)),
            _ => None,
        };
        let keyed = !spec.pattern_properties.is_empty() || spec.property_names.is_some();
        let body = if !spec.properties.is_empty() && keyed {
            self.properties_with_key_constraints(spec, additional, &uncached_any)?
        } else if keyed {
            self.key_constrained_only(spec, additional)?
        } else if !spec.properties.is_empty() {
            let content = self.members(
                &spec.properties,
                &spec.required,
                additional,
                None,
                spec.min_properties,
                spec.max_properties,
            )?;
            Body {
                content,
                has_content: spec.max_properties != 0,
                could_be_empty: spec.required.is_empty() && spec.min_properties == 0,
            }
        } else if additional.is_some() {
            self.free_members(additional, spec.min_properties, spec.max_properties)?
        } else {
            Body { content: Expr::Empty, has_content: false, could_be_empty: true }
        };
        Ok(braces(body))
    }

    /// An object of arbitrary members (`basic_object` and schemas with only
    /// `additionalProperties`).
    pub(super) fn open_object(mut self, additional: Additional, min: i32, max: i32) -> Result<Expr, XgrammarError> {
        let body = self.free_members(additional, min, max)?;
        Ok(braces(body))
    }

    fn hint(&self, suffix: &str) -> String {
        format!("{}_{suffix}", self.name)
    }

    fn rule_for(&mut self, spec: &Spec, suffix: &str) -> Result<Expr, XgrammarError> {
        let hint = self.hint(suffix);
        Ok(Expr::Rule(self.conv.create_rule(spec, &hint, self.depth)?))
    }

    fn free_members(&mut self, additional: Additional, min: i32, max: i32) -> Result<Body, XgrammarError> {
        let mut body = Body { content: Expr::Empty, has_content: false, could_be_empty: min == 0 };
        let Some((suffix, schema)) = additional else { return Ok(body) };
        if max != 0 {
            let value = self.rule_for(schema, suffix)?;
            let member = seq(vec![self.conv.rule_ref(BASIC_STRING)?, colon(), value]);
            let more = self.count_limited(seq(vec![comma(), member.clone()]), min, max, 1);
            body.content = seq(vec![whitespace(), member, more, whitespace()]);
            body.has_content = true;
        }
        Ok(body)
    }

    /// `patternProperties` / `propertyNames` next to named properties: they
    /// stand in for the additional member pattern.
    fn properties_with_key_constraints(
        &mut self,
        spec: &ObjectSpec,
        additional: Additional,
        uncached_any: &Spec,
    ) -> Result<Body, XgrammarError> {
        let mut effective = additional;
        let mut replacement = None;
        if !spec.pattern_properties.is_empty() {
            let mut patterns = Vec::new();
            for (index, (key_pattern, schema)) in spec.pattern_properties.iter().enumerate() {
                let suffix = format!("pp_{index}");
                let key = self.pattern_key_rule(key_pattern, &format!("{suffix}_key"))?;
                let value = self.rule_for(schema, &suffix)?;
                patterns.push(seq(vec![key, colon(), value]));
            }
            if let Some((suffix, schema)) = effective {
                let value = self.rule_for(schema, suffix)?;
                patterns.push(seq(vec![self.conv.rule_ref(BASIC_STRING)?, colon(), value]));
            }
            replacement = Some(choice(patterns));
            effective = Some(("pp", effective.map_or(uncached_any, |(_, schema)| schema)));
        } else if let (Some(names), Some((suffix, schema))) = (&spec.property_names, effective) {
            let key = self.rule_for(names, "name")?;
            let value = self.rule_for(schema, suffix)?;
            replacement = Some(seq(vec![key, colon(), value]));
            effective = Some(("pn", schema));
        }
        let content = self.members(
            &spec.properties,
            &spec.required,
            effective,
            replacement,
            spec.min_properties,
            spec.max_properties,
        )?;
        Ok(Body {
            content,
            has_content: spec.max_properties != 0,
            could_be_empty: spec.required.is_empty() && spec.min_properties == 0,
        })
    }

    /// `patternProperties` / `propertyNames` with no named properties.
    fn key_constrained_only(&mut self, spec: &ObjectSpec, additional: Additional) -> Result<Body, XgrammarError> {
        if spec.max_properties == 0 {
            return Ok(Body { content: Expr::Empty, has_content: false, could_be_empty: true });
        }
        let mut members = Vec::new();
        if !spec.pattern_properties.is_empty() {
            for (index, (key_pattern, schema)) in spec.pattern_properties.iter().enumerate() {
                let suffix = format!("prop_{index}");
                let key = self.pattern_key_rule(key_pattern, &format!("{suffix}_key"))?;
                let value = self.rule_for(schema, &suffix)?;
                members.push(seq(vec![whitespace(), seq(vec![key, colon(), value])]));
            }
        } else if let Some(names) = &spec.property_names {
            let key = self.rule_for(names, "name")?;
            let value = match additional {
                Some((suffix, schema)) => self.rule_for(schema, suffix)?,
                None => self.conv.rule_ref("basic_any")?,
            };
            members.push(seq(vec![whitespace(), seq(vec![key, colon(), value])]));
        }
        let member_rule = self.conv.grammar.add_with_hint(&self.hint("prop"), choice(members));
        let more = self.count_limited(
            seq(vec![comma(), Expr::Rule(member_rule)]),
            spec.min_properties,
            spec.max_properties,
            1,
        );
        Ok(Body {
            content: seq(vec![Expr::Rule(member_rule), more, whitespace()]),
            has_content: true,
            could_be_empty: spec.min_properties == 0,
        })
    }

    /// A key matching `key_pattern`, as a rule of its own (never cached).
    fn pattern_key_rule(&mut self, key_pattern: &str, suffix: &str) -> Result<Expr, XgrammarError> {
        let id = self.conv.grammar.add_with_hint(&self.hint(suffix), Expr::Empty);
        let body = pattern::string_pattern(self.conv, key_pattern)?;
        self.conv.grammar.set_body(id, seq(vec![Expr::text("\""), body, Expr::text("\"")]));
        Ok(Expr::Rule(id))
    }

    /// Further members, given `already` have been matched, within
    /// `min..=max` members in all.
    fn count_limited(&mut self, member: Expr, min: i32, max: i32, already: i32) -> Expr {
        if max != -1 && max == already {
            return Expr::Empty;
        }
        let lower = (min - already).max(0);
        let upper = if max == -1 { -1 } else { (max - already).max(-1) };
        let hint = self.hint("properties");
        self.conv.repeat(&hint, member, lower, upper)
    }

    /// Named properties in order, optionally followed or replaced by extra
    /// members.
    fn members(
        &mut self,
        properties: &Properties,
        required: &HashSet<String>,
        additional: Additional,
        replacement: Option<Expr>,
        min: i32,
        max: i32,
    ) -> Result<Expr, XgrammarError> {
        if max == 0 || properties.is_empty() {
            return Ok(Expr::Empty);
        }
        let mut patterns = Vec::with_capacity(properties.len());
        for (index, (key, schema)) in properties.iter().enumerate() {
            let value = self.rule_for(schema, &format!("prop_{index}"))?;
            patterns.push(seq(vec![Converter::property_key(key), colon(), value]));
        }
        let mut extra = ExtraMember { source: additional, replacement, built: None };
        let chain = Chain { properties, required, patterns: &patterns };
        if min == 0 && max == -1 {
            self.unconstrained_chain(&chain, &mut extra)
        } else {
            self.counted_chain(&chain, &mut extra, min, max)
        }
    }

    fn unconstrained_chain(&mut self, chain: &Chain, extra: &mut ExtraMember) -> Result<Expr, XgrammarError> {
        let count = chain.patterns.len();
        let last = count - 1;
        let mut tails = vec![Expr::Empty; count];
        let mut is_required = vec![false; count];
        if extra.source.is_some() {
            let member = extra.get(self, chain.properties)?;
            let repeated = {
                let hint = self.hint("additional_properties");
                self.conv.repeat(&hint, seq(vec![comma(), member]), 0, -1)
            };
            tails[last] = Expr::Rule(self.conv.grammar.add_with_hint(&self.hint(&format!("part_{last}")), repeated));
        }
        for index in (0..last).rev() {
            let with_next = seq(vec![comma(), chain.patterns[index + 1].clone(), tails[index + 1].clone()]);
            let body = if chain.is_required(index + 1) {
                is_required[index + 1] = true;
                with_next
            } else {
                choice(vec![tails[index + 1].clone(), with_next])
            };
            tails[index] = Expr::Rule(self.conv.grammar.add_with_hint(&self.hint(&format!("part_{index}")), body));
        }
        is_required[0] = chain.is_required(0);
        let mut firsts = Vec::new();
        for index in 0..count {
            firsts.push(seq(vec![chain.patterns[index].clone(), tails[index].clone()]));
            if is_required[index] {
                break;
            }
        }
        if extra.source.is_some() && chain.required.is_empty() {
            let member = extra.get(self, chain.properties)?;
            firsts.push(seq(vec![member, tails[last].clone()]));
        }
        Ok(seq(vec![whitespace(), choice(firsts), whitespace()]))
    }

    /// With `minProperties` / `maxProperties`: tails are indexed by how many
    /// members came before.
    fn counted_chain(
        &mut self,
        chain: &Chain,
        extra: &mut ExtraMember,
        min: i32,
        max: i32,
    ) -> Result<Expr, XgrammarError> {
        let count = chain.patterns.len() as i64;
        let last = chain.patterns.len() - 1;
        let (min, max) = (i64::from(min), i64::from(max));
        let allow_extra = extra.source.is_some();

        // Fewest members matched once property i is in: counts the required
        // ones up to i (1 until the first required one).
        let mut is_required = vec![false; chain.patterns.len()];
        let mut matched_min = vec![0_i64; chain.patterns.len()];
        let mut found_required = chain.is_required(0);
        matched_min[0] = 1;
        for index in 1..chain.patterns.len() {
            matched_min[index] = matched_min[index - 1];
            if chain.is_required(index) {
                is_required[index] = true;
                matched_min[index] += 1;
            }
            if !found_required {
                matched_min[index] = 1;
            }
            if is_required[index] {
                found_required = true;
            }
        }
        is_required[0] = chain.is_required(0);

        // Most members matched once property i is in (only with a maximum).
        let bounded = max != -1;
        let mut matched_max: Vec<i64> = (1..=count).collect();
        matched_min[last] = if allow_extra { matched_min[last].max(1) } else { matched_min[last].max(min) };
        if bounded {
            matched_max[last] = matched_max[last].min(max);
        } else {
            matched_max[last] = count;
        }
        for index in (0..last).rev() {
            matched_min[index] = matched_min[index].max(matched_min[index + 1] - 1);
            if bounded {
                matched_max[index] = if is_required[index + 1] {
                    matched_max[index].min(matched_max[index + 1] - 1)
                } else {
                    matched_max[index].min(matched_max[index + 1])
                };
            } else {
                matched_max[index] = index as i64 + 1;
            }
        }

        let mut tails: Vec<BTreeMap<i64, Expr>> = vec![BTreeMap::new(); chain.patterns.len()];
        for matched in matched_min[last]..=matched_max[last] {
            let tail = if allow_extra {
                let member = extra.get(self, chain.properties)?;
                let body = self.count_limited(seq(vec![comma(), member]), min as i32, max as i32, matched as i32);
                let hint = self.hint(&format!("part_{last}_{matched}"));
                Expr::Rule(self.conv.grammar.add_with_hint(&hint, body))
            } else {
                Expr::Empty
            };
            tails[last].insert(matched, tail);
        }
        for index in (0..last).rev() {
            for matched in matched_min[index]..=matched_max[index] {
                let next = index + 1;
                let tail_at = |at: i64| {
                    tails[next]
                        .get(&at)
                        .cloned()
                        .ok_or_else(|| XgrammarError::Unsupported("object property counts out of range".into()))
                };
                let body = if bounded && matched == matched_max[next] {
                    tail_at(matched)?
                } else {
                    let with_next = seq(vec![comma(), chain.patterns[next].clone(), tail_at(matched + 1)?]);
                    if is_required[next] || matched == matched_min[next] - 1 {
                        with_next
                    } else {
                        choice(vec![tail_at(matched)?, with_next])
                    }
                };
                let hint = self.hint(&format!("part_{index}_{matched}"));
                let tail = Expr::Rule(self.conv.grammar.add_with_hint(&hint, body));
                tails[index].insert(matched, tail);
            }
        }

        let mut firsts = Vec::new();
        for index in 0..chain.patterns.len() {
            if bounded && matched_max[index] < matched_min[index] {
                continue;
            }
            if matched_min[index] > 1 {
                break;
            }
            let tail = tails[index]
                .get(&1)
                .cloned()
                .ok_or_else(|| XgrammarError::Unsupported("object property counts out of range".into()))?;
            firsts.push(seq(vec![chain.patterns[index].clone(), tail]));
            if is_required[index] {
                break;
            }
        }
        if allow_extra && chain.required.is_empty() {
            let member = extra.get(self, chain.properties)?;
            let more = self.count_limited(seq(vec![comma(), member.clone()]), min as i32, max as i32, 1);
            firsts.push(seq(vec![member, more]));
        }
        Ok(seq(vec![whitespace(), choice(firsts), whitespace()]))
    }

    /// A key that is none of the named properties: a trie over their bytes,
    /// each node allowing any other character to leave the trie.
    fn key_excluding(&mut self, properties: &Properties) -> Result<Expr, XgrammarError> {
        if properties.is_empty() {
            return self.conv.rule_ref(BASIC_STRING);
        }
        let mut root = TrieNode::default();
        for (name, _) in properties {
            if name.len() > MAX_EXCLUDED_KEY_BYTES {
                return Err(XgrammarError::TooDeep(MAX_EXCLUDED_KEY_BYTES));
            }
            let mut node = &mut root;
            for byte in name.bytes() {
                node = node.children.entry(byte).or_default();
            }
            node.is_terminal = true;
        }
        let id = self.conv.grammar.add_with_hint(&self.hint("addl_key"), Expr::Empty);
        let references =
            TrieRefs { string_sub: self.conv.rule_ref(BASIC_STRING_SUB)?, escape: self.conv.rule_ref(BASIC_ESCAPE)? };
        self.conv.grammar.set_body(id, seq(vec![Expr::text("\""), trie_body(&root, &references)]));
        self.conv.grammar.set_lookahead(id, string_end_lookahead());
        Ok(Expr::Rule(id))
    }
}

fn braces(body: Body) -> Expr {
    let object = seq(vec![Expr::text("{"), body.content, Expr::text("}")]);
    if !body.could_be_empty {
        return object;
    }
    let empty = seq(vec![Expr::text("{"), whitespace(), Expr::text("}")]);
    if body.has_content {
        choice(vec![object, empty])
    } else {
        empty
    }
}

struct Chain<'p> {
    properties: &'p Properties,
    required: &'p HashSet<String>,
    patterns: &'p [Expr],
}

impl Chain<'_> {
    fn is_required(&self, index: usize) -> bool {
        self.properties.get(index).is_some_and(|(name, _)| self.required.contains(name))
    }
}

/// The pattern for one extra member, built on first use (its rules are
/// allocated at that point, which fixes their place in the output).
struct ExtraMember<'s> {
    source: Additional<'s>,
    replacement: Option<Expr>,
    built: Option<Expr>,
}

impl ExtraMember<'_> {
    fn get(&mut self, builder: &mut ObjectBuilder, properties: &Properties) -> Result<Expr, XgrammarError> {
        if let Some(built) = &self.built {
            return Ok(built.clone());
        }
        let member = match (self.replacement.take(), self.source) {
            (Some(replacement), _) => replacement,
            (None, Some((suffix, schema))) => {
                let value = builder.rule_for(schema, suffix)?;
                let key = builder.key_excluding(properties)?;
                seq(vec![key, colon(), value])
            }
            (None, None) => return Err(XgrammarError::Unsupported("internal: no extra member".into())),
        };
        self.built = Some(member.clone());
        Ok(member)
    }
}

#[derive(Default)]
struct TrieNode {
    is_terminal: bool,
    children: BTreeMap<u8, TrieNode>,
}

struct TrieRefs {
    string_sub: Expr,
    escape: Expr,
}

fn trie_body(node: &TrieNode, refs: &TrieRefs) -> Expr {
    let mut options = Vec::new();
    if !node.is_terminal {
        options.push(Expr::text("\""));
    }
    let next_bytes: Vec<(u32, u32)> = node.children.keys().map(|&b| (u32::from(b), u32::from(b))).collect();
    options.push(seq(vec![string_excluded_class(&next_bytes), refs.string_sub.clone()]));
    options.push(seq(vec![Expr::text("\\"), refs.escape.clone(), refs.string_sub.clone()]));
    for (byte, child) in &node.children {
        options.push(seq(vec![Expr::Bytes(vec![*byte]), trie_body(child, refs)]));
    }
    choice(options)
}
