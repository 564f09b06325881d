//! Structural tags derived from a response template
//! (`vllm/parser/response_template_grammar.py`): calls to the request's
//! functions in the tool field's format, the answer field, and the
//! reasoning before them, for the checkpoints (Beam) whose parser
//! constrains output with the template's own grammar. Formats are plain
//! dicts in vLLM's key order; vLLM `json.dumps` them as they are.

mod arguments;
mod literals;
mod partial;
mod xgrammar;

pub use self::xgrammar::{json_compiles, regex_compiles};

use serde_json::{Map, Value};

use self::arguments::arguments_format;
use self::literals::{continuing, escape, literals, nonempty_start, other_names, split_group};
use super::template::{Delim, Field, Template};

/// vLLM's `ValueError` for a name the template cannot spell (a 400 on
/// the request's tools).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EncodeError(pub String);

fn seq(elements: Vec<Value>) -> Value {
    serde_json::json!({"type": "sequence", "elements": elements})
}

/// `_one_of`: one format as itself, more as an `or`.
fn one_of(mut formats: Vec<Value>) -> Value {
    if formats.len() == 1 {
        return formats.pop().unwrap_or(Value::Null);
    }
    serde_json::json!({"type": "or", "elements": formats})
}

fn optional(content: Value) -> Value {
    serde_json::json!({"type": "optional", "content": content})
}

fn tag(begin: &str, content: Value, end: Value) -> Value {
    serde_json::json!({"type": "tag", "begin": begin, "content": content, "end": end})
}

fn const_string(value: &str) -> Value {
    serde_json::json!({"type": "const_string", "value": value})
}

fn const_strings(values: &[String]) -> Value {
    one_of(values.iter().map(|v| const_string(v)).collect())
}

/// `_ANY_TEXT`.
fn any_text() -> Value {
    serde_json::json!({"type": "any_text"})
}

/// `re.fullmatch` of a delimiter's regex (DOTALL, as templates compile).
fn delim_fullmatch(delim: &Delim, text: &str, pos: usize) -> bool {
    crate::pycompat::re::fullmatch_at(&delim.pattern, text, pos, true) == Some(true)
}

/// `message_start_anchors`: the strings the assistant message starts
/// after, if literal.
pub fn message_start_anchors(t: &Template) -> Vec<String> {
    match &t.anchor.literals {
        Some(l) if !l.is_empty() => l.clone(),
        _ => literals(&t.anchor.pattern, false, false).unwrap_or_default(),
    }
}

/// `_openers`: the field's openers, with the rests of those that continue
/// a message-start anchor.
pub fn openers(field: &Field, message_start: Option<&[String]>) -> Option<Vec<String>> {
    let open = field.open.as_ref();
    let found = match open {
        Some(d) if d.literals.as_ref().is_none_or(Vec::is_empty) => {
            literals(&d.pattern, message_start.is_some(), false)
        }
        Some(d) => d.literals.clone(),
        None => None,
    };
    continuing(found.filter(|f| !f.is_empty()), message_start, |rest, i| {
        open.is_some_and(|d| delim_fullmatch(d, rest, i))
    })
}

/// `_closers`: literal closers, none when the field has no closer, `None`
/// when they cannot be derived.
fn closers(field: &Field) -> Option<Vec<String>> {
    match &field.close {
        None => Some(Vec::new()),
        Some(d) => match &d.literals {
            Some(l) if !l.is_empty() => Some(l.clone()),
            _ => literals(&d.pattern, false, false),
        },
    }
}

/// `_thinking_format`: the reasoning, holding a character if `nonempty`.
fn thinking_format(thinking: &Field, message_start: Option<&[String]>, nonempty: bool) -> Option<Value> {
    let openers = openers(thinking, message_start).filter(|o| !o.is_empty())?;
    let closers = closers(thinking).filter(|c| !c.is_empty())?;
    let text = if nonempty {
        seq(vec![serde_json::json!({"type": "regex", "pattern": nonempty_start(&closers)}), any_text()])
    } else {
        any_text()
    };
    Some(one_of(openers.iter().map(|o| tag(o, text.clone(), Value::from(closers.clone()))).collect()))
}

/// `_answer_text`: text that cannot close the answer early (or the
/// request's own format), then the closer, which a stop token may replace.
fn answer_text(closers: &[String], content: Option<&Value>) -> Vec<Value> {
    let mut elements = vec![match content.filter(|c| crate::pycompat::truthy(c)) {
        Some(c) => c.clone(),
        None => serde_json::json!({"type": "any_text", "excludes": closers}),
    }];
    if !closers.is_empty() {
        elements.push(optional(const_strings(closers)));
    }
    elements
}

/// `_reply_format`: the answer field holding `content` (or free text).
fn reply_format(answer: &Field, message_start: Option<&[String]>, content: Option<&Value>) -> Option<Value> {
    let openers = openers(answer, message_start).filter(|o| !o.is_empty())?;
    let closers = closers(answer)?;
    let mut elements = vec![const_strings(&openers)];
    elements.extend(answer_text(&closers, content));
    Some(seq(elements))
}

/// `answer_rest_structural_tag`: the rest of an answer already open.
pub fn answer_rest_structural_tag(answer: &Field) -> Option<Value> {
    let closers = closers(answer)?;
    Some(serde_json::json!({"type": "structural_tag", "format": seq(answer_text(&closers, None))}))
}

/// `_names_function_by_opener`: the opener captures the function's name
/// and the body is its arguments.
fn names_function_by_opener(field: &Field) -> bool {
    let function = field.transform.as_ref().and_then(|t| t.get("function"));
    field.open.as_ref().is_some_and(|d| d.names.iter().any(|n| n == "name"))
        && !field.transform_each
        && function.is_some_and(|f| {
            f.is_object()
                && f.get("name") == Some(&Value::from("{name}"))
                && f.get("arguments") == Some(&Value::from("{content}"))
        })
}

/// `_call_opener`: the opener with the function's name, its text before
/// the name spelled out as literals at the message start.
fn call_opener(opener: &(String, String, String), name: &str, message_start: Option<&[String]>) -> String {
    let (before, _, after) = opener;
    let mut before = before.clone();
    if let (Some(start), false) = (message_start, before.is_empty()) {
        // Text before a name inside a group is no pattern of its own.
        if let Some(found) = literals(&before, true, false).filter(|l| !l.is_empty()) {
            let pattern = before.clone();
            let found = continuing(Some(found), Some(start), |rest, i| {
                crate::pycompat::re::fullmatch_at(&pattern, rest, i, false) == Some(true)
            });
            before =
                format!("(?:{})", found.unwrap_or_default().iter().map(|l| escape(l)).collect::<Vec<_>>().join("|"));
        }
    }
    format!("{before}{name}{after}")
}

/// What `tool_call_structural_tag` derives besides the calls.
#[derive(Default, Clone, Copy)]
pub struct TagOptions<'a> {
    pub parallel_tool_calls: bool,
    pub thinking: Option<&'a Field>,
    /// The answer the model may give instead of calls.
    pub answer: Option<&'a Field>,
    /// The request's own output format, for the answer.
    pub answer_format: Option<&'a Value>,
    /// The message-start anchors, when the tag covers the whole message.
    pub message_start: Option<&'a [String]>,
    pub requires_reasoning: bool,
    pub sorted_arguments: bool,
    pub strict_arguments: bool,
}

/// `tool_call_structural_tag`: calls to `functions` (OpenAI function
/// definitions) in the tool field's format, or the answer, after the
/// reasoning. `Ok(None)`: the template's format cannot be derived.
pub fn tool_call_structural_tag(
    field: Option<&Field>,
    functions: &[&Map<String, Value>],
    opts: &TagOptions,
) -> Result<Option<Value>, EncodeError> {
    if functions.is_empty() {
        let Some(answer) = opts.answer else { return Ok(None) };
        let reply = |start: Option<&[String]>| reply_format(answer, start, opts.answer_format).map(|r| vec![r]);
        return Ok(structural_tag(&reply, opts));
    }
    let Some(field) = field.filter(|f| names_function_by_opener(f)) else { return Ok(None) };
    let Some(opener) = field.open.as_ref().and_then(|d| split_group(&d.pattern, "name")) else { return Ok(None) };
    let Some(closer_literals) = closers(field) else { return Ok(None) };
    let default_parameters: Map<String, Value> =
        serde_json::from_value(serde_json::json!({"type": "object", "properties": {}})).unwrap_or_default();
    let (mut arguments, mut enforced) = (Vec::new(), Vec::new());
    for function in functions {
        // Like the generic JSON schema, a function without parameters takes none.
        let parameters = match function.get("parameters") {
            Some(Value::Object(p)) if !p.is_empty() => p,
            _ => &default_parameters,
        };
        let strict = function.get("strict").is_some_and(crate::pycompat::truthy);
        let mut function_arguments = None;
        if strict || opts.strict_arguments {
            match arguments_format(field, parameters, true, opts.sorted_arguments) {
                Ok(a) => function_arguments = a,
                Err(e) if strict => return Err(e),
                Err(_) => {}
            }
        }
        enforced.push(function_arguments.is_some());
        if function_arguments.is_none() && !strict {
            function_arguments = arguments_format(field, parameters, false, false)?;
        }
        let Some(function_arguments) = function_arguments else { return Ok(None) };
        arguments.push(function_arguments);
    }
    let mut names = Vec::new();
    for function in functions {
        let name = function.get("name").and_then(Value::as_str).unwrap_or_default();
        if crate::pycompat::re::fullmatch(&opener.1, name) != Some(true) {
            return Err(EncodeError(format!(
                "tool name {} cannot be encoded in tool calls",
                crate::pycompat::repr::repr_str(name)
            )));
        }
        names.push(escape(name));
    }
    if opts.answer.is_some() {
        let enforced_names: Vec<&str> = functions
            .iter()
            .zip(&enforced)
            .filter(|(_, e)| **e)
            .map(|(f, _)| f.get("name").and_then(Value::as_str).unwrap_or_default())
            .collect();
        let others = other_names(&opener.1, &enforced_names);
        let loose = arguments_format(field, &Map::new(), false, false)?;
        if let (Some(others), Some(loose)) = (others, loose) {
            // Calls to any function whose schema is not enforced take any arguments.
            let keep = |v: Vec<Value>| -> Vec<Value> {
                v.into_iter().zip(&enforced).filter(|(_, e)| **e).map(|(x, _)| x).collect()
            };
            names = names.into_iter().zip(&enforced).filter(|(_, e)| **e).map(|(n, _)| n).collect();
            names.push(format!("(?:{others})"));
            arguments = keep(arguments);
            arguments.push(loose);
        }
    }
    let closers = (!closer_literals.is_empty()).then(|| const_strings(&closer_literals));
    let call = |start: Option<&[String]>| -> Value {
        one_of(
            names
                .iter()
                .zip(&arguments)
                .map(|(name, args)| {
                    let opener = serde_json::json!({"type": "regex", "pattern": call_opener(&opener, name, start)});
                    seq(vec![opener, args.clone()])
                })
                .collect(),
        )
    };
    let output = |start: Option<&[String]>| -> Option<Vec<Value>> {
        let mut elements = vec![call(start)];
        if opts.parallel_tool_calls && field.repeats {
            let repeated = match &closers {
                Some(c) => seq(vec![c.clone(), call(None)]),
                None => call(None),
            };
            elements.push(serde_json::json!({"type": "star", "content": repeated}));
        }
        if let Some(c) = &closers {
            // EOS can terminate a call without writing its closer.
            elements.push(optional(c.clone()));
        }
        if let Some(answer) = opts.answer {
            let reply = reply_format(answer, start, opts.answer_format)?;
            elements = vec![one_of(vec![seq(elements), reply])];
        }
        Some(elements)
    };
    Ok(structural_tag(&output, opts))
}

/// The elements after the reasoning, from the message start if given.
type Output<'a> = dyn Fn(Option<&[String]>) -> Option<Vec<Value>> + 'a;

/// `_structural_tag`: the output after reasoning, from the first token at
/// the message start; the reasoning is optional unless required.
fn structural_tag(output: &Output, opts: &TagOptions) -> Option<Value> {
    let mut rest = output(None)?;
    let think = match opts.thinking {
        Some(thinking) => Some(thinking_format(thinking, opts.message_start, opts.requires_reasoning)?),
        None => None,
    };
    let wrap = |format: Value| serde_json::json!({"type": "structural_tag", "format": format});
    let Some(message_start) = opts.message_start else {
        if let Some(think) = think {
            rest.insert(0, optional(think));
        }
        return Some(wrap(seq(rest)));
    };
    if let (Some(think), true) = (&think, opts.requires_reasoning) {
        rest.insert(0, think.clone());
        return Some(wrap(seq(rest)));
    }
    let start = output(Some(message_start))?;
    let mut format = seq(start);
    if let Some(think) = think {
        rest.insert(0, think);
        format = one_of(vec![seq(rest), format]);
    }
    Some(wrap(format))
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use serde_json::{json, Value};

    use super::*;
    use crate::parse::families::response_template::{serving_template, CONTENT, THINKING, TOOLS};

    /// The Beam fixture's serving template.
    fn beam() -> Template {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/models/beam/tokenizer_config.json");
        let config: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("json");
        serving_template(&config["response_template"]).expect("template")
    }

    fn dumps(v: &Value) -> String {
        let opts = crate::pycompat::json::DumpOptions { ensure_ascii: true, ..Default::default() };
        crate::pycompat::json::dumps_with(v, &opts)
    }

    /// `tests/reference/beam_tags.jsonl.gz` (record_beam_tags.py): vLLM's own
    /// tags (or its `ValueError`) for varied tool schemas and options.
    #[test]
    fn tags_are_vllms_for_the_recorded_cases() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/reference/beam_tags.jsonl.gz");
        let mut text = String::new();
        flate2::read::GzDecoder::new(std::fs::File::open(path).expect("data file"))
            .read_to_string(&mut text)
            .expect("gzip");
        let t = beam();
        let anchors = message_start_anchors(&t);
        let (mut compared, mut failures) = (0, Vec::new());
        for line in text.lines() {
            let case: Value = serde_json::from_str(line).expect("case");
            let name = case["name"].as_str().unwrap_or_default();
            let got = if case["answer_rest"] == json!(true) {
                Ok(t.field(CONTENT).and_then(answer_rest_structural_tag))
            } else {
                let o = &case["options"];
                let flag = |key: &str| o.get(key).and_then(Value::as_bool).unwrap_or(true);
                let functions: Vec<&Map<String, Value>> =
                    case["functions"].as_array().into_iter().flatten().filter_map(Value::as_object).collect();
                let options = TagOptions {
                    parallel_tool_calls: flag("parallel_tool_calls"),
                    thinking: t.field(THINKING).filter(|_| flag("thinking")),
                    answer: t.field(CONTENT).filter(|_| flag("answer")),
                    answer_format: case.get("answer_format_dump").filter(|f| !f.is_null()),
                    message_start: flag("message_start").then_some(anchors.as_slice()),
                    requires_reasoning: flag("requires_reasoning"),
                    sorted_arguments: true,
                    strict_arguments: true,
                };
                tool_call_structural_tag(t.field(TOOLS), &functions, &options)
            };
            let got = match got {
                Ok(tag) => (tag.as_ref().map(dumps), None),
                Err(e) => (None, Some(e.0)),
            };
            let want = (case["tag"].as_str().map(str::to_string), case["error"].as_str().map(str::to_string));
            compared += 1;
            if got != want {
                failures.push(format!("{name}:\n  got  {got:?}\n  want {want:?}"));
            }
        }
        assert!(compared >= 150, "only {compared} cases");
        assert!(failures.is_empty(), "{} of {compared} differ:\n{}", failures.len(), failures.join("\n"));
    }

    #[test]
    fn openers_continue_the_message_start() {
        let t = beam();
        let anchors = message_start_anchors(&t);
        assert_eq!(anchors, ["<|start|>assistant"]);
        let thinking = t.field(THINKING).expect("thinking");
        assert_eq!(openers(thinking, Some(&anchors)), Some(vec!["<|channel|>analysis<|message|>".to_string()]));
        // The call's prefix before its name becomes literals at the message
        // start, with the rest of the one that continues the anchor.
        let tools = t.field(TOOLS).expect("tools");
        let opener = split_group(&tools.open.as_ref().expect("opener").pattern, "name").expect("group");
        let rest = r"<\|channel\|>analysis(?: <\|constrain\|>xml)?<\|message\|>";
        assert_eq!(call_opener(&opener, "f", Some(&anchors)), format!(r"(?:to=|<\|start\|>assistant to=| to=)f{rest}"));
        assert_eq!(call_opener(&opener, "f", None), format!(r"(?:<\|start\|>assistant )?to=f{rest}"));
    }
}
