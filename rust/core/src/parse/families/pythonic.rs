//! `pythonic` / `llama4_pythonic`: the whole output is a Python list of
//! keyword-argument calls, `[get_weather(city='Oslo'), f()]` (vLLM's
//! `PythonicToolParser` and `Llama4PythonicToolParser`).
//!
//! Streams follow vLLM's: the text so far is completed into valid Python
//! (`make_valid_python`), parsed, and each call's JSON arguments diffed
//! with the completion's closers withheld. Where vLLM's stream cannot end
//! as its batch answer (text after `[` that can never be a call list), the
//! stream turns to content instead, as long as no call was streamed yet.

use std::sync::Arc;

use serde_json::json;

use crate::model::Model;
use crate::parse::family::{Family, ToolFamily, ToolParserFactory};
use crate::parse::Registry;
use crate::parse::pyast::{parse_call_list, CallList, NotCalls};
use crate::parse::call_stream::{whole_answer, CallStream};
use crate::parse::{random_tool_call_id, ChatContext, Extracted, FunctionCall, Ids, Texts, ToolParser};
use crate::wire::response::{Delta, DeltaToolCall};

const PY_START: &str = "<|python_start|>";
const PY_END: &str = "<|python_end|>";

/// What surrounds the calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Wrapper {
    /// `pythonic`: a Python list, `[f(a=1), g()]`.
    #[default]
    List,
    /// `llama4_pythonic`: the list inside `<|python_start|>` … `<|python_end|>`.
    Llama4,
    /// `olmo3` (`Olmo3PythonicToolParser`): one call per line inside
    /// `<function_calls>` … `</function_calls>`. Its streams follow vLLM's
    /// as they are (none of the list format's turns to content).
    Olmo3,
}

const OLMO3_START: &str = "<function_calls>";
const OLMO3_END: &str = "</function_calls>";

/// Olmo 3's calls as a Python list: its non-blank lines, stripped, joined
/// by `", "` inside `[` `]`.
fn olmo3_list(text: &str) -> String {
    let lines: Vec<&str> = py_splitlines(text).into_iter().map(py_strip).filter(|l| !l.is_empty()).collect();
    format!("[{}]", lines.join(", "))
}

/// Python's `str.splitlines()` (without the line ends).
fn py_splitlines(text: &str) -> Vec<&str> {
    let is_break = |c: char| matches!(c, '\n' | '\r' | '\x0b' | '\x0c' | '\x1c' | '\x1d' | '\x1e' | '\u{85}' | '\u{2028}' | '\u{2029}');
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if is_break(c) {
            lines.push(&text[start..i]);
            start = i + c.len_utf8();
            if c == '\r' && chars.peek().is_some_and(|&(_, n)| n == '\n') {
                chars.next();
                start += 1;
            }
        }
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// Python's `str.strip()`.
fn py_strip(text: &str) -> &str {
    text.trim_matches(py_isspace)
}

#[derive(Default)]
pub struct PythonicParser {
    wrapper: Wrapper,
    /// vLLM's bookkeeping; `prev` is its placeholder once a call went out.
    calls: CallStream,
    /// The stream gave up on calls and passes text through as content.
    content_mode: bool,
    /// The text so far, for the end-of-stream check.
    text: String,
    /// The last step had no text and no ids: a held stop token.
    after_held: bool,
}

impl PythonicParser {
    pub fn new(wrapper: Wrapper) -> Self {
        PythonicParser { wrapper, ..Default::default() }
    }

    /// A tool delta was returned.
    fn called(&self) -> bool {
        !self.calls.prev.is_empty()
    }

    /// vLLM sets `prev_tool_call_arr = [{"arguments": {}}]` then.
    fn mark_called(&mut self) {
        if !self.called() {
            self.calls.prev = vec![json!({"arguments": {}})];
        }
    }

    /// The batch input as a Python list, its wrapper removed.
    fn unwrap_batch(&self, text: &str) -> String {
        match self.wrapper {
            Wrapper::Llama4 => match text.strip_prefix(PY_START) {
                Some(rest) => rest.replace(PY_END, ""),
                None => text.to_string(),
            },
            Wrapper::Olmo3 => {
                // `<function_calls>(.*?)</function_calls>`, stripped.
                let inner = text.find(OLMO3_START).and_then(|i| {
                    let body = &text[i + OLMO3_START.len()..];
                    body.find(OLMO3_END).map(|j| py_strip(&body[..j]))
                });
                olmo3_list(inner.unwrap_or(text))
            }
            Wrapper::List => text.to_string(),
        }
    }

    fn starts_calls(&self, text: &str) -> bool {
        match self.wrapper {
            Wrapper::List => text.starts_with('['),
            Wrapper::Llama4 => text.starts_with('[') || text.starts_with(PY_START),
            // Its tag may not have arrived whole yet.
            Wrapper::Olmo3 => text.starts_with('<'),
        }
    }

    /// One streaming step of vLLM's algorithm on the text so far.
    fn stream_calls(&mut self, current: &str) -> Result<Option<Delta>, NotCalls> {
        let mut current = current;
        let (start, end) = match self.wrapper {
            Wrapper::Llama4 => (PY_START, PY_END),
            Wrapper::Olmo3 => (OLMO3_START, OLMO3_END),
            Wrapper::List => ("", ""),
        };
        if self.wrapper != Wrapper::List {
            current = current.strip_prefix(start).unwrap_or(current);
            if current.ends_with(end) {
                current = current.rfind(end).map_or(current, |i| &current[..i]);
            }
        }
        let Some((mut valid, added)) = make_valid_python(current)? else { return Ok(None) };
        // Olmo 3's completion closes the last call's `)` (no list); the list
        // format's closes `)]`.
        let closer = if self.wrapper == Wrapper::Olmo3 {
            valid = olmo3_list(&valid);
            ")"
        } else {
            ")]"
        };
        let list = parse_call_list(&valid)?;
        if added.contains('}') && list.has_set {
            return Ok(None);
        }
        let count = list.calls.len();
        let mut deltas = Vec::new();
        for (index, call) in list.calls.into_iter().enumerate() {
            if (index as i64) < self.calls.current {
                continue;
            }
            self.calls.current = index as i64;
            if self.calls.streamed.len() == index {
                self.calls.streamed.push(String::new());
            }
            let complete = index + 1 < count || !added.contains(closer);
            if complete {
                self.calls.current += 1;
            }
            let mut withheld = String::new();
            if !complete {
                let closers: Vec<char> = added.chars().collect();
                let kept = closers.len() - closer.len();
                withheld = closers[..kept].iter().collect();
                // The call's own `)` becomes the JSON object's `}`.
                if closers[kept] == ')' {
                    withheld.push('}');
                }
                withheld = withheld.replace('\'', "\"");
            }
            let args = call.arguments.dumps()?;
            // `compute_tool_delta` raises when the closers do not line up.
            let Some(args) = args.strip_suffix(withheld.as_str()) else { return Err(NotCalls) };
            let Some(sent) = self.calls.streamed.get(index) else { return Err(NotCalls) };
            if sent.is_empty() {
                self.calls.streamed[index] = args.to_string();
                let id = random_tool_call_id();
                deltas.push(DeltaToolCall::opening(index as i64, id, call.name, Some(args.to_string())));
            } else {
                let diff: String = args.chars().skip(sent.chars().count()).collect();
                if !diff.is_empty() {
                    deltas.extend(self.calls.send_args(index, diff));
                }
            }
        }
        if !deltas.is_empty() {
            self.mark_called();
            return Ok(Some(Delta::tool_calls(deltas)));
        }
        if added.is_empty() && self.calls.current > 0 {
            // vLLM's empty delta once the calls are done.
            return Ok(Some(Delta::content("")));
        }
        Ok(None)
    }
}

impl PythonicParser {
    /// `extract_tool_calls`: the regex gate, then `ast.parse`.
    fn batch(&self, text: &str) -> Extracted {
        let original = text;
        let text = self.unwrap_batch(text);
        let not_called = |text: String| {
            // Olmo 3 answers with the text as the model wrote it.
            let content = if self.wrapper == Wrapper::Olmo3 { original.to_string() } else { text };
            Extracted { tools_called: false, calls: Vec::new(), content: Some(content) }
        };
        if batch_pattern(&text) != Pattern::Match {
            return not_called(text);
        }
        let calls = parse_call_list(&text).and_then(|CallList { calls, .. }| {
            calls
                .into_iter()
                .map(|c| Ok(FunctionCall { id: None, name: c.name, arguments: c.arguments.dumps()? }))
                .collect::<Result<Vec<_>, NotCalls>>()
        });
        match calls {
            Ok(calls) => Extracted { tools_called: true, calls, content: None },
            Err(NotCalls) => not_called(text),
        }
    }
}

impl ToolParser for PythonicParser {
    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    fn extract_tool_calls(&self, text: &str, _ctx: &ChatContext) -> Extracted {
        self.batch(text)
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, ids: &Ids, _ctx: &ChatContext) -> Option<Delta> {
        self.text = t.current.to_string();
        if self.content_mode || !self.starts_calls(t.current) {
            return Some(Delta::content(t.delta));
        }
        if t.delta.is_empty() && (ids.delta.is_empty() || self.after_held) {
            // A stop token derender holds back (or then drops) is text in
            // vLLM's stream, where it makes the rest unparseable.
            self.after_held = true;
            return None;
        }
        self.after_held = false;
        let list_format = self.wrapper != Wrapper::Olmo3;
        if list_format && !self.called() && batch_pattern(&self.unwrap_batch(t.current)) == Pattern::Never {
            // Batch will answer with the text as content: stream it so.
            self.content_mode = true;
            return Some(Delta::content(t.current));
        }
        self.stream_calls(t.current).ok().flatten()
    }

    /// `get_remaining_unstreamed_args` with vLLM's placeholder
    /// `prev_tool_call_arr = [{"arguments": {}}]`.
    fn remaining_unstreamed_args(&mut self) -> String {
        self.calls.remaining()
    }

    /// At the end, a stream that streamed nothing gives what batch gives.
    fn finish_streaming(&mut self) -> Option<Delta> {
        let olmo3 = self.wrapper == Wrapper::Olmo3;
        if olmo3 || self.content_mode || self.called() || !self.starts_calls(&self.text) {
            return None;
        }
        let mut answer = self.batch(&self.text);
        if !answer.tools_called {
            // Chat serving keeps the text as generated when no call is
            // read, not the parser's content (Llama 4's is unwrapped).
            answer.content = Some(self.text.clone());
        }
        let delta = whole_answer(answer);
        if delta.as_ref().is_some_and(|d| !d.tool_calls.is_empty()) {
            self.mark_called();
        }
        delta
    }
}

/// How far the text matches vLLM's `TOOL_CALL_REGEX` (`re.match`, so a
/// prefix match).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pattern {
    Match,
    /// More text could still make it match.
    Open,
    /// No continuation can match.
    Never,
}

/// The regex reads `[` then calls `name(...)`: empty calls joined by
/// `,\s*` (while every call so far had one) or `\s*`; once a call has a
/// `name=` argument, `.*` lets anything follow until a `)\s*]`.
fn batch_pattern(text: &str) -> Pattern {
    let c: Vec<char> = text.chars().collect();
    let n = c.len();
    let word = |mut i: usize| {
        while i < n && (c[i] == '_' || c[i].is_alphanumeric()) {
            i += 1;
        }
        i
    };
    let spaces = |mut i: usize| {
        while i < n && py_isspace(c[i]) {
            i += 1;
        }
        i
    };
    match c.first() {
        None => return Pattern::Open,
        Some('[') => {}
        Some(_) => return Pattern::Never,
    }
    let mut i = 1;
    let mut comma_joined = true;
    loop {
        // A call name (`[a-zA-Z]+\w*`) and `(`.
        if i == n {
            return Pattern::Open;
        }
        if !c[i].is_ascii_alphabetic() {
            return Pattern::Never;
        }
        i = word(i + 1);
        if i == n {
            return Pattern::Open;
        }
        if c[i] != '(' {
            return Pattern::Never;
        }
        i += 1;
        if i == n {
            return Pattern::Open;
        }
        if c[i] != ')' {
            // `name=` then anything up to `)\s*]`.
            if !c[i].is_ascii_alphabetic() {
                return Pattern::Never;
            }
            i = word(i + 1);
            if i == n {
                return Pattern::Open;
            }
            if c[i] != '=' {
                return Pattern::Never;
            }
            let closed = (i + 1..n).any(|j| c[j] == ')' && spaces(j + 1) < n && c[spaces(j + 1)] == ']');
            return if closed { Pattern::Match } else { Pattern::Open };
        }
        i += 1;
        let j = spaces(i);
        if j == n {
            return Pattern::Open;
        }
        if c[j] == ']' {
            return Pattern::Match;
        }
        if c[j] == ',' && j == i && comma_joined {
            i = spaces(j + 1);
        } else {
            comma_joined = false;
            i = j;
        }
    }
}

/// Python's `str.isspace` (what `\s` and `rstrip` use).
fn py_isspace(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// vLLM's `make_valid_python`: close open brackets and quotes of the text
/// so far. `Ok(None)` = too incomplete; `Err` = mismatched brackets.
pub(super) fn make_valid_python(text: &str) -> Result<Option<(String, String)>, NotCalls> {
    let chars: Vec<char> = text.chars().collect();
    let mut stack: Vec<char> = Vec::new();
    for (index, &ch) in chars.iter().enumerate() {
        if let Some(&q @ ('\'' | '"')) = stack.last() {
            if ch == q && !escaped(&chars, index) {
                stack.pop();
            }
            continue;
        }
        match ch {
            '[' | '(' | '{' | '\'' | '"' => stack.push(ch),
            ']' | ')' | '}' => {
                let open = match ch {
                    ']' => '[',
                    ')' => '(',
                    _ => '{',
                };
                if stack.pop() != Some(open) {
                    return Err(NotCalls);
                }
            }
            _ => {}
        }
    }
    let mut text: Vec<char> = chars;
    while text.last().is_some_and(|&c| py_isspace(c)) {
        text.pop();
    }
    if matches!(text.last(), Some('=' | ':')) {
        return Ok(None);
    }
    // Counts of separators before the innermost open `{` / `(`.
    let before_last = |open: char, a: char, b: char| {
        let cut = text.iter().rposition(|&c| c == open).unwrap_or(text.len());
        let head = &text[..cut];
        (head.iter().filter(|&&c| c == a).count(), head.iter().filter(|&&c| c == b).count())
    };
    match stack.last() {
        Some('{') => {
            let (keys, values) = before_last('{', ':', ',');
            if keys <= values {
                return Ok(None);
            }
        }
        Some('(') => {
            let (names, values) = before_last('(', '=', ',');
            if names <= values {
                return Ok(None);
            }
        }
        _ => {}
    }
    if text.last() == Some(&',') {
        text.pop();
    }
    if stack.last() == Some(&'[') && !matches!(text.last(), Some('[' | ')')) {
        return Ok(None);
    }
    let added: String = stack
        .iter()
        .rev()
        .map(|&c| match c {
            '[' => ']',
            '(' => ')',
            '{' => '}',
            q => q,
        })
        .collect();
    let candidate: String = text.iter().collect::<String>() + &added;
    Ok(Some((candidate, added)))
}

/// `_is_escaped`: preceded by an odd number of backslashes.
fn escaped(chars: &[char], index: usize) -> bool {
    chars[..index].iter().rev().take_while(|&&c| c == '\\').count() % 2 == 1
}

// Registration: `pythonic` and `llama4_pythonic` (the list inside
// `<|python_start|>` … `<|python_end|>`).

pub(super) struct Pythonic(pub(super) Wrapper);

impl ToolParserFactory for Pythonic {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(PythonicParser::new(self.0))
    }
}

static PYTHONIC: ToolFamily =
    Family { names: &["pythonic"], needs: "", load: |_| Ok(Arc::new(Pythonic(Wrapper::List))) };

static LLAMA4_PYTHONIC: ToolFamily =
    Family { names: &["llama4_pythonic"], needs: "", load: |_| Ok(Arc::new(Pythonic(Wrapper::Llama4))) };

pub(super) fn register(registry: &mut Registry) {
    registry.tool_family(&PYTHONIC);
    registry.tool_family(&LLAMA4_PYTHONIC);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> ChatContext {
        ChatContext::from_request(&serde_json::Map::new(), &Default::default())
    }

    /// Stream `pieces` and assemble (content, [(name, args)]).
    fn stream(pieces: &[&str]) -> (String, Vec<(String, String)>) {
        let mut p = PythonicParser::new(Wrapper::List);
        let mut text = String::new();
        let (mut content, mut calls) = (String::new(), Vec::<(String, String)>::new());
        let n = pieces.len();
        for (k, piece) in pieces.iter().enumerate() {
            let previous = text.clone();
            text.push_str(piece);
            let t = Texts { previous: &previous, current: &text, delta: piece };
            let ids = Ids { previous: &[], current: &[], delta: &[] };
            let mut deltas: Vec<Delta> = p.extract_tool_calls_streaming(&t, &ids, &ctx()).into_iter().collect();
            if k + 1 == n {
                deltas.extend(p.finish_streaming());
            }
            for d in deltas {
                content.push_str(d.content.as_deref().unwrap_or(""));
                for tc in d.tool_calls {
                    let f = tc.function.expect("function");
                    if tc.index as usize == calls.len() {
                        calls.push((f.name.unwrap_or_default(), String::new()));
                    }
                    calls[tc.index as usize].1.push_str(f.arguments.as_deref().unwrap_or(""));
                }
            }
        }
        (content, calls)
    }

    fn batch(text: &str) -> (String, Vec<(String, String)>) {
        let e = PythonicParser::new(Wrapper::List).extract_tool_calls(text, &ctx());
        (e.content.unwrap_or_default(), e.calls.into_iter().map(|c| (c.name, c.arguments)).collect())
    }

    #[test]
    fn batch_reads_call_lists() {
        assert_eq!(
            batch("[get_weather(city='Oslo', unit=\"c\"), f()]"),
            (
                String::new(),
                vec![("get_weather".into(), r#"{"city": "Oslo", "unit": "c"}"#.into()), ("f".into(), "{}".into())]
            )
        );
        for text in [
            " [f(a=1)]",
            "[\n f(a=1)]",
            "[f(a=1)] and more",
            "[a.b(c=1)]",
            "[f('x')]",
            "[f(a=x)]",
            "[]",
            "[1] note",
            "[f(a=",
            "[f(), ]",
        ] {
            assert_eq!(batch(text), (text.to_string(), vec![]), "{text}");
        }
    }

    #[test]
    fn pattern_prefixes() {
        assert_eq!(batch_pattern("[f(), g(a=1)]"), Pattern::Match);
        assert_eq!(batch_pattern("[f()  g()]"), Pattern::Match);
        assert_eq!(batch_pattern("[f() , g()]"), Pattern::Never);
        assert_eq!(batch_pattern("[get_wea"), Pattern::Open);
        assert_eq!(batch_pattern("[f(a=1) ]"), Pattern::Match);
        assert_eq!(batch_pattern("[f(a=1"), Pattern::Open);
        assert_eq!(batch_pattern("[ f"), Pattern::Never);
    }

    #[test]
    fn stream_withholds_closers() {
        let text = "[get_weather(city='Tokyo', unit='c'), search(q=\"x\", k=[1, 2], o={'a': None})]";
        let pieces: Vec<String> = text.chars().map(String::from).collect();
        let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
        assert_eq!(stream(&refs), batch(text));
    }

    /// The same text in one piece, char by char and split anywhere in two
    /// assembles the same (where no call is streamed before batch's answer
    /// is known, or the calls are well-formed).
    #[test]
    fn chunk_invariance() {
        for text in [
            "[get_weather(city='Oslo', unit='celsius')]",
            "[f(a=-1.5, b=True, c=None), g(), h(x={'k': [1, {'z': 'w'}]})]",
            "[book_flight(origin='Paris', options={'seat': 'aisle', 'meal': None, 'bags': [1, 2]}), calculate(expression=\"2 * (3 + 4)\")]",
            "[send_email(to=['a@example.com'], subject='It\\'s \"done\"', body=\"Line 1\\nLine 2 \\\\ end\")]",
            "[\n    f(a=1)\n]",
            "[1] See the footnote.",
            "[get_weather(city=Paris)]",
            "[get_weather(city=",
            "plain text [f(a=1)]",
        ] {
            let expected = batch(text);
            let chars: Vec<String> = text.chars().map(String::from).collect();
            let refs: Vec<&str> = chars.iter().map(String::as_str).collect();
            assert_eq!(stream(&[text]), expected, "whole {text}");
            assert_eq!(stream(&refs), expected, "chars {text}");
            for (i, _) in text.char_indices().skip(1) {
                assert_eq!(stream(&[&text[..i], &text[i..]]), expected, "split {i} {text}");
            }
        }
    }

    #[test]
    fn make_valid_python_completes() {
        assert_eq!(make_valid_python("[f(a='x").unwrap(), Some(("[f(a='x')]".into(), "')]".into())));
        assert_eq!(make_valid_python("[f(a=").unwrap(), None);
        assert_eq!(make_valid_python("[f(").unwrap(), None);
        assert_eq!(make_valid_python("[f(a=1, ").unwrap(), None);
        assert_eq!(make_valid_python("[f(a={'k': 1, ").unwrap(), None);
        assert!(make_valid_python("[f(a=1]").is_err());
    }
}

crate::impl_snapshot!(PythonicParser { content_mode, text, after_held } nested { calls });
