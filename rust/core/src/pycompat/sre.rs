//! Python's `re._parser.parse` (3.11): a `str` pattern as the tree of
//! opcodes `re` compiles, with its optimisations (a one-literal class is a
//! literal, a branch of single characters is a class, common branch
//! prefixes are factored out, plain non-capturing groups are unpacked) and
//! its parse errors. For code that inspects a pattern the way vLLM does
//! with `sre_parse`; nothing here matches text.

/// `re.IGNORECASE`, `re.VERBOSE` and the other inline flags' bits.
pub const IGNORECASE: u32 = 2;
const LOCALE: u32 = 4;
const MULTILINE: u32 = 8;
const DOTALL: u32 = 16;
const UNICODE: u32 = 32;
const VERBOSE: u32 = 64;
const ASCII: u32 = 256;
const TYPE_FLAGS: u32 = ASCII | LOCALE | UNICODE;

/// `_sre.MAXREPEAT`: an unbounded repeat's maximum.
pub const MAXREPEAT: u64 = u32::MAX as u64;

/// A class escape's category (`\d`, `\D`, `\s`, `\S`, `\w`, `\W`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    Digit,
    NotDigit,
    Space,
    NotSpace,
    Word,
    NotWord,
}

impl Category {
    /// Whether `c` is in the category, as `re` reads it for a `str`.
    pub fn contains(self, c: char) -> bool {
        let digit = c.is_numeric();
        let space = c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c);
        let word = c.is_alphanumeric() || c == '_';
        match self {
            Category::Digit => digit,
            Category::NotDigit => !digit,
            Category::Space => space,
            Category::NotSpace => !space,
            Category::Word => word,
            Category::NotWord => !word,
        }
    }
}

/// One member of a character class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetItem {
    Negate,
    Literal(u32),
    Range(u32, u32),
    Category(Category),
}

/// An opcode and its argument.
#[derive(Debug, Clone)]
pub enum Op {
    Literal(u32),
    NotLiteral(u32),
    Any,
    In(Vec<SetItem>),
    /// `MAX_REPEAT`, `MIN_REPEAT` and `POSSESSIVE_REPEAT`.
    Repeat {
        min: u64,
        max: u64,
        item: Vec<Op>,
    },
    Subpattern {
        group: Option<usize>,
        add_flags: u32,
        del_flags: u32,
        p: Vec<Op>,
    },
    Atomic(Vec<Op>),
    Branch(Vec<Vec<Op>>),
    /// An anchor (`^`, `$`, `\A`, `\Z`, `\b`, `\B`), by its letter.
    At(char),
    GroupRef(usize),
    GroupRefExists,
    Assert,
    AssertNot,
}

impl Op {
    /// `item[0] != prefix` in `_parse_sub`: tuples compare by value, but
    /// an argument holding a subpattern only equals itself.
    fn same(&self, other: &Op) -> bool {
        match (self, other) {
            (Op::Literal(a), Op::Literal(b)) | (Op::NotLiteral(a), Op::NotLiteral(b)) => a == b,
            (Op::Any, Op::Any) => true,
            (Op::In(a), Op::In(b)) => a == b,
            (Op::At(a), Op::At(b)) => a == b,
            (Op::GroupRef(a), Op::GroupRef(b)) => a == b,
            _ => false,
        }
    }
}

/// A parsed pattern: its opcodes and the global flags it sets.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub ops: Vec<Op>,
    pub flags: u32,
}

/// `re.error` (and the `OverflowError` of a too large repeat).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Error(pub String);

type Result<T> = std::result::Result<T, Error>;

fn err<T>(msg: &str) -> Result<T> {
    Err(Error(msg.to_string()))
}

/// A token: a character, or a backslash and the character after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    Char(char),
    Escape(char),
}

struct Tokenizer {
    chars: Vec<char>,
    index: usize,
    next: Option<Tok>,
}

impl Tokenizer {
    fn new(pattern: &str) -> Result<Tokenizer> {
        let mut t = Tokenizer { chars: pattern.chars().collect(), index: 0, next: None };
        t.advance()?;
        Ok(t)
    }

    fn advance(&mut self) -> Result<()> {
        let Some(&c) = self.chars.get(self.index) else {
            self.next = None;
            return Ok(());
        };
        if c == '\\' {
            let Some(&e) = self.chars.get(self.index + 1) else { return err("bad escape (end of pattern)") };
            self.index += 2;
            self.next = Some(Tok::Escape(e));
        } else {
            self.index += 1;
            self.next = Some(Tok::Char(c));
        }
        Ok(())
    }

    fn is(&self, c: char) -> bool {
        self.next == Some(Tok::Char(c))
    }

    fn eat(&mut self, c: char) -> Result<bool> {
        if self.is(c) {
            self.advance()?;
            return Ok(true);
        }
        Ok(false)
    }

    fn get(&mut self) -> Result<Option<Tok>> {
        let this = self.next;
        self.advance()?;
        Ok(this)
    }

    fn next_char(&self) -> Option<char> {
        match self.next {
            Some(Tok::Char(c)) => Some(c),
            _ => None,
        }
    }

    /// `getwhile`: up to `n` plain characters in `set`.
    fn get_while(&mut self, n: usize, set: impl Fn(char) -> bool) -> Result<String> {
        let mut out = String::new();
        for _ in 0..n {
            match self.next_char() {
                Some(c) if set(c) => {
                    out.push(c);
                    self.advance()?;
                }
                _ => break,
            }
        }
        Ok(out)
    }

    /// `getuntil`: the text before `terminator` (which is consumed).
    fn get_until(&mut self, terminator: char) -> Result<String> {
        let mut out = String::new();
        loop {
            match self.get()? {
                None => return err("missing terminator"),
                Some(Tok::Char(c)) if c == terminator => {
                    if out.is_empty() {
                        return err("missing group name");
                    }
                    return Ok(out);
                }
                Some(Tok::Char(c)) => out.push(c),
                Some(Tok::Escape(c)) => {
                    out.push('\\');
                    out.push(c);
                }
            }
        }
    }
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_') && chars.all(|c| c.is_alphanumeric() || c == '_')
}

fn category(c: char) -> Option<Category> {
    Some(match c {
        'd' => Category::Digit,
        'D' => Category::NotDigit,
        's' => Category::Space,
        'S' => Category::NotSpace,
        'w' => Category::Word,
        'W' => Category::NotWord,
        _ => return None,
    })
}

fn simple_escape(c: char) -> Option<u32> {
    Some(match c {
        'a' => 7,
        'b' => 8,
        'f' => 12,
        'n' => 10,
        'r' => 13,
        't' => 9,
        'v' => 11,
        '\\' => 92,
        _ => return None,
    })
}

/// A class member or an expression atom from an escape.
enum Escaped {
    Literal(u32),
    Category(Category),
    At(char),
    GroupRef(usize),
}

/// The `\x`, `\u`, `\U` and `\N` escapes both contexts share.
fn hex_escape(source: &mut Tokenizer, c: char) -> Result<Option<u32>> {
    let digits = match c {
        'x' => 2,
        'u' => 4,
        'U' => 8,
        'N' => {
            if !source.eat('{')? {
                return err("missing {");
            }
            let name = source.get_until('}')?;
            return unicode_name(&name).map(Some).ok_or_else(|| Error(format!("undefined character name {name:?}")));
        }
        _ => return Ok(None),
    };
    let hex = source.get_while(digits, |c| c.is_ascii_hexdigit())?;
    if hex.len() != digits {
        return err("incomplete escape");
    }
    let value = u32::from_str_radix(&hex, 16).map_err(|_| Error("bad escape".into()))?;
    if value > 0x10FFFF {
        return err("bad escape");
    }
    Ok(Some(value))
}

/// `\N{...}`: derender carries no Unicode name table, so only the names
/// of ASCII letters and digits are known; any other name counts as
/// undefined (a parse error, which callers read conservatively).
fn unicode_name(name: &str) -> Option<u32> {
    let upper = name.to_ascii_uppercase();
    if let Some(l) = upper.strip_prefix("LATIN CAPITAL LETTER ") {
        return (l.len() == 1 && l.as_bytes()[0].is_ascii_uppercase()).then(|| u32::from(l.as_bytes()[0]));
    }
    if let Some(l) = upper.strip_prefix("LATIN SMALL LETTER ") {
        return (l.len() == 1 && l.as_bytes()[0].is_ascii_uppercase()).then(|| u32::from(l.as_bytes()[0] + 32));
    }
    None
}

/// `_class_escape`.
fn class_escape(source: &mut Tokenizer, c: char) -> Result<Escaped> {
    if let Some(v) = simple_escape(c) {
        return Ok(Escaped::Literal(v));
    }
    if let Some(cat) = category(c) {
        return Ok(Escaped::Category(cat));
    }
    if let Some(v) = hex_escape(source, c)? {
        return Ok(Escaped::Literal(v));
    }
    if ('0'..='7').contains(&c) {
        let more = source.get_while(2, |d| ('0'..='7').contains(&d))?;
        let value = u32::from_str_radix(&format!("{c}{more}"), 8).unwrap_or(u32::MAX);
        if value > 0o377 {
            return err("octal escape value outside of range 0-0o377");
        }
        return Ok(Escaped::Literal(value));
    }
    if c.is_ascii_digit() || c.is_ascii_alphabetic() {
        return err("bad escape");
    }
    Ok(Escaped::Literal(u32::from(c)))
}

struct State {
    flags: u32,
    /// Per group (0 is the whole match): closed yet?
    closed: Vec<bool>,
    names: Vec<(String, usize)>,
    lookbehind_groups: Option<usize>,
    groupref_pos: Vec<usize>,
}

impl State {
    fn groups(&self) -> usize {
        self.closed.len()
    }

    fn check_group(&self, gid: usize) -> bool {
        self.closed.get(gid).copied().unwrap_or(false)
    }

    fn check_lookbehind_group(&self, gid: usize) -> Result<()> {
        if let Some(lb) = self.lookbehind_groups {
            if !self.check_group(gid) {
                return err("cannot refer to an open group");
            }
            if gid >= lb {
                return err("cannot refer to group defined in the same lookbehind subpattern");
            }
        }
        Ok(())
    }
}

/// `_escape`: an escape in an expression.
fn expr_escape(source: &mut Tokenizer, state: &State, c: char) -> Result<Escaped> {
    match c {
        'A' => return Ok(Escaped::At('A')),
        'b' => return Ok(Escaped::At('b')),
        'B' => return Ok(Escaped::At('B')),
        'Z' => return Ok(Escaped::At('Z')),
        _ => {}
    }
    if let Some(cat) = category(c) {
        return Ok(Escaped::Category(cat));
    }
    if let Some(v) = simple_escape(c) {
        return Ok(Escaped::Literal(v));
    }
    if let Some(v) = hex_escape(source, c)? {
        return Ok(Escaped::Literal(v));
    }
    if c == '0' {
        let more = source.get_while(2, |d| ('0'..='7').contains(&d))?;
        return Ok(Escaped::Literal(u32::from_str_radix(&format!("0{more}"), 8).unwrap_or(0)));
    }
    if c.is_ascii_digit() {
        let mut escape = c.to_string();
        if let Some(d) = source.next_char().filter(char::is_ascii_digit) {
            source.advance()?;
            escape.push(d);
            let octal = |x: char| ('0'..='7').contains(&x);
            if let Some(e) = source.next_char().filter(|&e| octal(c) && octal(d) && octal(e)) {
                source.advance()?;
                escape.push(e);
                let value = u32::from_str_radix(&escape, 8).unwrap_or(u32::MAX);
                if value > 0o377 {
                    return err("octal escape value outside of range 0-0o377");
                }
                return Ok(Escaped::Literal(value));
            }
        }
        let group: usize = escape.parse().unwrap_or(usize::MAX);
        if group < state.groups() {
            if !state.check_group(group) {
                return err("cannot refer to an open group");
            }
            state.check_lookbehind_group(group)?;
            return Ok(Escaped::GroupRef(group));
        }
        return err("invalid group reference");
    }
    if c.is_ascii_alphabetic() {
        return err("bad escape");
    }
    Ok(Escaped::Literal(u32::from(c)))
}

/// `_parse_sub`: an alternation.
fn parse_sub(source: &mut Tokenizer, state: &mut State, verbose: bool, nested: usize) -> Result<Vec<Op>> {
    let mut items = Vec::new();
    let mut verbose = verbose;
    loop {
        let first = nested == 0 && items.is_empty();
        items.push(parse_seq(source, state, verbose, nested + 1, first)?);
        if !source.eat('|')? {
            break;
        }
        if nested == 0 {
            verbose = state.flags & VERBOSE != 0;
        }
    }
    if items.len() == 1 {
        return Ok(items.pop().unwrap_or_default());
    }
    let mut out = Vec::new();
    // A prefix all branches share moves out of the branch.
    while let Some(prefix) = items.first().and_then(|i| i.first()).cloned() {
        if items.iter().any(|item| item.first().is_none_or(|op| !op.same(&prefix))) {
            break;
        }
        for item in &mut items {
            item.remove(0);
        }
        out.push(prefix);
    }
    // Branches of single characters become a class.
    let mut set: Vec<SetItem> = Vec::new();
    let single = items.iter().all(|item| match item.as_slice() {
        [Op::Literal(c)] => {
            set.push(SetItem::Literal(*c));
            true
        }
        [Op::In(members)] if members.first() != Some(&SetItem::Negate) => {
            set.extend(members.iter().cloned());
            true
        }
        _ => false,
    });
    if single {
        out.push(Op::In(unique(set)));
        return Ok(out);
    }
    out.push(Op::Branch(items));
    Ok(out)
}

fn unique(items: Vec<SetItem>) -> Vec<SetItem> {
    let mut out: Vec<SetItem> = Vec::with_capacity(items.len());
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

const SPECIAL: &str = ".\\[{()*+?^$|";

/// `_parse`: a sequence.
fn parse_seq(source: &mut Tokenizer, state: &mut State, verbose: bool, nested: usize, first: bool) -> Result<Vec<Op>> {
    let mut verbose = verbose;
    let mut out: Vec<Op> = Vec::new();
    while let Some(this) = source.next {
        if this == Tok::Char('|') || this == Tok::Char(')') {
            break;
        }
        source.advance()?;
        if verbose {
            if let Tok::Char(c) = this {
                if " \t\n\r\u{b}\u{c}".contains(c) {
                    continue;
                }
                if c == '#' {
                    loop {
                        match source.get()? {
                            None | Some(Tok::Char('\n')) => break,
                            _ => {}
                        }
                    }
                    continue;
                }
            }
        }
        let c = match this {
            Tok::Escape(e) => {
                out.push(match expr_escape(source, state, e)? {
                    Escaped::Literal(v) => Op::Literal(v),
                    Escaped::Category(cat) => Op::In(vec![SetItem::Category(cat)]),
                    Escaped::At(a) => Op::At(a),
                    Escaped::GroupRef(g) => Op::GroupRef(g),
                });
                continue;
            }
            Tok::Char(c) if !SPECIAL.contains(c) => {
                out.push(Op::Literal(u32::from(c)));
                continue;
            }
            Tok::Char(c) => c,
        };
        match c {
            '[' => out.push(parse_class(source)?),
            '?' | '*' | '+' | '{' => {
                let (min, max) = match c {
                    '?' => (0, 1),
                    '*' => (0, MAXREPEAT),
                    '+' => (1, MAXREPEAT),
                    _ => {
                        if source.is('}') {
                            out.push(Op::Literal(u32::from('{')));
                            continue;
                        }
                        let here = source.index;
                        let here_next = source.next;
                        let lo = source.get_while(usize::MAX, |d| d.is_ascii_digit())?;
                        let hi = if source.eat(',')? {
                            source.get_while(usize::MAX, |d| d.is_ascii_digit())?
                        } else {
                            lo.clone()
                        };
                        if !source.eat('}')? {
                            out.push(Op::Literal(u32::from('{')));
                            source.index = here;
                            source.next = here_next;
                            continue;
                        }
                        let number = |s: &str| s.parse::<u64>().unwrap_or(u64::MAX);
                        let min = if lo.is_empty() { 0 } else { number(&lo) };
                        if min >= MAXREPEAT {
                            return err("the repetition number is too large");
                        }
                        let max = if hi.is_empty() { MAXREPEAT } else { number(&hi) };
                        if !hi.is_empty() {
                            if max >= MAXREPEAT {
                                return err("the repetition number is too large");
                            }
                            if max < min {
                                return err("min repeat greater than max repeat");
                            }
                        }
                        (min, max)
                    }
                };
                let item = match out.last() {
                    None | Some(Op::At(_)) => return err("nothing to repeat"),
                    Some(Op::Repeat { .. }) => return err("multiple repeat"),
                    Some(Op::Subpattern { group: None, add_flags: 0, del_flags: 0, p }) => p.clone(),
                    Some(op) => vec![op.clone()],
                };
                // Lazy (`?`) and possessive (`+`) repeats read alike here.
                if !source.eat('?')? {
                    source.eat('+')?;
                }
                out.pop();
                out.push(Op::Repeat { min, max, item });
            }
            '.' => out.push(Op::Any),
            '(' => {
                if let Some(op) = parse_group(source, state, &mut verbose, nested, first && out.is_empty())? {
                    out.push(op);
                }
            }
            '^' => out.push(Op::At('^')),
            '$' => out.push(Op::At('$')),
            _ => return err("unsupported special character"),
        }
    }
    // Plain non-capturing groups are unpacked.
    let mut unpacked = Vec::with_capacity(out.len());
    for op in out {
        match op {
            Op::Subpattern { group: None, add_flags: 0, del_flags: 0, p } => unpacked.extend(p),
            other => unpacked.push(other),
        }
    }
    Ok(unpacked)
}

/// A character class after its `[`.
fn parse_class(source: &mut Tokenizer) -> Result<Op> {
    let mut set: Vec<SetItem> = Vec::new();
    let negate = source.eat('^')?;
    let member = |source: &mut Tokenizer, tok: Tok| -> Result<SetItem> {
        match tok {
            Tok::Escape(e) => Ok(match class_escape(source, e)? {
                Escaped::Literal(v) => SetItem::Literal(v),
                Escaped::Category(c) => SetItem::Category(c),
                Escaped::At(_) | Escaped::GroupRef(_) => return err("bad escape"),
            }),
            Tok::Char(c) => Ok(SetItem::Literal(u32::from(c))),
        }
    };
    loop {
        let Some(this) = source.get()? else { return err("unterminated character set") };
        if this == Tok::Char(']') && !set.is_empty() {
            break;
        }
        let code1 = member(source, this)?;
        if source.eat('-')? {
            let Some(that) = source.get()? else { return err("unterminated character set") };
            if that == Tok::Char(']') {
                set.push(code1);
                set.push(SetItem::Literal(u32::from('-')));
                break;
            }
            let code2 = member(source, that)?;
            let (SetItem::Literal(lo), SetItem::Literal(hi)) = (&code1, &code2) else {
                return err("bad character range");
            };
            if hi < lo {
                return err("bad character range");
            }
            set.push(SetItem::Range(*lo, *hi));
        } else {
            set.push(code1);
        }
    }
    let mut set = unique(set);
    Ok(match set.as_slice() {
        [SetItem::Literal(c)] if negate => Op::NotLiteral(*c),
        [SetItem::Literal(c)] => Op::Literal(*c),
        _ => {
            if negate {
                set.insert(0, SetItem::Negate);
            }
            Op::In(set)
        }
    })
}

/// A group after its `(`; `None` for what adds no opcode (a comment,
/// global flags).
fn parse_group(
    source: &mut Tokenizer,
    state: &mut State,
    verbose: &mut bool,
    nested: usize,
    at_start: bool,
) -> Result<Option<Op>> {
    let (mut capture, mut atomic, mut name) = (true, false, None);
    let (mut add_flags, mut del_flags) = (0, 0);
    if source.eat('?')? {
        let Some(Tok::Char(c)) = source.get()? else { return err("unexpected end of pattern or extension") };
        match c {
            'P' => {
                if source.eat('<')? {
                    let n = source.get_until('>')?;
                    if !is_identifier(&n) {
                        return err("bad character in group name");
                    }
                    name = Some(n);
                } else if source.eat('=')? {
                    let n = source.get_until(')')?;
                    if !is_identifier(&n) {
                        return err("bad character in group name");
                    }
                    let Some(&(_, gid)) = state.names.iter().find(|(k, _)| *k == n) else {
                        return err("unknown group name");
                    };
                    if !state.check_group(gid) {
                        return err("cannot refer to an open group");
                    }
                    state.check_lookbehind_group(gid)?;
                    return Ok(Some(Op::GroupRef(gid)));
                } else {
                    return err("unknown extension ?P");
                }
            }
            ':' => capture = false,
            '#' => loop {
                match source.get()? {
                    None => return err("missing ), unterminated comment"),
                    Some(Tok::Char(')')) => return Ok(None),
                    _ => {}
                }
            },
            '=' | '!' | '<' => {
                let mut kind = c;
                let mut behind = false;
                let saved = state.lookbehind_groups;
                if c == '<' {
                    match source.get()? {
                        Some(Tok::Char(k @ ('=' | '!'))) => kind = k,
                        _ => return err("unknown extension ?<"),
                    }
                    behind = true;
                    if saved.is_none() {
                        state.lookbehind_groups = Some(state.groups());
                    }
                }
                parse_sub(source, state, *verbose, nested + 1)?;
                if behind && saved.is_none() {
                    state.lookbehind_groups = None;
                }
                if !source.eat(')')? {
                    return err("missing ), unterminated subpattern");
                }
                return Ok(Some(if kind == '=' { Op::Assert } else { Op::AssertNot }));
            }
            '(' => {
                let cond = source.get_until(')')?;
                let gid = if is_identifier(&cond) {
                    match state.names.iter().find(|(k, _)| *k == cond) {
                        Some(&(_, gid)) => gid,
                        None => return err("unknown group name"),
                    }
                } else {
                    let gid: usize = cond.parse().map_err(|_| Error("bad character in group name".into()))?;
                    if gid == 0 {
                        return err("bad group number");
                    }
                    state.groupref_pos.push(gid);
                    gid
                };
                state.check_lookbehind_group(gid)?;
                parse_seq(source, state, *verbose, nested + 1, false)?;
                if source.eat('|')? {
                    parse_seq(source, state, *verbose, nested + 1, false)?;
                    if source.is('|') {
                        return err("conditional backref with more than two branches");
                    }
                }
                if !source.eat(')')? {
                    return err("missing ), unterminated subpattern");
                }
                return Ok(Some(Op::GroupRefExists));
            }
            '>' => {
                capture = false;
                atomic = true;
            }
            c if flag(c).is_some() || c == '-' => match parse_flags(source, c)? {
                Flags::Global(flags) => {
                    if !at_start {
                        return err("global flags not at the start of the expression");
                    }
                    state.flags |= flags;
                    *verbose = state.flags & VERBOSE != 0;
                    return Ok(None);
                }
                Flags::Scoped(add, del) => {
                    add_flags = add;
                    del_flags = del;
                    capture = false;
                }
            },
            _ => return err("unknown extension"),
        }
    }
    let group = if capture {
        let gid = state.groups();
        state.closed.push(false);
        if let Some(n) = &name {
            if state.names.iter().any(|(k, _)| k == n) {
                return err("redefinition of group name");
            }
            state.names.push((n.clone(), gid));
        }
        Some(gid)
    } else {
        None
    };
    let sub_verbose = (*verbose || add_flags & VERBOSE != 0) && del_flags & VERBOSE == 0;
    let p = parse_sub(source, state, sub_verbose, nested + 1)?;
    if !source.eat(')')? {
        return err("missing ), unterminated subpattern");
    }
    if let Some(gid) = group {
        state.closed[gid] = true;
    }
    Ok(Some(if atomic { Op::Atomic(p) } else { Op::Subpattern { group, add_flags, del_flags, p } }))
}

fn flag(c: char) -> Option<u32> {
    Some(match c {
        'i' => IGNORECASE,
        'L' => LOCALE,
        'm' => MULTILINE,
        's' => DOTALL,
        'x' => VERBOSE,
        'a' => ASCII,
        't' => 1,
        'u' => UNICODE,
        _ => return None,
    })
}

enum Flags {
    Global(u32),
    Scoped(u32, u32),
}

/// `_parse_flags`, after `(?` and its first character.
fn parse_flags(source: &mut Tokenizer, first: char) -> Result<Flags> {
    let mut c = first;
    let (mut add, mut del) = (0u32, 0u32);
    let next = |source: &mut Tokenizer| -> Result<char> {
        match source.get()? {
            Some(Tok::Char(c)) => Ok(c),
            _ => err("missing -, : or )"),
        }
    };
    if c != '-' {
        loop {
            let f = flag(c).ok_or_else(|| Error("unknown flag".into()))?;
            if c == 'L' {
                return err("bad inline flags: cannot use 'L' flag with a str pattern");
            }
            add |= f;
            if f & TYPE_FLAGS != 0 && add & TYPE_FLAGS != f {
                return err("bad inline flags: flags 'a', 'u' and 'L' are incompatible");
            }
            c = next(source)?;
            if ")-:".contains(c) {
                break;
            }
            if flag(c).is_none() {
                return err("unknown flag");
            }
        }
    }
    if c == ')' {
        return Ok(Flags::Global(add));
    }
    if add & 1 != 0 {
        return err("bad inline flags: cannot turn on global flag");
    }
    if c == '-' {
        c = next(source)?;
        if flag(c).is_none() {
            return err("missing flag");
        }
        loop {
            let f = flag(c).ok_or_else(|| Error("unknown flag".into()))?;
            if f & TYPE_FLAGS != 0 {
                return err("bad inline flags: cannot turn off flags 'a', 'u' and 'L'");
            }
            del |= f;
            c = next(source)?;
            if c == ':' {
                break;
            }
            if flag(c).is_none() {
                return err("unknown flag");
            }
        }
    }
    if del & 1 != 0 {
        return err("bad inline flags: cannot turn off global flag");
    }
    if add & del != 0 {
        return err("bad inline flags: flag turned on and off");
    }
    Ok(Flags::Scoped(add, del))
}

/// `re._parser.parse(pattern)`.
pub fn parse(pattern: &str) -> Result<Parsed> {
    let mut source = Tokenizer::new(pattern)?;
    let mut state =
        State { flags: 0, closed: vec![false], names: Vec::new(), lookbehind_groups: None, groupref_pos: Vec::new() };
    let ops = parse_sub(&mut source, &mut state, false, 0)?;
    if source.next.is_some() {
        return err("unbalanced parenthesis");
    }
    if state.groupref_pos.iter().any(|&g| g >= state.groups()) {
        return err("invalid group reference");
    }
    Ok(Parsed { ops, flags: state.flags })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optimisations_follow_pythons() {
        // A one-literal class is the literal; a negated one is NOT_LITERAL.
        assert!(matches!(parse("[a]").unwrap().ops.as_slice(), [Op::Literal(97)]));
        assert!(matches!(parse("[^a]").unwrap().ops.as_slice(), [Op::NotLiteral(97)]));
        // Single-character branches become a class, shared prefixes move out.
        assert!(matches!(parse("a|b|\\d").unwrap().ops.as_slice(), [Op::In(_)]));
        let ops = parse("ab|ac").unwrap().ops;
        assert!(matches!(ops.as_slice(), [Op::Literal(97), Op::In(_)]), "{ops:?}");
        // Plain non-capturing groups are unpacked.
        assert!(matches!(parse("(?:ab)").unwrap().ops.as_slice(), [Op::Literal(97), Op::Literal(98)]));
    }

    #[test]
    fn errors_are_pythons() {
        for bad in ["[", "a**", "*a", "(?P<1>a)", "\\q", "a{3,2}", "(?i", "a)", "(a)\\2", "x(?i)", "[b-a]", "\\"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        for good in ["(?i)a", "a{,3}", "a{", "x{}", "(a)\\1", "[]a]", "(?x) a # c", "\\x41\\u00e9", "(?<=a)b"] {
            assert!(parse(good).is_ok(), "{good}");
        }
        assert_eq!(parse("(?i)a").unwrap().flags & IGNORECASE, IGNORECASE);
    }

    #[test]
    fn unicode_names_are_ascii_letters_only() {
        assert!(matches!(parse(r"\N{LATIN SMALL LETTER Q}").unwrap().ops.as_slice(), [Op::Literal(113)]));
        // Python knows this one; derender holds no name table (docs/divergences.md).
        assert!(parse(r"\N{EM DASH}").is_err());
    }
}
