//! Just enough of Python's `ast.parse` for pythonic tool calls: a module
//! whose first statement is a list display of calls, with the call
//! arguments read as literal values (vLLM's `get_parameter_value`).
//!
//! Expressions outside the literal subset are still parsed (as `Other`) so
//! that valid Python is told apart from a syntax error; constructs this
//! parser does not know (lambda, walrus, compound statements) count as
//! syntax errors, which only matters in text that is not a tool call.

use super::pyjson::dumps_str;
use crate::pyrepr::repr_float;

/// A value `get_parameter_value` returns (what `json.dumps` then writes).
#[derive(Debug, Clone, PartialEq)]
pub enum PyValue {
    None,
    Bool(bool),
    /// Decimal digits with an optional leading `-` (Python ints are unbounded).
    Int(String),
    Float(f64),
    Str(String),
    List(Vec<PyValue>),
    /// Insertion-ordered; keys are constants.
    Dict(Vec<(PyValue, PyValue)>),
}

/// One call of the list: dotted name and keyword arguments (a `**x`
/// argument has the key `None`, as in `ast.keyword.arg`).
#[derive(Debug, Clone, PartialEq)]
pub struct PyCall {
    pub name: String,
    pub arguments: PyValue,
}

/// Why the text is not a list of literal calls (all mean "not tool calls").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotCalls;

/// The parsed first statement: its calls, and whether a set display occurs
/// anywhere in the module (`make_valid_python` rejects completions with one).
#[derive(Debug, Clone, PartialEq)]
pub struct CallList {
    pub calls: Vec<PyCall>,
    pub has_set: bool,
}

/// `ast.parse(text)`, then `body[0]` as a list of calls converted with
/// `handle_single_tool`.
pub fn parse_call_list(text: &str) -> Result<CallList, NotCalls> {
    let mut p = Parser { s: text.chars().collect(), i: 0, depth: 0, has_set: false };
    let first = p.module()?;
    let Some(Node::List(items)) = first else { return Err(NotCalls) };
    let calls = items.iter().map(single_tool).collect::<Result<Vec<_>, _>>()?;
    Ok(CallList { calls, has_set: p.has_set })
}

impl PyValue {
    /// `json.dumps(value, ensure_ascii=False)`.
    pub fn dumps(&self) -> Result<String, NotCalls> {
        let mut out = String::new();
        self.write(&mut out)?;
        Ok(out)
    }

    fn write(&self, out: &mut String) -> Result<(), NotCalls> {
        match self {
            PyValue::None => out.push_str("null"),
            PyValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            PyValue::Int(d) => out.push_str(d),
            PyValue::Float(f) => out.push_str(&float_json(*f)),
            PyValue::Str(s) => out.push_str(&dumps_str(s)),
            PyValue::List(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    v.write(out)?;
                }
                out.push(']');
            }
            PyValue::Dict(entries) => {
                out.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    let key = match k {
                        PyValue::Str(s) => s.clone(),
                        PyValue::Int(d) => d.clone(),
                        PyValue::Float(f) => float_json(*f),
                        PyValue::Bool(b) => (if *b { "true" } else { "false" }).to_string(),
                        PyValue::None => "null".to_string(),
                        // json.dumps raises TypeError for other key types.
                        _ => return Err(NotCalls),
                    };
                    out.push_str(&dumps_str(&key));
                    out.push_str(": ");
                    v.write(out)?;
                }
                out.push('}');
            }
        }
        Ok(())
    }
}

fn float_json(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        (if f > 0.0 { "Infinity" } else { "-Infinity" }).into()
    } else {
        repr_float(f)
    }
}

/// Python dict-key equality: `1 == 1.0 == True`, strings by value.
fn key_id(k: &PyValue) -> String {
    match k {
        PyValue::None => "N".into(),
        PyValue::Bool(b) => format!("n{}", *b as u8),
        PyValue::Int(d) => format!("n{d}"),
        PyValue::Float(f) if f.fract() == 0.0 && f.abs() < 1e18 => format!("n{}", *f as i64),
        PyValue::Float(f) => format!("f{}", repr_float(*f)),
        PyValue::Str(s) => format!("s{s}"),
        _ => String::new(),
    }
}

/// Insert like a Python dict: a repeated key keeps its first position.
fn dict_insert(entries: &mut Vec<(PyValue, PyValue)>, k: PyValue, v: PyValue) {
    let id = key_id(&k);
    match entries.iter_mut().find(|(e, _)| key_id(e) == id) {
        Some(slot) => slot.1 = v,
        None => entries.push((k, v)),
    }
}

/// A constant literal as the AST holds it.
#[derive(Debug, Clone, PartialEq)]
enum Lit {
    None,
    Bool(bool),
    Int(String),
    Float(f64),
    Str(String),
    /// bytes, complex, Ellipsis: constants with no JSON form.
    Unsupported,
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    Const(Lit),
    Name(String),
    List(Vec<Node>),
    Tuple(Vec<Node>),
    Set(Vec<Node>),
    /// `None` key = `**x` unpacking.
    Dict(Vec<(Option<Node>, Node)>),
    Call {
        func: Box<Node>,
        keywords: Vec<(Option<String>, Node)>,
    },
    Attr(Box<Node>, String),
    /// `-x` / `+x`.
    Sign(bool, Box<Node>),
    /// An f-string: its text when it has no placeholders.
    FString(Option<String>),
    /// Any other valid expression.
    Other,
}

/// `handle_single_tool`.
fn single_tool(node: &Node) -> Result<PyCall, NotCalls> {
    let Node::Call { func, keywords } = node else { return Err(NotCalls) };
    let name = dotted_name(func)?;
    let mut args = Vec::new();
    for (k, v) in keywords {
        let key = k.clone().map_or(PyValue::None, PyValue::Str);
        dict_insert(&mut args, key, value(v)?);
    }
    Ok(PyCall { name, arguments: PyValue::Dict(args) })
}

fn dotted_name(node: &Node) -> Result<String, NotCalls> {
    match node {
        Node::Name(n) => Ok(n.clone()),
        Node::Attr(base, attr) => Ok(format!("{}.{attr}", dotted_name(base)?)),
        _ => Err(NotCalls),
    }
}

/// `get_parameter_value`.
fn value(node: &Node) -> Result<PyValue, NotCalls> {
    Ok(match node {
        Node::Const(lit) => match constant(lit) {
            Some(v) => v,
            None => return Err(NotCalls),
        },
        Node::Dict(entries) => {
            let mut out = Vec::new();
            for (k, v) in entries {
                let Some(Node::Const(lit)) = k else { return Err(NotCalls) };
                let key = constant(lit).ok_or(NotCalls)?;
                dict_insert(&mut out, key, value(v)?);
            }
            PyValue::Dict(out)
        }
        Node::List(items) | Node::Tuple(items) | Node::Set(items) => {
            PyValue::List(items.iter().map(value).collect::<Result<_, _>>()?)
        }
        Node::FString(Some(s)) => PyValue::Str(s.clone()),
        Node::Name(n) => match n.as_str() {
            "null" => PyValue::None,
            "true" => PyValue::Bool(true),
            "false" => PyValue::Bool(false),
            _ => return Err(NotCalls),
        },
        Node::Sign(negative, operand) => match value(operand)? {
            PyValue::Int(d) if *negative => PyValue::Int(negate(&d)),
            PyValue::Float(f) if *negative => PyValue::Float(-f),
            v @ (PyValue::Int(_) | PyValue::Float(_)) => v,
            _ => return Err(NotCalls),
        },
        _ => return Err(NotCalls),
    })
}

fn constant(lit: &Lit) -> Option<PyValue> {
    Some(match lit {
        Lit::None => PyValue::None,
        Lit::Bool(b) => PyValue::Bool(*b),
        Lit::Int(d) => PyValue::Int(d.clone()),
        Lit::Float(f) => PyValue::Float(*f),
        Lit::Str(s) => PyValue::Str(s.clone()),
        Lit::Unsupported => return None,
    })
}

fn negate(d: &str) -> String {
    match d.strip_prefix('-') {
        Some(rest) => rest.to_string(),
        None if d == "0" => d.to_string(),
        None => format!("-{d}"),
    }
}

const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
    "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

fn is_id_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_id_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

type PResult<T> = Result<T, NotCalls>;

struct Parser {
    s: Vec<char>,
    i: usize,
    /// Bracket depth: inside brackets newlines are whitespace.
    depth: usize,
    has_set: bool,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }

    fn at(&self, k: usize) -> Option<char> {
        self.s.get(self.i + k).copied()
    }

    /// Skip whitespace, comments and line continuations (newlines too
    /// inside brackets).
    fn skip(&mut self) {
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\x0c' => self.i += 1,
                '\n' | '\r' if self.depth > 0 => self.i += 1,
                '\\' if matches!(self.at(1), Some('\n' | '\r')) => {
                    let crlf = self.at(1) == Some('\r') && self.at(2) == Some('\n');
                    self.i += if crlf { 3 } else { 2 };
                }
                '#' => {
                    while self.peek().is_some_and(|c| c != '\n' && c != '\r') {
                        self.i += 1;
                    }
                }
                _ => break,
            }
        }
    }

    fn eat(&mut self, op: &str) -> bool {
        self.skip();
        let n = op.chars().count();
        if self.s.len() >= self.i + n && op.chars().zip(&self.s[self.i..]).all(|(a, b)| a == *b) {
            self.i += n;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, op: &str) -> PResult<()> {
        self.eat(op).then_some(()).ok_or(NotCalls)
    }

    /// The identifier or keyword at the cursor, without consuming it.
    fn word(&mut self) -> Option<String> {
        self.skip();
        if !self.peek().is_some_and(is_id_start) {
            return None;
        }
        let mut j = self.i;
        while self.s.get(j).copied().is_some_and(is_id_char) {
            j += 1;
        }
        Some(self.s[self.i..j].iter().collect())
    }

    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.word().as_deref() == Some(kw) {
            self.i += kw.chars().count();
            true
        } else {
            false
        }
    }

    /// The module: the first statement's expression (`None` when it is not
    /// an expression statement), and the rest checked for validity.
    fn module(&mut self) -> PResult<Option<Node>> {
        if matches!(self.peek(), Some(' ' | '\t' | '\x0c')) {
            return Err(NotCalls); // unexpected indent
        }
        let first = self.simple_statements()?;
        loop {
            self.skip();
            match self.peek() {
                None => return Ok(first),
                Some('\n' | '\r') => {
                    self.i += 1;
                    // A statement may not start indented.
                    let line = self.i;
                    self.skip();
                    if self.i > line && !matches!(self.peek(), None | Some('\n' | '\r' | '#')) {
                        return Err(NotCalls);
                    }
                    if matches!(self.peek(), None | Some('\n' | '\r')) {
                        continue;
                    }
                    self.simple_statements()?;
                }
                Some(_) => return Err(NotCalls),
            }
        }
    }

    /// `stmt (';' stmt)* [';']` up to the end of the line; returns the
    /// first statement's expression.
    fn simple_statements(&mut self) -> PResult<Option<Node>> {
        let first = self.simple_statement()?;
        while self.eat(";") {
            self.skip();
            if matches!(self.peek(), None | Some('\n' | '\r')) {
                break;
            }
            self.simple_statement()?;
        }
        self.skip();
        match self.peek() {
            None | Some('\n' | '\r') => Ok(first),
            _ => Err(NotCalls),
        }
    }

    /// An expression statement or plain assignment (`pass` too).
    fn simple_statement(&mut self) -> PResult<Option<Node>> {
        if self.eat_kw("pass") {
            return Ok(None);
        }
        let first = self.star_exprs()?;
        let mut assigned = false;
        while self.peek_assign() {
            if matches!(first, Node::List(_) | Node::Call { .. } | Node::Const(_)) && !assigned {
                // Only names, attributes, subscripts and tuples are targets here.
                return Err(NotCalls);
            }
            assigned = true;
            self.star_exprs()?;
        }
        Ok((!assigned).then_some(first))
    }

    fn peek_assign(&mut self) -> bool {
        self.skip();
        if self.peek() == Some('=') && self.at(1) != Some('=') {
            self.i += 1;
            return true;
        }
        false
    }

    /// `expr (',' expr)* [',']`: a tuple when a comma occurs.
    fn star_exprs(&mut self) -> PResult<Node> {
        let first = self.star_expr()?;
        if !self.peek_comma() {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat(",") {
            if !self.starts_expr() {
                break;
            }
            items.push(self.star_expr()?);
        }
        Ok(Node::Tuple(items))
    }

    fn peek_comma(&mut self) -> bool {
        self.skip();
        self.peek() == Some(',')
    }

    fn starts_expr(&mut self) -> bool {
        self.skip();
        match self.peek() {
            None => false,
            Some(c) if is_id_start(c) => {
                let w = self.word().unwrap_or_default();
                !KEYWORDS.contains(&w.as_str()) || matches!(w.as_str(), "None" | "True" | "False" | "not" | "await")
            }
            Some(c) => c.is_ascii_digit() || "([{'\"-+~.*".contains(c),
        }
    }

    fn star_expr(&mut self) -> PResult<Node> {
        self.skip();
        if self.peek() == Some('*') && self.at(1) != Some('*') {
            self.i += 1;
            self.bitor()?;
            return Ok(Node::Other);
        }
        self.expr()
    }

    /// `or_test ['if' or_test 'else' expr]`.
    fn expr(&mut self) -> PResult<Node> {
        let body = self.or_test()?;
        if self.eat_kw("if") {
            self.or_test()?;
            if !self.eat_kw("else") {
                return Err(NotCalls);
            }
            self.expr()?;
            return Ok(Node::Other);
        }
        Ok(body)
    }

    fn or_test(&mut self) -> PResult<Node> {
        let mut n = self.and_test()?;
        while self.eat_kw("or") {
            self.and_test()?;
            n = Node::Other;
        }
        Ok(n)
    }

    fn and_test(&mut self) -> PResult<Node> {
        let mut n = self.not_test()?;
        while self.eat_kw("and") {
            self.not_test()?;
            n = Node::Other;
        }
        Ok(n)
    }

    fn not_test(&mut self) -> PResult<Node> {
        if self.eat_kw("not") {
            self.not_test()?;
            return Ok(Node::Other);
        }
        self.comparison()
    }

    fn comparison(&mut self) -> PResult<Node> {
        let mut n = self.bitor()?;
        loop {
            let save = self.i;
            let op = ["==", "!=", "<=", ">=", "<", ">"].iter().any(|op| self.eat(op))
                || self.eat_kw("in")
                || (self.eat_kw("not") && self.eat_kw("in"))
                || (self.eat_kw("is") && {
                    self.eat_kw("not");
                    true
                });
            if !op {
                self.i = save;
                return Ok(n);
            }
            self.bitor()?;
            n = Node::Other;
        }
    }

    /// Binary operators from `|` down to `*`: all give `Other`.
    fn bitor(&mut self) -> PResult<Node> {
        const LEVELS: &[&[&str]] = &[&["|"], &["^"], &["&"], &["<<", ">>"], &["+", "-"], &["*", "/", "//", "%", "@"]];
        self.binary(LEVELS)
    }

    fn binary(&mut self, levels: &[&[&str]]) -> PResult<Node> {
        let Some((ops, lower)) = levels.split_first() else { return self.factor() };
        let mut n = self.binary(lower)?;
        loop {
            self.skip();
            let op = ops.iter().copied().find(|op| self.at_binop(op));
            let Some(op) = op else { return Ok(n) };
            self.i += op.len();
            self.binary(lower)?;
            n = Node::Other;
        }
    }

    /// Is `op` next (not the start of a longer operator or an augmented
    /// assignment)?
    fn at_binop(&self, op: &str) -> bool {
        let n = op.len();
        if self.i + n > self.s.len() || !op.chars().zip(&self.s[self.i..]).all(|(a, b)| a == *b) {
            return false;
        }
        let next = self.at(n);
        let doubled = n == 1 && "*/<>".contains(op) && next == op.chars().next();
        !(next == Some('=') || doubled || (op == "<" && next == Some('>')))
    }

    fn factor(&mut self) -> PResult<Node> {
        self.skip();
        match self.peek() {
            Some(c @ ('-' | '+')) if self.at(1) != Some('=') => {
                self.i += 1;
                Ok(Node::Sign(c == '-', Box::new(self.factor()?)))
            }
            Some('~') => {
                self.i += 1;
                self.factor()?;
                Ok(Node::Other)
            }
            _ => self.power(),
        }
    }

    fn power(&mut self) -> PResult<Node> {
        let awaited = self.eat_kw("await");
        let n = self.primary()?;
        self.skip();
        if self.peek() == Some('*') && self.at(1) == Some('*') && self.at(2) != Some('=') {
            self.i += 2;
            self.factor()?;
            return Ok(Node::Other);
        }
        Ok(if awaited { Node::Other } else { n })
    }

    /// An atom followed by `.name`, `(args)` and `[subscript]` trailers.
    fn primary(&mut self) -> PResult<Node> {
        let mut n = self.atom()?;
        loop {
            self.skip();
            match self.peek() {
                Some('.') if !self.at(1).is_some_and(|c| c.is_ascii_digit()) => {
                    self.i += 1;
                    let w = self.word().ok_or(NotCalls)?;
                    if KEYWORDS.contains(&w.as_str()) {
                        return Err(NotCalls);
                    }
                    self.i += w.chars().count();
                    n = Node::Attr(Box::new(n), w);
                }
                Some('(') => {
                    self.i += 1;
                    self.depth += 1;
                    let keywords = self.call_args()?;
                    self.depth -= 1;
                    self.expect(")")?;
                    n = Node::Call { func: Box::new(n), keywords };
                }
                Some('[') => {
                    self.i += 1;
                    self.depth += 1;
                    self.subscripts()?;
                    self.depth -= 1;
                    self.expect("]")?;
                    n = Node::Other;
                }
                _ => return Ok(n),
            }
        }
    }

    /// Call arguments; returns the keywords (positional ones are ignored,
    /// as `handle_single_tool` ignores them).
    fn call_args(&mut self) -> PResult<Vec<(Option<String>, Node)>> {
        let mut keywords = Vec::new();
        let (mut seen_keyword, mut seen_double_star) = (false, false);
        let mut count = 0;
        loop {
            self.skip();
            if self.peek() == Some(')') {
                return Ok(keywords);
            }
            count += 1;
            if self.eat("**") {
                keywords.push((None, self.expr()?));
                seen_double_star = true;
            } else if self.peek() == Some('*') {
                if seen_double_star {
                    return Err(NotCalls);
                }
                self.i += 1;
                self.expr()?;
            } else if let Some(name) = self.keyword_name() {
                keywords.push((Some(name), self.expr()?));
                seen_keyword = true;
            } else {
                if seen_keyword || seen_double_star {
                    return Err(NotCalls);
                }
                self.expr()?;
                if self.word().as_deref() == Some("for") || self.word().as_deref() == Some("async") {
                    // A bare generator must be the only argument.
                    self.comp_for()?;
                    self.skip();
                    if count != 1 || self.peek() != Some(')') {
                        return Err(NotCalls);
                    }
                }
            }
            if !self.eat(",") {
                self.skip();
                return if self.peek() == Some(')') { Ok(keywords) } else { Err(NotCalls) };
            }
        }
    }

    /// `NAME '='` (not `==`) at the cursor: consumes it and returns NAME.
    fn keyword_name(&mut self) -> Option<String> {
        let w = self.word()?;
        let save = self.i;
        self.i += w.chars().count();
        self.skip();
        if self.peek() == Some('=') && self.at(1) != Some('=') && !KEYWORDS.contains(&w.as_str()) {
            self.i += 1;
            return Some(w);
        }
        self.i = save;
        None
    }

    fn subscripts(&mut self) -> PResult<()> {
        loop {
            self.skip();
            if self.peek() == Some(']') {
                return Err(NotCalls);
            }
            // A slice: [lower] ':' [upper] [':' [step]].
            let mut any = false;
            if !matches!(self.peek(), Some(':')) {
                self.star_expr()?;
                any = true;
            }
            for _ in 0..2 {
                if self.eat(":") {
                    any = true;
                    self.skip();
                    if !matches!(self.peek(), Some(':' | ',' | ']')) {
                        self.expr()?;
                    }
                }
            }
            if !any {
                return Err(NotCalls);
            }
            if !self.eat(",") {
                return Ok(());
            }
            self.skip();
            if self.peek() == Some(']') {
                return Ok(());
            }
        }
    }

    /// `('async'? 'for' targets 'in' or_test ('if' or_test)*)+`.
    fn comp_for(&mut self) -> PResult<()> {
        let mut any = false;
        loop {
            let save = self.i;
            self.eat_kw("async");
            if !self.eat_kw("for") {
                self.i = save;
                return if any { Ok(()) } else { Err(NotCalls) };
            }
            any = true;
            loop {
                self.star_target()?;
                if !self.eat(",") || self.word().as_deref() == Some("in") {
                    break;
                }
            }
            if !self.eat_kw("in") {
                return Err(NotCalls);
            }
            self.or_test()?;
            while self.eat_kw("if") {
                self.or_test()?;
            }
        }
    }

    fn star_target(&mut self) -> PResult<()> {
        self.eat("*");
        self.bitor().map(|_| ())
    }

    /// Elements of a list/tuple/set display, or a comprehension.
    fn elements(&mut self, close: char) -> PResult<(Vec<Node>, bool, bool)> {
        let mut items = Vec::new();
        let mut comma = false;
        loop {
            self.skip();
            if self.peek() == Some(close) {
                return Ok((items, comma, false));
            }
            items.push(self.star_expr()?);
            if items.len() == 1 && matches!(self.word().as_deref(), Some("for" | "async")) {
                self.comp_for()?;
                return Ok((items, false, true));
            }
            if !self.eat(",") {
                return Ok((items, comma, false));
            }
            comma = true;
        }
    }

    fn bracketed<T>(&mut self, close: char, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        self.i += 1;
        self.depth += 1;
        let out = f(self)?;
        self.depth -= 1;
        self.skip();
        if self.peek() != Some(close) {
            return Err(NotCalls);
        }
        self.i += 1;
        Ok(out)
    }

    fn atom(&mut self) -> PResult<Node> {
        self.skip();
        let c = self.peek().ok_or(NotCalls)?;
        match c {
            '[' => self.bracketed(']', |p| {
                let (items, _, comp) = p.elements(']')?;
                Ok(if comp { Node::Other } else { Node::List(items) })
            }),
            '(' => self.bracketed(')', |p| {
                p.skip();
                if p.word().as_deref() == Some("yield") {
                    return Err(NotCalls);
                }
                let (mut items, comma, comp) = p.elements(')')?;
                Ok(match (comp, comma, items.len()) {
                    (true, _, _) => Node::Other,
                    (false, false, 1) => items.pop().unwrap_or(Node::Other),
                    _ => Node::Tuple(items),
                })
            }),
            '{' => self.bracketed('}', |p| p.dict_or_set()),
            '\'' | '"' => self.strings(),
            '.' if self.at(1) == Some('.') && self.at(2) == Some('.') => {
                self.i += 3;
                Ok(Node::Const(Lit::Unsupported))
            }
            c if c.is_ascii_digit() || (c == '.' && self.at(1).is_some_and(|d| d.is_ascii_digit())) => self.number(),
            c if is_id_start(c) => {
                let w = self.word().unwrap_or_default();
                if self.string_prefix(&w) {
                    return self.strings();
                }
                self.i += w.chars().count();
                match w.as_str() {
                    "None" => Ok(Node::Const(Lit::None)),
                    "True" => Ok(Node::Const(Lit::Bool(true))),
                    "False" => Ok(Node::Const(Lit::Bool(false))),
                    w if KEYWORDS.contains(&w) => Err(NotCalls),
                    _ => Ok(Node::Name(w)),
                }
            }
            _ => Err(NotCalls),
        }
    }

    fn dict_or_set(&mut self) -> PResult<Node> {
        self.skip();
        if self.peek() == Some('}') {
            return Ok(Node::Dict(Vec::new()));
        }
        let first_key = if self.eat("**") {
            None
        } else {
            let k = self.star_expr()?;
            if !self.eat(":") {
                // A set display or comprehension.
                let mut items = vec![k];
                if matches!(self.word().as_deref(), Some("for" | "async")) {
                    self.comp_for()?;
                    return Ok(Node::Other);
                }
                while self.eat(",") {
                    self.skip();
                    if self.peek() == Some('}') {
                        break;
                    }
                    items.push(self.star_expr()?);
                }
                self.has_set = true;
                return Ok(Node::Set(items));
            }
            Some(k)
        };
        let v = if first_key.is_none() { self.bitor()? } else { self.expr()? };
        if matches!(self.word().as_deref(), Some("for" | "async")) {
            self.comp_for()?;
            return Ok(Node::Other);
        }
        let mut entries = vec![(first_key, v)];
        while self.eat(",") {
            self.skip();
            if self.peek() == Some('}') {
                break;
            }
            if self.eat("**") {
                entries.push((None, self.bitor()?));
            } else {
                let k = self.expr()?;
                self.expect(":")?;
                entries.push((Some(k), self.expr()?));
            }
        }
        Ok(Node::Dict(entries))
    }

    fn string_prefix(&self, w: &str) -> bool {
        let next = self.s.get(self.i + w.chars().count()).copied();
        if !matches!(next, Some('\'' | '"')) {
            return false;
        }
        let l = w.to_ascii_lowercase();
        matches!(l.as_str(), "r" | "u" | "b" | "f" | "br" | "rb" | "fr" | "rf")
    }

    /// Adjacent string literals, concatenated.
    fn strings(&mut self) -> PResult<Node> {
        let mut text = String::new();
        let (mut any_bytes, mut any_str, mut fstring, mut placeholder) = (false, false, false, false);
        loop {
            self.skip();
            let prefix = match self.peek() {
                Some('\'' | '"') => String::new(),
                Some(c) if is_id_start(c) => match self.word() {
                    Some(w) if self.string_prefix(&w) => w.to_ascii_lowercase(),
                    _ => break,
                },
                _ => break,
            };
            self.i += prefix.len();
            let raw = prefix.contains('r');
            let bytes = prefix.contains('b');
            let f = prefix.contains('f');
            let piece = self.string_body(raw, bytes)?;
            if f {
                fstring = true;
                match unbrace(&piece) {
                    Some(t) => text.push_str(&t),
                    None => placeholder = true,
                }
            } else {
                text.push_str(&piece);
            }
            any_bytes |= bytes;
            any_str |= !bytes;
        }
        if any_bytes && any_str {
            return Err(NotCalls);
        }
        Ok(if any_bytes {
            Node::Const(Lit::Unsupported)
        } else if fstring {
            Node::FString((!placeholder).then_some(text))
        } else {
            Node::Const(Lit::Str(text))
        })
    }

    /// One string literal from its opening quote: its value.
    fn string_body(&mut self, raw: bool, bytes: bool) -> PResult<String> {
        let q = self.peek().ok_or(NotCalls)?;
        let triple = self.at(1) == Some(q) && self.at(2) == Some(q);
        self.i += if triple { 3 } else { 1 };
        let mut out = String::new();
        loop {
            let c = self.peek().ok_or(NotCalls)?;
            if c == q && (!triple || (self.at(1) == Some(q) && self.at(2) == Some(q))) {
                self.i += if triple { 3 } else { 1 };
                return Ok(out);
            }
            if bytes && !c.is_ascii() {
                return Err(NotCalls);
            }
            if (c == '\n' || c == '\r') && !triple {
                return Err(NotCalls);
            }
            if c != '\\' {
                out.push(c);
                self.i += 1;
                continue;
            }
            let e = self.at(1).ok_or(NotCalls)?;
            self.i += 2;
            if raw {
                out.push('\\');
                out.push(e);
                continue;
            }
            self.escape(e, bytes, &mut out)?;
        }
    }

    /// A backslash escape (the `\` and `e` already consumed).
    fn escape(&mut self, e: char, bytes: bool, out: &mut String) -> PResult<()> {
        let simple = match e {
            '\n' => Some(None),
            '\r' => {
                if self.peek() == Some('\n') {
                    self.i += 1;
                }
                Some(None)
            }
            '\\' | '\'' | '"' => Some(Some(e)),
            'a' => Some(Some('\x07')),
            'b' => Some(Some('\x08')),
            'f' => Some(Some('\x0c')),
            'n' => Some(Some('\n')),
            'r' => Some(Some('\r')),
            't' => Some(Some('\t')),
            'v' => Some(Some('\x0b')),
            _ => None,
        };
        if let Some(c) = simple {
            out.extend(c);
            return Ok(());
        }
        let code = match e {
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match self.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            self.i += 1;
                        }
                        None => break,
                    }
                }
                v
            }
            'x' => self.hex(2)?,
            'u' if !bytes => self.hex(4)?,
            'U' if !bytes => self.hex(8)?,
            // `\N{...}` needs the Unicode name table: unsupported.
            'N' if !bytes => return Err(NotCalls),
            _ => {
                out.push('\\');
                out.push(e);
                return Ok(());
            }
        };
        out.push(char::from_u32(code).ok_or(NotCalls)?);
        Ok(())
    }

    fn hex(&mut self, n: usize) -> PResult<u32> {
        let mut v: u32 = 0;
        for _ in 0..n {
            let d = self.peek().and_then(|c| c.to_digit(16)).ok_or(NotCalls)?;
            v = v.checked_mul(16).and_then(|v| v.checked_add(d)).ok_or(NotCalls)?;
            self.i += 1;
        }
        Ok(v)
    }

    fn number(&mut self) -> PResult<Node> {
        let start = self.i;
        let radix = match (self.peek(), self.at(1).map(|c| c.to_ascii_lowercase())) {
            (Some('0'), Some('x')) => 16,
            (Some('0'), Some('o')) => 8,
            (Some('0'), Some('b')) => 2,
            _ => 10,
        };
        let lit = if radix != 10 {
            self.i += 2;
            if self.peek() == Some('_') {
                self.i += 1;
            }
            let digits = self.digit_run(radix)?;
            Lit::Int(to_decimal(&digits, radix))
        } else {
            let int_part = if self.peek() == Some('.') { String::new() } else { self.digit_run(10)? };
            let mut float = false;
            let mut text = int_part.clone();
            if self.peek() == Some('.') {
                float = true;
                self.i += 1;
                text.push('.');
                if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    text.push_str(&self.digit_run(10)?);
                } else {
                    text.push('0');
                }
            }
            if matches!(self.peek(), Some('e' | 'E'))
                && (self.at(1).is_some_and(|c| c.is_ascii_digit())
                    || (matches!(self.at(1), Some('+' | '-')) && self.at(2).is_some_and(|c| c.is_ascii_digit())))
            {
                float = true;
                self.i += 1;
                text.push('e');
                if let Some(sign @ ('+' | '-')) = self.peek() {
                    text.push(sign);
                    self.i += 1;
                }
                text.push_str(&self.digit_run(10)?);
            }
            if matches!(self.peek(), Some('j' | 'J')) {
                self.i += 1;
                Lit::Unsupported
            } else if float {
                let t = if text.starts_with('.') { format!("0{text}") } else { text };
                Lit::Float(t.parse::<f64>().map_err(|_| NotCalls)?)
            } else {
                let trimmed = int_part.trim_start_matches('0');
                if int_part.len() > 1 && int_part.starts_with('0') && !trimmed.is_empty() {
                    return Err(NotCalls);
                }
                Lit::Int(if trimmed.is_empty() { "0".into() } else { trimmed.to_string() })
            }
        };
        // `1abc`, `0x1g`: invalid literals.
        if self.peek().is_some_and(is_id_char) || self.i == start {
            return Err(NotCalls);
        }
        Ok(Node::Const(lit))
    }

    /// Digits of `radix` with single underscores between them.
    fn digit_run(&mut self, radix: u32) -> PResult<String> {
        let mut out = String::new();
        loop {
            match self.peek() {
                Some(c) if c.is_digit(radix) => {
                    out.push(c);
                    self.i += 1;
                }
                Some('_') if !out.is_empty() && self.at(1).is_some_and(|c| c.is_digit(radix)) => self.i += 1,
                _ => break,
            }
        }
        if out.is_empty() {
            return Err(NotCalls);
        }
        Ok(out)
    }
}

/// f-string text without placeholders: `{{`/`}}` unescaped; `None` when a
/// placeholder (or a lone brace, a syntax error) occurs.
fn unbrace(s: &str) -> Option<String> {
    let mut out = String::new();
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '{' || c == '}' {
            if it.peek() == Some(&c) {
                it.next();
            } else {
                return None;
            }
        }
        out.push(c);
    }
    Some(out)
}

/// An unbounded integer in `radix` as decimal digits.
fn to_decimal(digits: &str, radix: u32) -> String {
    // Little-endian limbs of 10^9.
    let mut limbs: Vec<u64> = vec![0];
    for c in digits.chars() {
        let mut carry = u64::from(c.to_digit(radix).unwrap_or(0));
        for limb in limbs.iter_mut() {
            let v = *limb * u64::from(radix) + carry;
            *limb = v % 1_000_000_000;
            carry = v / 1_000_000_000;
        }
        if carry > 0 {
            limbs.push(carry);
        }
    }
    let mut out = limbs.last().map_or("0".into(), u64::to_string);
    for limb in limbs.iter().rev().skip(1) {
        out.push_str(&format!("{limb:09}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Vec<(String, String)> {
        parse_call_list(text)
            .expect("calls")
            .calls
            .into_iter()
            .map(|c| (c.name, c.arguments.dumps().expect("json")))
            .collect()
    }

    #[test]
    fn literals_become_json() {
        assert_eq!(
            args("[f(a='x', b=\"y\", c=1, d=-2.5, e=True, f=None, g=[1, (2, 3)], h={'k': {1, 2}}, i=null)]"),
            vec![(
                "f".into(),
                r#"{"a": "x", "b": "y", "c": 1, "d": -2.5, "e": true, "f": null, "g": [1, [2, 3]], "h": {"k": [1, 2]}, "i": null}"#
                    .into()
            )]
        );
        assert_eq!(
            args("[f(n=0x_ff, m=1_000, e=1e16, s='a' \"b\", t=f'{{x}}')]")[0].1,
            r#"{"n": 255, "m": 1000, "e": 1e+16, "s": "ab", "t": "{x}"}"#
        );
        assert_eq!(args("[f(s='it\\'s \\u00e9\\n', r=r'\\d')]")[0].1, r#"{"s": "it's é\n", "r": "\\d"}"#);
        assert_eq!(args("[f(d={1: 'a', True: 'b', 'x': None})]")[0].1, r#"{"d": {"1": "b", "x": null}}"#);
        assert_eq!(args("[f(), g.h(a=1)]\n# done\n[x]\n")[1].0, "g.h");
        assert_eq!(args("[f(a=1, *rest, **{'b': 2})]")[0].1, r#"{"a": 1, "null": {"b": 2}}"#);
        assert_eq!(args("[f(a=123456789012345678901234567890)]")[0].1, r#"{"a": 123456789012345678901234567890}"#);
    }

    #[test]
    fn non_literals_and_syntax_errors_are_not_calls() {
        for text in [
            "[f(a=x)]",
            "[f(a=1+2)]",
            "[f(a=1), 2]",
            "[f(a=1)] trailing",
            "[f(a='x)]",
            "[f(a=07)]",
            "[f(a=b'x')]",
            "[f(a=1j)]",
            "[f(a=f'{x}')]",
            "[f(a=1, 2)]",
            "[f(a=-True)]",
            "[f(a=1)]\n  x",
            "[f(a=1)][0]",
            "[f(a={'k': 1, **d})]",
            "[f(a={-1: 2})]",
            "[f(a=1)] = 3",
        ] {
            assert_eq!(parse_call_list(text), Err(NotCalls), "{text}");
        }
    }

    #[test]
    fn sets_are_reported() {
        assert!(parse_call_list("[f(a={1})]").expect("calls").has_set);
        assert!(!parse_call_list("[f(a={})]").expect("calls").has_set);
    }
}
