//! Reading a JSON schema the way xgrammar 0.2.8 does: which keyword decides
//! what a sub-schema is, what gets validated, in which order, and with which
//! message. The result is a tree the converter walks; `$ref` targets are read
//! later, when the converter reaches them (xgrammar does the same, which is why
//! their errors come from a different place).

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use serde_json::{Map, Value};

use super::error::{RaisedAt, XgrammarError};
use super::json_text::{self, classify, JsonNumber};
use super::MAX_DEPTH;

pub(super) struct Spec {
    /// xgrammar's cache key; empty for the synthetic "any" specs it makes.
    pub(super) key: String,
    pub(super) kind: Kind,
}

pub(super) enum Kind {
    Any,
    Integer(IntegerSpec),
    Number(NumberSpec),
    String(StringSpec),
    Boolean,
    Null,
    Array(ArraySpec),
    Object(ObjectSpec),
    /// The value's JSON text.
    Const(String),
    Enum(Vec<String>),
    Ref(String),
    /// `anyOf`, and `oneOf` (xgrammar emits the same grammar for both).
    AnyOf(Vec<Rc<Spec>>),
    AllOf(Vec<Rc<Spec>>),
    /// `"type": [..]`: one schema per listed type.
    TypeArray(Vec<Rc<Spec>>),
}

#[derive(Default)]
pub(super) struct IntegerSpec {
    pub(super) minimum: Option<i64>,
    pub(super) maximum: Option<i64>,
    pub(super) exclusive_minimum: Option<i64>,
    pub(super) exclusive_maximum: Option<i64>,
    pub(super) multiple_of: Option<i64>,
}

impl IntegerSpec {
    /// The inclusive range the bounds leave (`None` = open on that side).
    pub(super) fn effective_range(&self) -> (Option<i64>, Option<i64>) {
        let mut start = self.minimum;
        if let Some(exclusive) = self.exclusive_minimum {
            let bound = exclusive.saturating_add(1);
            start = Some(start.map_or(bound, |s| s.max(bound)));
        }
        let mut end = self.maximum;
        if let Some(exclusive) = self.exclusive_maximum {
            let bound = exclusive.saturating_sub(1);
            end = Some(end.map_or(bound, |e| e.min(bound)));
        }
        (start, end)
    }
}

#[derive(Default)]
pub(super) struct NumberSpec {
    pub(super) minimum: Option<f64>,
    pub(super) maximum: Option<f64>,
    pub(super) exclusive_minimum: Option<f64>,
    pub(super) exclusive_maximum: Option<f64>,
}

pub(super) struct StringSpec {
    pub(super) format: Option<String>,
    pub(super) pattern: Option<String>,
    pub(super) min_length: i32,
    /// -1 = unbounded.
    pub(super) max_length: i32,
}

pub(super) struct ArraySpec {
    pub(super) prefix_items: Vec<Rc<Spec>>,
    /// `None` when no item beyond the prefix is allowed.
    pub(super) additional_items: Option<Rc<Spec>>,
    pub(super) min_items: i64,
    /// -1 = unbounded.
    pub(super) max_items: i64,
}

pub(super) struct ObjectSpec {
    pub(super) properties: Vec<(String, Rc<Spec>)>,
    pub(super) required: HashSet<String>,
    pub(super) pattern_properties: Vec<(String, Rc<Spec>)>,
    pub(super) property_names: Option<Rc<Spec>>,
    pub(super) allow_additional: bool,
    pub(super) additional_schema: Option<Rc<Spec>>,
    pub(super) allow_unevaluated: bool,
    pub(super) unevaluated_schema: Option<Rc<Spec>>,
    pub(super) min_properties: i32,
    /// -1 = unbounded.
    pub(super) max_properties: i32,
}

fn err<T>(message: impl Into<String>) -> Result<T, XgrammarError> {
    Err(XgrammarError::parse(message))
}

fn check_failed<T>(line: u32, message: &str) -> Result<T, XgrammarError> {
    Err(XgrammarError::Rejected { at: RaisedAt::Check(line), message: format!("Check failed: {message}") })
}

/// Reads schemas, remembering each by cache key: a sub-schema equal to one
/// read before is not read again, and gets the earlier result (even when
/// `propertyNames` had read it as a string schema), as in xgrammar.
#[derive(Default)]
pub(super) struct SchemaParser {
    cache: HashMap<String, Rc<Spec>>,
}

impl SchemaParser {
    /// Reads `schema` (the default type applies when it has no `type`, as for
    /// `propertyNames`).
    pub(super) fn parse(
        &mut self,
        schema: &Value,
        default_type: Option<&str>,
        depth: usize,
    ) -> Result<Rc<Spec>, XgrammarError> {
        if depth > MAX_DEPTH {
            return Err(XgrammarError::TooDeep(MAX_DEPTH));
        }
        let key = json_text::cache_key(schema);
        if let Some(spec) = self.cache.get(&key) {
            return Ok(spec.clone());
        }
        let kind = self.read(schema, default_type, depth + 1)?;
        let spec = Rc::new(Spec { key: key.clone(), kind });
        self.cache.insert(key, spec.clone());
        Ok(spec)
    }

    fn read(&mut self, schema: &Value, default_type: Option<&str>, depth: usize) -> Result<Kind, XgrammarError> {
        let object = match schema {
            Value::Bool(true) => return Ok(Kind::Any),
            Value::Bool(false) => return err("Schema 'false' cannot accept any value"),
            Value::Object(object) => object,
            other => {
                return err(format!("Schema should be an object or bool, but got {}", json_text::serialize(other)))
            }
        };
        Ok(if let Some(reference) = object.get("$ref") {
            match reference {
                Value::String(uri) => Kind::Ref(uri.clone()),
                _ => return err("$ref must be a string"),
            }
        } else if let Some(value) = object.get("const") {
            Kind::Const(json_text::serialize(value))
        } else if let Some(values) = object.get("enum") {
            let Value::Array(values) = values else { return err("enum must be an array") };
            if values.is_empty() {
                return err("enum array must not be empty");
            }
            Kind::Enum(values.iter().map(json_text::serialize).collect())
        } else if let Some(options) = object.get("anyOf") {
            Kind::AnyOf(self.parse_options(options, "anyOf", depth)?)
        } else if let Some(options) = object.get("oneOf") {
            Kind::AnyOf(self.parse_options(options, "oneOf", depth)?)
        } else if let Some(options) = object.get("allOf") {
            Kind::AllOf(self.parse_options(options, "allOf", depth)?)
        } else if object.contains_key("type") || default_type.is_some() {
            match object.get("type") {
                Some(Value::Array(types)) => Kind::TypeArray(self.parse_type_array(object, types, depth)?),
                Some(Value::String(name)) => self.parse_typed(object, name, depth)?,
                Some(_) => return err("Type should be a string"),
                None => self.parse_typed(object, default_type.unwrap_or_default(), depth)?,
            }
        } else if ["properties", "additionalProperties", "unevaluatedProperties"]
            .iter()
            .any(|k| object.contains_key(*k))
        {
            Kind::Object(self.parse_object(object, depth)?)
        } else if ["items", "prefixItems", "unevaluatedItems"].iter().any(|k| object.contains_key(*k)) {
            Kind::Array(self.parse_array(object, depth)?)
        } else {
            Kind::Any
        })
    }

    fn parse_typed(
        &mut self,
        object: &Map<String, Value>,
        type_name: &str,
        depth: usize,
    ) -> Result<Kind, XgrammarError> {
        Ok(match type_name {
            "integer" => Kind::Integer(parse_integer(object)?),
            "number" => Kind::Number(parse_number(object)?),
            "string" => Kind::String(parse_string(object)?),
            "boolean" => Kind::Boolean,
            "null" => Kind::Null,
            "array" => Kind::Array(self.parse_array(object, depth)?),
            "object" => Kind::Object(self.parse_object(object, depth)?),
            other => return err(format!("Unsupported type \"{other}\"")),
        })
    }

    fn parse_options(&mut self, options: &Value, keyword: &str, depth: usize) -> Result<Vec<Rc<Spec>>, XgrammarError> {
        let Value::Array(options) = options else { return err(format!("{keyword} must be an array")) };
        options.iter().map(|option| self.parse(option, None, depth)).collect()
    }

    /// One schema per listed type: the same object with `type` set to it.
    fn parse_type_array(
        &mut self,
        object: &Map<String, Value>,
        types: &[Value],
        depth: usize,
    ) -> Result<Vec<Rc<Spec>>, XgrammarError> {
        let mut copy = object.clone();
        if types.is_empty() {
            copy.shift_remove("type");
            return Ok(vec![self.parse(&Value::Object(copy), None, depth)?]);
        }
        let mut specs = Vec::with_capacity(types.len());
        for type_name in types {
            if !type_name.is_string() {
                return err("type must be a string or an array of strings");
            }
            copy.insert("type".to_string(), type_name.clone());
            specs.push(self.parse(&Value::Object(copy.clone()), None, depth)?);
        }
        Ok(specs)
    }

    fn parse_array(&mut self, object: &Map<String, Value>, depth: usize) -> Result<ArraySpec, XgrammarError> {
        let mut prefix_items = Vec::new();
        if let Some(prefix) = object.get("prefixItems") {
            let Value::Array(prefix) = prefix else { return err("prefixItems must be an array") };
            for item in prefix {
                match item {
                    Value::Bool(false) => return err("prefixItems contains false"),
                    Value::Object(_) => prefix_items.push(self.parse(item, None, depth)?),
                    _ => return err("prefixItems must be an array of objects or booleans"),
                }
            }
        }
        let additional_items = match object.get("items").or_else(|| object.get("unevaluatedItems")) {
            Some(Value::Bool(false)) => None,
            Some(items @ (Value::Bool(true) | Value::Object(_))) => Some(self.parse(items, None, depth)?),
            Some(_) if object.contains_key("items") => return err("items must be a boolean or an object"),
            Some(_) => return err("unevaluatedItems must be a boolean or an object"),
            // Strict mode: no `items` means no items beyond the prefix.
            None => None,
        };
        let mut min_items = int_keyword(object, "minItems")?.map_or(0, |v| v.max(0));
        if let Some(min_contains) = int_keyword(object, "minContains")? {
            min_items = min_items.max(min_contains);
        }
        let max_items = match object.get("maxItems").map(int_value) {
            None => -1,
            // Past i32::MAX there is no bound.
            Some(Some(value)) if value > i64::from(i32::MAX) => -1,
            Some(Some(value)) if value >= 0 => value,
            Some(_) => return err("maxItems must be a non-negative integer"),
        };
        if min_items > i64::from(i32::MAX) {
            return err("minItems and minContains must not exceed 2147483647");
        }
        if max_items != -1 && min_items > max_items {
            return err(format!("minItems is greater than maxItems: {min_items} > {max_items}"));
        }
        let prefix_len = prefix_items.len() as i64;
        if max_items != -1 && max_items < prefix_len {
            return err(format!("maxItems is less than the number of prefixItems: {max_items} < {prefix_len}"));
        }
        if additional_items.is_none() && prefix_len < min_items {
            return err(format!(
            "minItems is greater than the number of prefixItems, but additional items are not allowed: {min_items} > {prefix_len}"
        ));
        }
        Ok(ArraySpec { prefix_items, additional_items, min_items, max_items })
    }

    fn parse_object(&mut self, object: &Map<String, Value>, depth: usize) -> Result<ObjectSpec, XgrammarError> {
        let mut properties = Vec::new();
        if let Some(props) = object.get("properties") {
            let Value::Object(props) = props else { return err("properties must be an object") };
            for (name, schema) in props {
                properties.push((name.clone(), self.parse(schema, None, depth)?));
            }
        }
        let mut required = HashSet::new();
        if let Some(names) = object.get("required") {
            let Value::Array(names) = names else { return err("required must be an array") };
            for name in names {
                let Value::String(name) = name else { return Err(XgrammarError::NotAString) };
                required.insert(name.clone());
            }
        }
        let mut pattern_properties = Vec::new();
        if let Some(patterns) = object.get("patternProperties") {
            let Value::Object(patterns) = patterns else { return err("patternProperties must be an object") };
            for (pattern, schema) in patterns {
                pattern_properties.push((pattern.clone(), self.parse(schema, None, depth)?));
            }
        }
        let mut property_names = None;
        if let Some(names) = object.get("propertyNames") {
            let Value::Object(names_object) = names else { return err("propertyNames must be an object") };
            if matches!(names_object.get("type"), Some(Value::String(t)) if t != "string") {
                return err("propertyNames must be an object that validates string");
            }
            property_names = Some(self.parse(names, Some("string"), depth)?);
        }
        // Strict mode: extra keys only when `additionalProperties` allows them.
        let mut allow_additional = false;
        let mut additional_schema = None;
        match object.get("additionalProperties") {
            None => {}
            Some(Value::Bool(allowed)) => allow_additional = *allowed,
            Some(schema) => {
                allow_additional = true;
                additional_schema = Some(self.parse(schema, None, depth)?);
            }
        }
        let mut allow_unevaluated = false;
        let mut unevaluated_schema = None;
        if object.contains_key("additionalProperties") {
            allow_unevaluated = allow_additional;
        } else if let Some(value) = object.get("unevaluatedProperties") {
            match value {
                Value::Bool(allowed) => allow_unevaluated = *allowed,
                schema => {
                    allow_unevaluated = true;
                    unevaluated_schema = Some(self.parse(schema, None, depth)?);
                }
            }
        }
        let mut min_properties = 0;
        if let Some(value) = int_keyword(object, "minProperties")? {
            min_properties = value as i32;
            if min_properties < 0 {
                return err("minProperties must be a non-negative integer");
            }
        }
        let mut max_properties = -1;
        if let Some(value) = int_keyword(object, "maxProperties")? {
            max_properties = value as i32;
            if max_properties < 0 {
                return err("maxProperties must be a non-negative integer");
            }
        }
        if max_properties != -1 && min_properties > max_properties {
            return err(format!("minProperties is greater than maxProperties: {min_properties} > {max_properties}"));
        }
        if max_properties != -1 && required.len() as i64 > max_properties as i64 {
            return err(format!(
                "maxProperties is less than the number of required properties: {max_properties} < {}",
                required.len()
            ));
        }
        if pattern_properties.is_empty()
            && property_names.is_none()
            && !allow_additional
            && !allow_unevaluated
            && min_properties as i64 > properties.len() as i64
        {
            return err(format!(
            "minProperties is greater than the number of properties, but additional properties aren't allowed: {min_properties} > {}",
            properties.len()
        ));
        }
        Ok(ObjectSpec {
            properties,
            required,
            pattern_properties,
            property_names,
            allow_additional,
            additional_schema,
            allow_unevaluated,
            unevaluated_schema,
            min_properties,
            max_properties,
        })
    }
}

fn integer_bound(value: &Value) -> Result<i64, XgrammarError> {
    let Value::Number(number) = value else { return err("Value must be a number") };
    let x = match classify(number) {
        JsonNumber::Int(i) => return Ok(i),
        JsonNumber::Double(x) => x,
    };
    if x != x.floor() {
        return err("Integer constraint must be a whole number");
    }
    // -2^63 and 2^63 as doubles: xgrammar treats both edges as precision loss.
    const EDGE: f64 = 9_223_372_036_854_775_808.0;
    if x == -EDGE {
        return check_failed(
            924,
            "(false) is false: Integer exceeds minimum limit due to precision loss at 64-bit boundary",
        );
    }
    if x == EDGE {
        return check_failed(
            929,
            "(false) is false: Integer exceeds maximum limit due to precision loss at 64-bit boundary",
        );
    }
    if x > EDGE {
        return check_failed(936, "(val <= MAX_INT64_AS_DOUBLE) is false: Integer exceeds maximum limit");
    }
    if x < -EDGE {
        return check_failed(937, "(val >= MIN_INT64_AS_DOUBLE) is false: Integer exceeds minimum limit");
    }
    Ok(x as i64)
}

fn number_value(value: &Value) -> Result<f64, XgrammarError> {
    match value {
        Value::Number(number) => Ok(match classify(number) {
            JsonNumber::Int(i) => i as f64,
            JsonNumber::Double(x) => x,
        }),
        _ => err("Value must be a number"),
    }
}

/// Beyond this `multipleOf` (or a bounded range wider than the width cap)
/// xgrammar drops `multipleOf` with a warning.
const MULTIPLE_OF_MAX: i64 = 1024;
const MULTIPLE_OF_RANGE_WIDTH_MAX: i64 = 10_000;

fn parse_integer(object: &Map<String, Value>) -> Result<IntegerSpec, XgrammarError> {
    let mut spec = IntegerSpec::default();
    if let Some(value) = object.get("multipleOf") {
        let x = number_value(value)?;
        if x <= 0.0 {
            return err("multipleOf must be greater than 0");
        }
        // A fractional or too large step is ignored (xgrammar warns).
        if x == x.floor() && x <= MULTIPLE_OF_MAX as f64 {
            spec.multiple_of = Some(x as i64);
        }
    }
    if let Some(value) = object.get("minimum") {
        spec.minimum = Some(integer_bound(value)?);
    }
    if let Some(value) = object.get("maximum") {
        spec.maximum = Some(integer_bound(value)?);
    }
    if let Some(value) = object.get("exclusiveMinimum") {
        let bound = integer_bound(value)?;
        if bound == i64::MAX {
            return Err(XgrammarError::parse("exclusiveMinimum would cause integer overflow"));
        }
        spec.exclusive_minimum = Some(bound);
    }
    if let Some(value) = object.get("exclusiveMaximum") {
        let bound = integer_bound(value)?;
        if bound == i64::MIN {
            return Err(XgrammarError::parse("exclusiveMaximum would cause integer underflow"));
        }
        spec.exclusive_maximum = Some(bound);
    }
    let (start, end) = spec.effective_range();
    let (low, high) = (start.unwrap_or(i64::MIN), end.unwrap_or(i64::MAX));
    if low > high {
        return err("Invalid range: minimum greater than maximum");
    }
    if let Some(step) = spec.multiple_of {
        let bounded_below = spec.minimum.is_some() || spec.exclusive_minimum.is_some();
        let bounded_above = spec.maximum.is_some() || spec.exclusive_maximum.is_some();
        if bounded_below || bounded_above {
            if !bounded_below || !bounded_above || range_wider_than(low, high, MULTIPLE_OF_RANGE_WIDTH_MAX) {
                // "range + multipleOf combination not yet supported; ignoring multipleOf"
                spec.multiple_of = None;
                return Ok(spec);
            }
            if !(low..=high).any(|value| value % step == 0) {
                return err("range contains no multipleOf value");
            }
        }
    }
    Ok(spec)
}

/// Whether `end - start + 1 > cap`, without overflowing.
fn range_wider_than(start: i64, end: i64, cap: i64) -> bool {
    (end as i128) - (start as i128) + 1 > cap as i128
}

fn parse_number(object: &Map<String, Value>) -> Result<NumberSpec, XgrammarError> {
    if let Some(value) = object.get("multipleOf") {
        if number_value(value)? <= 0.0 {
            return err("multipleOf must be greater than 0");
        }
        // Otherwise ignored for numbers (xgrammar warns).
    }
    let mut spec = NumberSpec::default();
    for (keyword, slot) in [
        ("minimum", &mut spec.minimum),
        ("maximum", &mut spec.maximum),
        ("exclusiveMinimum", &mut spec.exclusive_minimum),
        ("exclusiveMaximum", &mut spec.exclusive_maximum),
    ] {
        if let Some(value) = object.get(keyword) {
            *slot = Some(number_value(value)?);
        }
    }
    let empty = || err("Invalid range: empty range");
    let conflicts = |low: Option<f64>, high: Option<f64>, strict: bool| match (low, high) {
        (Some(low), Some(high)) => {
            if strict {
                low >= high
            } else {
                low > high
            }
        }
        _ => false,
    };
    if conflicts(spec.minimum, spec.maximum, false)
        || conflicts(spec.minimum, spec.exclusive_maximum, true)
        || conflicts(spec.exclusive_minimum, spec.maximum, true)
        || conflicts(spec.exclusive_minimum, spec.exclusive_maximum, true)
    {
        return empty();
    }
    Ok(spec)
}

fn string_keyword(object: &Map<String, Value>, keyword: &str) -> Result<Option<String>, XgrammarError> {
    match object.get(keyword) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(XgrammarError::NotAString),
    }
}

/// The value of a JSON integer that fits int64.
fn int_value(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => match classify(n) {
            JsonNumber::Int(i) => Some(i),
            JsonNumber::Double(_) => None,
        },
        _ => None,
    }
}

/// An int64 keyword (`<keyword> must be an integer` otherwise).
fn int_keyword(object: &Map<String, Value>, keyword: &str) -> Result<Option<i64>, XgrammarError> {
    match object.get(keyword) {
        None => Ok(None),
        Some(Value::Number(n)) => match classify(n) {
            JsonNumber::Int(i) => Ok(Some(i)),
            JsonNumber::Double(_) => err(format!("{keyword} must be an integer")),
        },
        Some(_) => err(format!("{keyword} must be an integer")),
    }
}

fn parse_string(object: &Map<String, Value>) -> Result<StringSpec, XgrammarError> {
    let format = string_keyword(object, "format")?;
    let pattern = string_keyword(object, "pattern")?;
    // Counts are C++ ints: a lower bound past i32::MAX is refused, an upper
    // one means no bound; anything else is narrowed (wrapping).
    let min_length = match object.get("minLength").map(int_value) {
        None => 0,
        Some(Some(value)) if value <= i64::from(i32::MAX) => value as i32,
        Some(_) => return err("minLength must be an integer not exceeding 2147483647"),
    };
    let max_length = match object.get("maxLength").map(int_value) {
        None => -1,
        Some(Some(value)) if value > i64::from(i32::MAX) => -1,
        Some(Some(value)) => value as i32,
        Some(None) => return err("maxLength must be an integer"),
    };
    if max_length != -1 && min_length > max_length {
        return err(format!("minLength {min_length} is greater than maxLength {max_length}"));
    }
    Ok(StringSpec { format, pattern, min_length, max_length })
}
