//! Schema tree -> grammar rules, following xgrammar 0.2.8's converter: the
//! fixed basic rules first, then `root`, then every rule in the order the
//! converter allocates it (a rule is allocated before its body is built, so it
//! precedes the rules its body needs).

use std::collections::HashMap;
use std::rc::Rc;

use serde_json::Value;

use super::error::XgrammarError;
use super::grammar::{choice, each_char, seq, Expr, Grammar, Range, RuleId};
use super::object::ObjectBuilder;
use super::schema::{ArraySpec, IntegerSpec, Kind, NumberSpec, SchemaParser, Spec, StringSpec};
use super::{json_text, pattern, MAX_DEPTH};

/// `[ \n\r\t]`, the whitespace xgrammar allows between JSON tokens.
const WHITESPACE: &[Range] = &[(0x20, 0x20), (0x0a, 0x0a), (0x0d, 0x0d), (0x09, 0x09)];
/// What a JSON string character may not be, unescaped.
const STRING_EXCLUDED: &[Range] = &[(0x00, 0x1f), (0x22, 0x22), (0x5c, 0x5c), (0x0d, 0x0d), (0x0a, 0x0a)];
/// Characters a length-bounded string repeats over (xgrammar does not exclude
/// the other control characters here).
const LENGTH_CHARACTER: &[Range] = &[(0x22, 0x22), (0x5c, 0x5c), (0x0d, 0x0d), (0x0a, 0x0a)];

pub(super) const BASIC_ANY: &str = "basic_any";
pub(super) const BASIC_STRING: &str = "basic_string";
pub(super) const BASIC_STRING_SUB: &str = "basic_string_sub";
pub(super) const BASIC_ESCAPE: &str = "basic_escape";

pub(super) fn whitespace() -> Expr {
    Expr::ClassStar { negated: false, ranges: WHITESPACE.to_vec() }
}

/// `WS "," WS` between members and items.
pub(super) fn comma() -> Expr {
    Expr::Seq(vec![whitespace(), Expr::text(","), whitespace()])
}

/// `WS ":" WS` between a key and its value.
pub(super) fn colon() -> Expr {
    Expr::Seq(vec![whitespace(), Expr::text(":"), whitespace()])
}

/// What may follow the end of a key string: `WS [,}\]:]`.
pub(super) fn string_end_lookahead() -> Expr {
    Expr::Seq(vec![whitespace(), Expr::class(false, &each_char(",}]:"))])
}

pub(super) fn string_excluded_class(extra: &[Range]) -> Expr {
    let mut ranges = STRING_EXCLUDED.to_vec();
    ranges.extend_from_slice(extra);
    Expr::Class { negated: true, ranges }
}

pub(super) struct Converter<'a> {
    root_schema: &'a Value,
    /// The parser that read the root; `$ref` targets are read with it too.
    parser: SchemaParser,
    pub(super) grammar: Grammar,
    /// Schema cache key -> rule: the basic types, the root, resolved `$ref`s.
    cache: HashMap<String, RuleId>,
    /// `$ref` URI -> the rule allocated for it.
    references: HashMap<String, RuleId>,
}

impl<'a> Converter<'a> {
    pub(super) fn new(root_schema: &'a Value, parser: SchemaParser) -> Self {
        Converter {
            root_schema,
            parser,
            grammar: Grammar::default(),
            cache: HashMap::new(),
            references: HashMap::new(),
        }
    }

    /// Builds the whole grammar for the already parsed root schema.
    pub(super) fn convert(mut self, root: &Spec) -> Result<Grammar, XgrammarError> {
        self.add_basic_rules()?;
        let root_id = self.grammar.add_with_hint("root", Expr::Empty);
        self.references.insert("#".to_string(), root_id);
        let body = match self.cached(&root.key) {
            Some(rule) => Expr::Rule(rule),
            None => {
                if !root.key.is_empty() {
                    self.cache.insert(root.key.clone(), root_id);
                }
                let name = self.grammar.name_of(root_id).to_string();
                self.generate(root, &name, 0)?
            }
        };
        self.grammar.set_body(root_id, body);
        Ok(self.grammar)
    }

    fn add_basic_rules(&mut self) -> Result<(), XgrammarError> {
        const NAMES: [&str; 10] = [
            BASIC_ESCAPE,
            BASIC_STRING_SUB,
            BASIC_ANY,
            "basic_integer",
            "basic_number",
            BASIC_STRING,
            "basic_boolean",
            "basic_null",
            "basic_array",
            "basic_object",
        ];
        let ids: Vec<RuleId> = NAMES.iter().map(|name| self.grammar.add_named(name, Expr::Empty)).collect();
        let [escape, string_sub, any, integer, number, string, boolean, null, array, object] = ids[..] else {
            return Err(XgrammarError::Unsupported("internal: basic rules".into()));
        };

        let escaped = Expr::class(false, &each_char("\"\\/bfnrt"));
        let hex = Expr::class(false, &[(0x41, 0x46), (0x61, 0x66), (0x30, 0x39)]);
        let unicode = Expr::Seq(vec![Expr::text("u"), hex.clone(), hex.clone(), hex.clone(), hex]);
        self.grammar.set_body(escape, Expr::Choice(vec![escaped, unicode]));
        let string_sub_body = Expr::Choice(vec![
            Expr::text("\""),
            Expr::Seq(vec![string_excluded_class(&[]), Expr::Rule(string_sub)]),
            Expr::Seq(vec![Expr::text("\\"), Expr::Rule(escape), Expr::Rule(string_sub)]),
        ]);
        self.grammar.set_body(string_sub, string_sub_body);
        self.grammar.set_lookahead(string_sub, string_end_lookahead());

        self.grammar.set_body(any, self.any_body());
        self.cache.insert("{}".into(), any);
        self.grammar.set_body(integer, unbounded_integer());
        self.cache.insert(r#"{"type":"integer"}"#.into(), integer);
        let number_body = self.unbounded_number("basic_number");
        self.grammar.set_body(number, number_body);
        self.cache.insert(r#"{"type":"number"}"#.into(), number);
        self.grammar.set_body(string, Expr::Seq(vec![Expr::text("\""), Expr::Rule(string_sub)]));
        self.cache.insert(r#"{"type":"string"}"#.into(), string);
        self.grammar.set_body(boolean, boolean_body());
        self.cache.insert(r#"{"type":"boolean"}"#.into(), boolean);
        self.grammar.set_body(null, Expr::text("null"));
        self.cache.insert(r#"{"type":"null"}"#.into(), null);

        // Arrays and objects of anything, built by the general code paths.
        let any_spec = Spec { key: "{}".into(), kind: Kind::Any };
        let array_body = self.array_with(&[], Some(&any_spec), 0, -1, "basic_array", 0)?;
        self.grammar.set_body(array, array_body);
        self.cache.insert(r#"{"type":"array"}"#.into(), array);
        let object_body = ObjectBuilder::new(self, "basic_object", 0).open_object(Some(("addl", &any_spec)), 0, -1)?;
        self.grammar.set_body(object, object_body);
        self.cache.insert(r#"{"type":"object"}"#.into(), object);
        Ok(())
    }

    fn cached(&self, key: &str) -> Option<RuleId> {
        if key.is_empty() {
            return None;
        }
        self.cache.get(key).copied()
    }

    pub(super) fn rule_ref(&self, name: &str) -> Result<Expr, XgrammarError> {
        self.grammar
            .id_of(name)
            .map(Expr::Rule)
            .ok_or_else(|| XgrammarError::Unsupported(format!("internal: missing rule {name}")))
    }

    /// The rule for a sub-schema: a cached one, or a new rule named from
    /// `hint`, allocated before its body is built.
    pub(super) fn create_rule(&mut self, spec: &Spec, hint: &str, depth: usize) -> Result<RuleId, XgrammarError> {
        if let Some(rule) = self.cached(&spec.key) {
            return Ok(rule);
        }
        let id = self.grammar.add_with_hint(hint, Expr::Empty);
        let name = self.grammar.name_of(id).to_string();
        let body = self.generate(spec, &name, depth + 1)?;
        self.grammar.set_body(id, body);
        Ok(id)
    }

    pub(super) fn generate(&mut self, spec: &Spec, name: &str, depth: usize) -> Result<Expr, XgrammarError> {
        if depth > MAX_DEPTH {
            return Err(XgrammarError::TooDeep(MAX_DEPTH));
        }
        match &spec.kind {
            Kind::Any => Ok(self.any_body()),
            Kind::Integer(integer) => self.integer(integer, name),
            Kind::Number(number) => self.number(number, name),
            Kind::String(string) => self.string(string, name),
            Kind::Boolean => Ok(boolean_body()),
            Kind::Null => Ok(Expr::text("null")),
            Kind::Array(array) => self.array(array, name, depth),
            Kind::Object(object) => ObjectBuilder::new(self, name, depth).build(object),
            Kind::Const(json) => Ok(Expr::text(json)),
            Kind::Enum(values) => Ok(choice(values.iter().map(|v| Expr::text(v)).collect())),
            Kind::Ref(uri) => self.reference(uri, depth),
            Kind::AnyOf(options) => self.alternatives(options, name, "case", depth),
            Kind::TypeArray(options) => self.alternatives(options, name, "type", depth),
            Kind::AllOf(schemas) => match schemas.as_slice() {
                // One schema is inlined (its cache is not consulted).
                [only] => self.generate(only, &format!("{name}_case_0"), depth + 1),
                // Several: xgrammar gives up and accepts any value.
                _ => Ok(self.any_body()),
            },
        }
    }

    fn alternatives(
        &mut self,
        options: &[Rc<Spec>],
        name: &str,
        infix: &str,
        depth: usize,
    ) -> Result<Expr, XgrammarError> {
        let mut refs = Vec::with_capacity(options.len());
        for (index, option) in options.iter().enumerate() {
            refs.push(Expr::Rule(self.create_rule(option, &format!("{name}_{infix}_{index}"), depth)?));
        }
        Ok(choice(refs))
    }

    pub(super) fn any_body(&self) -> Expr {
        let names = ["basic_number", BASIC_STRING, "basic_boolean", "basic_null", "basic_array", "basic_object"];
        Expr::Choice(names.iter().filter_map(|n| self.grammar.id_of(n)).map(Expr::Rule).collect())
    }

    /// `expr` repeated `min..=max` times (-1 = unbounded), as xgrammar's
    /// builder does it: trivial counts need no rule, a class starred needs
    /// none either, anything else gets a rule named from `hint`.
    pub(super) fn repeat(&mut self, hint: &str, expr: Expr, min: i32, max: i32) -> Expr {
        match (min, max) {
            (0, 0) => return Expr::Empty,
            (1, 1) => return expr,
            (0, 1) => return choice(vec![Expr::Empty, expr]),
            _ => {}
        }
        if (min, max) == (0, -1) {
            if let Expr::Class { negated, ranges } = expr {
                return Expr::ClassStar { negated, ranges };
            }
        }
        let rule = match expr {
            Expr::Rule(id) => id,
            other => self.grammar.add_with_hint(hint, other),
        };
        Expr::Repeat { rule, min, max }
    }

    fn integer(&mut self, spec: &IntegerSpec, name: &str) -> Result<Expr, XgrammarError> {
        let (start, end) = spec.effective_range();
        if let Some(step) = spec.multiple_of {
            if let (Some(start), Some(end)) = (start, end) {
                // Parsing capped the width, so listing the multiples is cheap.
                let values = (start..=end).filter(|v| v % step == 0).map(|v| Expr::text(&v.to_string())).collect();
                return Ok(choice(values));
            }
            return Ok(self.multiple_of_automaton(step, name));
        }
        if start.is_some() || end.is_some() {
            return super::numeric::integer_range(self, start, end);
        }
        Ok(unbounded_integer())
    }

    /// Digits read left to right, tracking the value modulo `step`: one rule
    /// per remainder.
    fn multiple_of_automaton(&mut self, step: i64, name: &str) -> Expr {
        let states: Vec<RuleId> = (0..step)
            .map(|state| self.grammar.add_with_hint(&format!("{name}_multiple_of_{step}_mod_{state}"), Expr::Empty))
            .collect();
        let after = |state: i64, digit: i64| states[((state * 10 + digit) % step) as usize];
        for state in 0..step {
            let mut transitions = Vec::with_capacity(11);
            if state == 0 {
                transitions.push(Expr::Empty);
            }
            for digit in 0..=9 {
                transitions.push(seq(vec![Expr::text(&digit.to_string()), Expr::Rule(after(state, digit))]));
            }
            self.grammar.set_body(states[state as usize], choice(transitions));
        }
        let first_digits =
            (1..=9).map(|digit| seq(vec![Expr::text(&digit.to_string()), Expr::Rule(after(0, digit))])).collect();
        choice(vec![Expr::text("0"), seq(vec![optional_minus(), choice(first_digits)])])
    }

    fn number(&mut self, spec: &NumberSpec, name: &str) -> Result<Expr, XgrammarError> {
        if spec.minimum.is_some()
            || spec.maximum.is_some()
            || spec.exclusive_minimum.is_some()
            || spec.exclusive_maximum.is_some()
        {
            return super::numeric::number_range(self, spec);
        }
        Ok(self.unbounded_number(name))
    }

    fn unbounded_number(&mut self, name: &str) -> Expr {
        let integer_part = choice(vec![
            Expr::text("0"),
            seq(vec![
                Expr::class(false, &[(0x31, 0x39)]),
                Expr::ClassStar { negated: false, ranges: vec![(0x30, 0x39)] },
            ]),
        ]);
        let digits = self.repeat(&format!("{name}_digits"), Expr::class(false, &[(0x30, 0x39)]), 1, -1);
        let fraction = choice(vec![Expr::Empty, seq(vec![Expr::text("."), digits.clone()])]);
        let exponent = choice(vec![
            Expr::Empty,
            seq(vec![
                Expr::class(false, &[(0x65, 0x65), (0x45, 0x45)]),
                choice(vec![Expr::Empty, Expr::class(false, &[(0x2b, 0x2b), (0x2d, 0x2d)])]),
                digits,
            ]),
        ]);
        seq(vec![optional_minus(), integer_part, fraction, exponent])
    }

    fn string(&mut self, spec: &StringSpec, name: &str) -> Result<Expr, XgrammarError> {
        let quote = || Expr::text("\"");
        if let Some(format) = &spec.format {
            if let Some(regex) = super::numeric::format_regex(format) {
                let body = super::numeric::regex_subgrammar(self, &regex)?;
                return Ok(seq(vec![quote(), body, quote()]));
            }
        }
        if let Some(pattern) = &spec.pattern {
            let body = pattern::string_pattern(self, pattern)?;
            return Ok(seq(vec![quote(), body, quote()]));
        }
        if spec.min_length != 0 || spec.max_length != -1 {
            let character = Expr::class(true, LENGTH_CHARACTER);
            let body = self.repeat(&format!("{name}_characters"), character, spec.min_length, spec.max_length);
            return Ok(seq(vec![quote(), body, quote()]));
        }
        Ok(seq(vec![quote(), self.rule_ref(BASIC_STRING_SUB)?]))
    }

    fn array(&mut self, spec: &ArraySpec, name: &str, depth: usize) -> Result<Expr, XgrammarError> {
        self.array_with(
            &spec.prefix_items,
            spec.additional_items.as_deref(),
            spec.min_items,
            spec.max_items,
            name,
            depth,
        )
    }

    fn array_with(
        &mut self,
        prefix_items: &[Rc<Spec>],
        additional_items: Option<&Spec>,
        min_items: i64,
        max_items: i64,
        name: &str,
        depth: usize,
    ) -> Result<Expr, XgrammarError> {
        let mut item_rules = Vec::with_capacity(prefix_items.len());
        for (index, item) in prefix_items.iter().enumerate() {
            item_rules.push(self.create_rule(item, &format!("{name}_item_{index}"), depth)?);
        }
        let additional = match additional_items {
            Some(items) => Some(self.create_rule(items, &format!("{name}_additional"), depth)?),
            None => None,
        };
        let open = || Expr::text("[");
        let close = || Expr::text("]");
        let empty_array = seq(vec![open(), whitespace(), close()]);
        // C++ narrows these counts to int; keep its wrapping.
        let narrow = |count: i64| count as i32;
        if item_rules.is_empty() {
            let Some(additional) = additional.filter(|_| max_items != 0) else { return Ok(empty_array) };
            let tail = self.repeat(
                &format!("{name}_items"),
                seq(vec![comma(), Expr::Rule(additional)]),
                if min_items == 0 { 0 } else { narrow(min_items - 1) },
                if max_items == -1 { -1 } else { narrow(max_items - 1) },
            );
            let nonempty = seq(vec![open(), whitespace(), Expr::Rule(additional), tail, whitespace(), close()]);
            return Ok(if min_items == 0 { choice(vec![nonempty, empty_array]) } else { nonempty });
        }
        // Tuples: the first `minItems` prefix items are required, each later
        // one optional in turn (a chain of `<name>_suffix_<i>` rules built
        // backwards), then the extra items.
        let count = item_rules.len() as i64;
        let mut next = match additional {
            Some(additional) => self.repeat(
                &format!("{name}_additional_items"),
                seq(vec![comma(), Expr::Rule(additional)]),
                narrow((min_items - count).max(0)),
                if max_items == -1 { -1 } else { narrow(max_items - count) },
            ),
            None => Expr::Empty,
        };
        let required = min_items.clamp(0, count) as usize;
        for index in (required..item_rules.len()).rev() {
            let mut item = Vec::with_capacity(3);
            if index > 0 {
                item.push(comma());
            }
            item.extend([Expr::Rule(item_rules[index]), next]);
            let body = choice(vec![Expr::Empty, seq(item)]);
            next = Expr::Rule(self.grammar.add_with_hint(&format!("{name}_suffix_{index}"), body));
        }
        let mut elements = vec![open(), whitespace()];
        for (index, rule) in item_rules.iter().take(required).enumerate() {
            if index > 0 {
                elements.push(comma());
            }
            elements.push(Expr::Rule(*rule));
        }
        elements.extend([next, whitespace(), close()]);
        Ok(seq(elements))
    }

    /// A `$ref`: one rule per URI, named from its path, allocated before the
    /// target is read so recursive references find it.
    fn reference(&mut self, uri: &str, depth: usize) -> Result<Expr, XgrammarError> {
        if let Some(rule) = self.references.get(uri) {
            return Ok(Expr::Rule(*rule));
        }
        let id = self.grammar.add_with_hint(&reference_rule_hint(uri), Expr::Empty);
        self.references.insert(uri.to_string(), id);
        let name = self.grammar.name_of(id).to_string();
        let target = self.resolve(uri, depth).map_err(XgrammarError::during_conversion)?;
        let body = self.generate(&target, &name, depth + 1)?;
        self.grammar.set_body(id, body);
        if !target.key.is_empty() {
            self.cache.insert(target.key.clone(), id);
        }
        Ok(Expr::Rule(id))
    }

    fn resolve(&mut self, uri: &str, depth: usize) -> Result<Rc<Spec>, XgrammarError> {
        let Some(path) = uri.strip_prefix("#/") else {
            // Not a local reference: xgrammar warns and accepts any value.
            return Ok(Rc::new(Spec { key: String::new(), kind: Kind::Any }));
        };
        let mut target = self.root_schema;
        for part in path.split('/').filter(|part| !part.is_empty()) {
            target = match target.as_object().and_then(|object| object.get(part)) {
                Some(next) => next,
                None => return Err(XgrammarError::parse(format!("Cannot find field {part} in {uri}"))),
            };
        }
        self.parser.parse(target, None, depth + 1)
    }

    /// The key of a property as it appears in the grammar: its JSON text.
    pub(super) fn property_key(name: &str) -> Expr {
        let mut text = String::new();
        json_text::write_string(name, &mut text);
        Expr::text(&text)
    }
}

/// The rule name for a `$ref` URI: its path segments joined by `_`, keeping
/// only ASCII letters, `_`, `-` and `.`.
fn reference_rule_hint(uri: &str) -> String {
    let Some(path) = uri.strip_prefix("#/") else { return "ref".to_string() };
    let mut hint = String::new();
    for segment in path.split('/').filter(|segment| !segment.is_empty()) {
        // The separator goes in only once something has been kept.
        if !hint.is_empty() {
            hint.push('_');
        }
        hint.extend(segment.chars().filter(|c| c.is_ascii_alphabetic() || matches!(c, '_' | '-' | '.')));
    }
    if hint.is_empty() {
        "ref".to_string()
    } else {
        hint
    }
}

fn optional_minus() -> Expr {
    choice(vec![Expr::Empty, Expr::text("-")])
}

fn unbounded_integer() -> Expr {
    choice(vec![
        Expr::text("0"),
        seq(vec![
            optional_minus(),
            Expr::class(false, &[(0x31, 0x39)]),
            Expr::ClassStar { negated: false, ranges: vec![(0x30, 0x39)] },
        ]),
    ])
}

fn boolean_body() -> Expr {
    choice(vec![Expr::text("true"), Expr::text("false")])
}
