//! Bounded integers and numbers, and string formats: xgrammar writes each as
//! an anchored regex, converts it with its regex fallback (`regex_ebnf`) and
//! splices the resulting rules (named `root`, `root_1`, ... in the small
//! grammar) into the main grammar under fresh names.

use super::convert::Converter;
use super::ebnf::parse_ebnf;
use super::error::XgrammarError;
use super::grammar::{Expr, RuleId};
use super::normalize::normalize;
use super::range_regex::{float_range_regex, integer_range_regex};
use super::regex_ebnf::regex_to_ebnf;
use super::schema::NumberSpec;

pub(super) fn integer_range(conv: &mut Converter, start: Option<i64>, end: Option<i64>) -> Result<Expr, XgrammarError> {
    regex_subgrammar(conv, &integer_range_regex(start, end))
}

pub(super) fn number_range(conv: &mut Converter, spec: &NumberSpec) -> Result<Expr, XgrammarError> {
    // Where both an inclusive and an exclusive bound are given, the tighter
    // wins; on a tie the exclusive one.
    let (mut start, mut end) = (spec.minimum, spec.maximum);
    let (mut exclusive_start, mut exclusive_end) = (false, false);
    if let Some(bound) = spec.exclusive_minimum {
        if start.is_none_or(|s| bound >= s) {
            start = Some(bound);
            exclusive_start = true;
        }
    }
    if let Some(bound) = spec.exclusive_maximum {
        if end.is_none_or(|e| bound <= e) {
            end = Some(bound);
            exclusive_end = true;
        }
    }
    let regex = float_range_regex(start, end, exclusive_start, exclusive_end);
    regex_subgrammar(conv, &regex)
}

/// The rules for `regex` (xgrammar's `Grammar::FromEBNF(RegexToEBNF(regex))`)
/// added to the main grammar; returns a reference to their root.
pub(super) fn regex_subgrammar(conv: &mut Converter, regex: &str) -> Result<Expr, XgrammarError> {
    let ebnf = regex_to_ebnf(regex)?;
    let mut sub = parse_ebnf(&ebnf)?;
    normalize(&mut sub);
    let ids: Vec<RuleId> = sub.rules.iter().map(|rule| conv.grammar.add_with_hint(&rule.name, Expr::Empty)).collect();
    for (rule, id) in sub.rules.into_iter().zip(&ids) {
        conv.grammar.set_body(*id, renumbered(rule.body, &ids));
    }
    ids.first().map(|root| Expr::Rule(*root)).ok_or_else(|| XgrammarError::Unsupported("empty regex grammar".into()))
}

fn renumbered(expr: Expr, ids: &[RuleId]) -> Expr {
    let map = |id: RuleId| ids.get(id).copied().unwrap_or(id);
    match expr {
        Expr::Rule(id) => Expr::Rule(map(id)),
        Expr::Repeat { rule, min, max } => Expr::Repeat { rule: map(rule), min, max },
        Expr::Seq(items) => Expr::Seq(items.into_iter().map(|e| renumbered(e, ids)).collect()),
        Expr::Choice(items) => Expr::Choice(items.into_iter().map(|e| renumbered(e, ids)).collect()),
        other => other,
    }
}

/// The regex for a known `format`; other formats are ignored by xgrammar.
pub(super) fn format_regex(format: &str) -> Option<String> {
    let atext = r"[\w!#$%&'*+/=?^`{|}~-]";
    let dot_string = format!(r"({atext}+(\.{atext}+)*)");
    let quoted_string = r#"\\"(\\[\x20-\x7E]|[\x20\x21\x23-\x5B\x5D-\x7E])*\\""#;
    let domain = r"([A-Za-z0-9]([\-A-Za-z0-9]*[A-Za-z0-9])?)((\.[A-Za-z0-9][\-A-Za-z0-9]*[A-Za-z0-9])*)";
    let date = r"(\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[1-2]\d|3[01]))";
    let time = r"([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)";
    let decbyte = r"(25[0-5]|2[0-4]\d|[0-1]?\d?\d)";
    let pchar = r"([\w\.~!$&'()*+,;=:@-]|%[0-9A-Fa-f][0-9A-Fa-f])";
    let query_fragment_char = r"([\w\.~!$&'()*+,;=:@/\?-]|%[0-9A-Fa-f][0-9A-Fa-f])*";
    let query = format!(r"(\?{query_fragment_char})?");
    let fragment = format!(r"(#{query_fragment_char})?");
    let path_abempty = format!(r"(/{pchar}*)*");
    let userinfo = r"([\w\.~!$&'()*+,;=:-]|%[0-9A-Fa-f][0-9A-Fa-f])*";
    let host = r"([\w\.~!$&'()*+,;=-]|%[0-9A-Fa-f][0-9A-Fa-f])*";
    let authority = format!(r"({userinfo}@)?{host}(:\d*)?");
    let ipv4_octet = r"(25[0-5]|(2[0-4]|1{0,1}[0-9]){0,1}[0-9])";
    Some(match format {
        "email" => format!(r"^({dot_string}|{quoted_string})@{domain}$"),
        "date" => format!("^{date}$"),
        "time" => format!("^{time}$"),
        "date-time" => format!("^{date}T{time}$"),
        "duration" => concat!(
            r"^P((\d+D|\d+M(\d+D)?|\d+Y(\d+M(\d+D)?)?)(T(\d+S|\d+M(\d+S)?|\d+H(\d+M(\d+S)?)?))?",
            r"|T(\d+S|\d+M(\d+S)?|\d+H(\d+M(\d+S)?)?)|\d+W)$"
        )
        .to_string(),
        "ipv4" => format!(r"^({decbyte}\.){{3}}{decbyte}$"),
        "ipv6" => [
            "(",
            "([0-9a-fA-F]{1,4}:){7,7}[0-9a-fA-F]{1,4}|",
            "([0-9a-fA-F]{1,4}:){1,7}:|",
            "([0-9a-fA-F]{1,4}:){1,6}:[0-9a-fA-F]{1,4}|",
            "([0-9a-fA-F]{1,4}:){1,5}(:[0-9a-fA-F]{1,4}){1,2}|",
            "([0-9a-fA-F]{1,4}:){1,4}(:[0-9a-fA-F]{1,4}){1,3}|",
            "([0-9a-fA-F]{1,4}:){1,3}(:[0-9a-fA-F]{1,4}){1,4}|",
            "([0-9a-fA-F]{1,4}:){1,2}(:[0-9a-fA-F]{1,4}){1,5}|",
            "[0-9a-fA-F]{1,4}:((:[0-9a-fA-F]{1,4}){1,6})|",
            ":((:[0-9a-fA-F]{1,4}){1,7}|:)|",
            "::(ffff(:0{1,4}){0,1}:){0,1}",
            &format!(r"({ipv4_octet}\.){{3,3}}"),
            ipv4_octet,
            "|",
            "([0-9a-fA-F]{1,4}:){1,4}:",
            &format!(r"({ipv4_octet}\.){{3,3}}"),
            ipv4_octet,
            ")",
        ]
        .concat(),
        "hostname" => r"^([a-z0-9]([a-z0-9-]*[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$".to_string(),
        "uuid" => r"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$".to_string(),
        "uri" => {
            let scheme = r"[a-zA-Z][a-zA-Z+\.-]*";
            let rootless = format!(r"/?({pchar}+(/{pchar}*)*)?");
            format!(r"^{scheme}:(//{authority}{path_abempty}|{rootless}){query}{fragment}$")
        }
        "uri-reference" => {
            let absolute = format!(r"/({pchar}+(/{pchar}*)*)?");
            let segment_nz_nc = r"([\w\.~!$&'()*+,;=@-]|%[0-9A-Fa-f][0-9A-Fa-f])+";
            let noscheme = format!(r"{segment_nz_nc}(/{pchar}*)*");
            format!(r"^(//{authority}{path_abempty}|{absolute}|{noscheme})?{query}{fragment}$")
        }
        "uri-template" => {
            let literals = r"([\x21\x23-\x24\x26\x28-\x3B\x3D\x3F-\x5B\x5D\x5F\x61-\x7A\x7E]|%[0-9A-Fa-f][0-9A-Fa-f])";
            let operator = r"[+#\./;\?&=,!@|]";
            let varchar = r"(\w|%[0-9A-Fa-f][0-9A-Fa-f])";
            let varname = format!(r"{varchar}(\.?{varchar})*");
            let varspec = format!(r"{varname}(:[1-9]\d?\d?\d?|\*)?");
            let expression = format!(r"\{{({operator})?{varspec}(,{varspec})*\}}");
            format!(r"^({literals}|{expression})*$")
        }
        "json-pointer" => r"^(/([\x00-\x2E]|[\x30-\x7D]|[\x7F-\U0010FFFF]|~[01])*)*$".to_string(),
        "relative-json-pointer" => {
            r"^(0|[1-9][0-9]*)(#|(/([\x00-\x2E]|[\x30-\x7D]|[\x7F-\U0010FFFF]|~[01])*)*)$".to_string()
        }
        _ => return None,
    })
}
