//! The parser: Python statements and expressions, as far as telling a
//! list of calls from anything else needs.

use super::{Lit, Node, NotCalls};

const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
    "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

pub(super) fn is_id_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

pub(super) fn is_id_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

pub(super) type PResult<T> = Result<T, NotCalls>;

pub(super) struct Parser {
    pub(super) s: Vec<char>,
    pub(super) i: usize,
    /// Bracket depth: inside brackets newlines are whitespace.
    pub(super) depth: usize,
    pub(super) has_set: bool,
}

impl Parser {
    pub(super) fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }

    pub(super) fn at(&self, k: usize) -> Option<char> {
        self.s.get(self.i + k).copied()
    }

    /// Skip whitespace, comments and line continuations (newlines too
    /// inside brackets).
    pub(super) fn skip(&mut self) {
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

    /// `skip`, across line ends too (an eval input's surrounding lines).
    pub(super) fn skip_blank_lines(&mut self) {
        loop {
            self.skip();
            match self.peek() {
                Some('\n' | '\r') => self.i += 1,
                _ => return,
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
    pub(super) fn word(&mut self) -> Option<String> {
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
    pub(super) fn module(&mut self) -> PResult<Option<Node>> {
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
    pub(super) fn expr(&mut self) -> PResult<Node> {
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
}
