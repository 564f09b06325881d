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

#[test]
fn literal_eval_reads_one_literal() {
    use super::{literal_eval, PyValue};
    let dumps = |t: &str| literal_eval(t).map(|v| v.dumps().expect("dumps"));
    assert_eq!(dumps("(1, 'a', None)").as_deref(), Some(r#"[1, "a", null]"#));
    assert_eq!(dumps("{'k': True, 2: -3.5}").as_deref(), Some(r#"{"k": true, "2": -3.5}"#));
    assert_eq!(dumps(" \n[1]\n").as_deref(), Some("[1]"));
    assert_eq!(literal_eval("true"), None);
    assert_eq!(literal_eval("f(1)"), None);
    assert_eq!(literal_eval("1; 2"), None);
    assert_eq!(literal_eval("{1, 2}"), None);
    assert_eq!(literal_eval("'x'"), Some(PyValue::Str("x".into())));
}
