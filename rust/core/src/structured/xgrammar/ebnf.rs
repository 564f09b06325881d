//! xgrammar's EBNF parser, for the text its regex converter writes: every
//! level a choice of sequences; `*`, `+`, `?` and `{m,n}` become rules named
//! `root_<k>` (the grammar's only named rule is `root`). Its errors for
//! malformed input are reproduced where they can be (position included);
//! other input it would refuse is reported as unsupported.

use super::error::{RaisedAt, XgrammarError};
use super::grammar::{Expr, Grammar, Range};
use super::regex_ebnf::parse_escape;

/// Parenthesis nesting this port follows (xgrammar's EBNF parser has a limit
/// of its own).
const MAX_GROUP_DEPTH: usize = 100;
/// Repetition counts beyond this are not reproduced.
const MAX_REPEAT: i64 = 100_000_000;

/// Parses `root ::= <ebnf>` the way xgrammar's EBNF parser does (a choice of
/// sequences at every level; quantifiers become rules named `root_<k>`).
pub(super) fn parse_ebnf(ebnf: &str) -> Result<Grammar, XgrammarError> {
    let tokens = lex(ebnf)?;
    let mut grammar = Grammar::default();
    let root = grammar.add_named("root", Expr::Empty);
    let mut parser = EbnfParser { tokens, pos: 0, grammar, depth: 0 };
    let body = parser.choices()?;
    if parser.pos != parser.tokens.len() {
        return Err(unsupported_ebnf());
    }
    parser.grammar.set_body(root, body);
    Ok(parser.grammar)
}

fn unsupported_ebnf() -> XgrammarError {
    XgrammarError::Unsupported("regex whose EBNF form xgrammar's parser rejects".into())
}

/// The EBNF text follows `root ::= ` on line 1; columns count bytes from 1.
const BODY_COLUMN: usize = "root ::= ".len() + 1;

fn parse_error(column: usize, message: &str) -> XgrammarError {
    XgrammarError::Rejected {
        at: RaisedAt::EbnfParser,
        message: format!("EBNF parser error at line 1, column {column}: {message}"),
    }
}

#[derive(Clone, Debug, PartialEq)]
enum TokenKind {
    LParen,
    RParen,
    Pipe,
    Star,
    Plus,
    Question,
    LBrace,
    RBrace,
    Comma,
    Integer(i64),
    Text(Vec<u8>),
    /// `(negated, members)`.
    Class(bool, Vec<ClassItem>),
}

#[derive(Clone, Debug)]
struct Token {
    kind: TokenKind,
    column: usize,
    lexeme: String,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum ClassItem {
    Char { cp: u32, column: usize },
    Dash { column: usize },
}

/// Characters the EBNF lexer lets a backslash escape literally inside `[...]`.
const CLASS_LITERAL_ESCAPES: &[u8] = b"^$\\.*+?()[]{}|/-";

fn lex(text: &str) -> Result<Vec<Token>, XgrammarError> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut pos = 0;
    while let Some(&byte) = bytes.get(pos) {
        let start = pos;
        pos += 1;
        let kind = match byte {
            b' ' | b'\t' | b'\n' | b'\r' => continue,
            b'(' => TokenKind::LParen,
            b')' => TokenKind::RParen,
            b'|' => TokenKind::Pipe,
            b'*' => TokenKind::Star,
            b'+' => TokenKind::Plus,
            b'?' => TokenKind::Question,
            b'{' => TokenKind::LBrace,
            b'}' => TokenKind::RBrace,
            b',' => TokenKind::Comma,
            b'0'..=b'9' => {
                while bytes.get(pos).is_some_and(u8::is_ascii_digit) {
                    pos += 1;
                }
                let digits = std::str::from_utf8(&bytes[start..pos]).map_err(|_| unsupported_ebnf())?;
                match digits.parse::<i64>() {
                    Ok(value) if value <= MAX_REPEAT => TokenKind::Integer(value),
                    _ => return Err(XgrammarError::Unsupported("regex repetition count".into())),
                }
            }
            b'"' => {
                let mut value = Vec::new();
                loop {
                    match bytes.get(pos) {
                        Some(b'"') => {
                            pos += 1;
                            break;
                        }
                        None | Some(b'\n' | b'\r') => return Err(unsupported_ebnf()),
                        Some(_) => {
                            let (cp, len) = next_char(bytes, pos, &[])?;
                            let c = char::from_u32(cp).ok_or_else(unsupported_ebnf)?;
                            value.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                            pos += len;
                        }
                    }
                }
                TokenKind::Text(value)
            }
            b'[' => {
                let negated = bytes.get(pos) == Some(&b'^');
                if negated {
                    pos += 1;
                }
                let mut items = Vec::new();
                loop {
                    let column = BODY_COLUMN + pos;
                    match bytes.get(pos) {
                        Some(b']') => {
                            pos += 1;
                            break;
                        }
                        None | Some(b'\n' | b'\r') => return Err(unsupported_ebnf()),
                        Some(b'-') => {
                            items.push(ClassItem::Dash { column });
                            pos += 1;
                        }
                        Some(b'\\') if bytes.get(pos + 1).is_some_and(|b| b"dDsSwW".contains(b)) => {
                            return Err(unsupported_ebnf());
                        }
                        Some(_) => {
                            let (cp, len) = next_char(bytes, pos, CLASS_LITERAL_ESCAPES)?;
                            items.push(ClassItem::Char { cp, column });
                            pos += len;
                        }
                    }
                }
                TokenKind::Class(negated, items)
            }
            _ => return Err(unsupported_ebnf()),
        };
        let lexeme = String::from_utf8_lossy(&bytes[start..pos]).into_owned();
        tokens.push(Token { kind, column: BODY_COLUMN + start, lexeme });
    }
    Ok(tokens)
}

/// One character of EBNF text at `pos`: UTF-8, or an escape.
fn next_char(bytes: &[u8], pos: usize, literal: &[u8]) -> Result<(u32, usize), XgrammarError> {
    let rest = bytes.get(pos..).unwrap_or_default();
    if rest.first() == Some(&b'\\') {
        // Escapes are read byte by byte; widen for the shared decoder.
        let widened: Vec<u32> = rest.iter().take(12).map(|b| u32::from(*b)).collect();
        return parse_escape(&widened, literal).ok_or_else(unsupported_ebnf);
    }
    let text = std::str::from_utf8(rest).map_err(|_| unsupported_ebnf())?;
    let c = text.chars().next().ok_or_else(unsupported_ebnf)?;
    Ok((u32::from(c), c.len_utf8()))
}

struct EbnfParser {
    tokens: Vec<Token>,
    pos: usize,
    grammar: Grammar,
    depth: usize,
}

impl EbnfParser {
    fn peek(&self) -> Option<&TokenKind> {
        self.tokens.get(self.pos).map(|token| &token.kind)
    }

    fn choices(&mut self) -> Result<Expr, XgrammarError> {
        let mut options = vec![self.sequence()?];
        while self.peek() == Some(&TokenKind::Pipe) {
            self.pos += 1;
            options.push(self.sequence()?);
        }
        Ok(Expr::Choice(options))
    }

    fn sequence(&mut self) -> Result<Expr, XgrammarError> {
        let mut items = Vec::new();
        loop {
            items.push(self.quantified()?);
            if matches!(self.peek(), None | Some(TokenKind::Pipe | TokenKind::RParen)) {
                break;
            }
        }
        Ok(Expr::Seq(items))
    }

    fn element(&mut self) -> Result<Expr, XgrammarError> {
        let Some(token) = self.tokens.get(self.pos).cloned() else { return Err(unsupported_ebnf()) };
        self.pos += 1;
        match token.kind {
            TokenKind::LParen => {
                if self.depth >= MAX_GROUP_DEPTH {
                    return Err(XgrammarError::TooDeep(MAX_GROUP_DEPTH));
                }
                if self.peek() == Some(&TokenKind::RParen) {
                    self.pos += 1;
                    return Ok(Expr::Empty);
                }
                self.depth += 1;
                let inner = self.choices()?;
                self.depth -= 1;
                if self.peek() != Some(&TokenKind::RParen) {
                    return Err(unsupported_ebnf());
                }
                self.pos += 1;
                Ok(inner)
            }
            TokenKind::Text(value) if value.is_empty() => Ok(Expr::Empty),
            TokenKind::Text(value) => Ok(Expr::Bytes(value)),
            TokenKind::Class(negated, items) => class_expr(negated, &items),
            _ => Err(parse_error(token.column, &format!("Expect element, but got {}", token.lexeme))),
        }
    }

    fn quantified(&mut self) -> Result<Expr, XgrammarError> {
        let element = self.element()?;
        let hint = "root";
        match self.peek() {
            Some(TokenKind::Star) => {
                self.pos += 1;
                if let Expr::Class { negated, ranges } = element {
                    return Ok(Expr::ClassStar { negated, ranges });
                }
                // a*  ->  rule ::= "" | a rule
                let id = self.grammar.add_with_hint(hint, Expr::Empty);
                self.grammar.set_body(id, Expr::Choice(vec![Expr::Empty, Expr::Seq(vec![element, Expr::Rule(id)])]));
                Ok(Expr::Rule(id))
            }
            Some(TokenKind::Plus) => {
                self.pos += 1;
                // a+  ->  rule ::= a rule | a
                let id = self.grammar.add_with_hint(hint, Expr::Empty);
                let body = Expr::Choice(vec![Expr::Seq(vec![element.clone(), Expr::Rule(id)]), element]);
                self.grammar.set_body(id, body);
                Ok(Expr::Rule(id))
            }
            Some(TokenKind::Question) => {
                self.pos += 1;
                let id = self.grammar.add_with_hint(hint, Expr::Choice(vec![Expr::Empty, element]));
                Ok(Expr::Rule(id))
            }
            Some(TokenKind::LBrace) => {
                self.pos += 1;
                let (min, max) = self.repetition_range()?;
                let rule = match element {
                    Expr::Rule(id) => id,
                    other => self.grammar.add_with_hint(hint, other),
                };
                Ok(Expr::Repeat { rule, min, max })
            }
            _ => Ok(element),
        }
    }

    fn repetition_range(&mut self) -> Result<(i32, i32), XgrammarError> {
        let Some(TokenKind::Integer(min)) = self.peek().cloned() else { return Err(unsupported_ebnf()) };
        self.pos += 1;
        let max = match self.peek() {
            Some(TokenKind::RBrace) => min,
            Some(TokenKind::Comma) => {
                self.pos += 1;
                match self.tokens.get(self.pos).cloned() {
                    Some(Token { kind: TokenKind::RBrace, .. }) => -1,
                    Some(Token { kind: TokenKind::Integer(max), column, .. }) => {
                        if max < min {
                            let message = format!("Lower bound is larger than upper bound: {min} > {max}");
                            return Err(parse_error(column, &message));
                        }
                        self.pos += 1;
                        max
                    }
                    _ => return Err(unsupported_ebnf()),
                }
            }
            _ => return Err(unsupported_ebnf()),
        };
        if self.peek() != Some(&TokenKind::RBrace) {
            return Err(unsupported_ebnf());
        }
        self.pos += 1;
        Ok((min as i32, max as i32))
    }
}

fn class_expr(negated: bool, items: &[ClassItem]) -> Result<Expr, XgrammarError> {
    let mut ranges: Vec<Range> = Vec::new();
    let mut index = 0;
    while let Some(item) = items.get(index) {
        let (low, column) = match *item {
            ClassItem::Char { cp, column } => (cp, column),
            ClassItem::Dash { column } => (u32::from('-'), column),
        };
        let range_end = match (items.get(index + 1), items.get(index + 2)) {
            (Some(ClassItem::Dash { .. }), Some(ClassItem::Char { cp, .. })) => Some(*cp),
            (Some(ClassItem::Dash { .. }), Some(ClassItem::Dash { .. })) => Some(u32::from('-')),
            _ => None,
        };
        match range_end {
            Some(high) => {
                if low > high {
                    let message = "Invalid character class: lower bound is larger than upper bound";
                    return Err(parse_error(column, message));
                }
                ranges.push((low, high));
                index += 3;
            }
            None => {
                ranges.push((low, low));
                index += 1;
            }
        }
    }
    Ok(Expr::Class { negated, ranges })
}
