//! The incremental stream against the whole-text algorithm it replaced
//! (vLLM's: every call rescans the text so far), on many chunkings.

use super::*;
use crate::parse::Snapshot;

/// The whole-text streaming algorithm: content before the first tag, then
/// every region's name and argument diff, recomputed from the text so far.
#[derive(Default)]
struct WholeText {
    sent_content: usize,
    names: Vec<Option<String>>,
    streamed_args: Vec<String>,
}

/// Each region's JSON text and whether it is complete.
fn call_jsons(text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(s) = text[pos..].find(START) {
        let json_start = pos + s + START.len();
        match text[json_start..].find(END) {
            Some(e) => {
                out.push((text[json_start..json_start + e].trim().to_string(), true));
                pos = json_start + e + END.len();
            }
            None => {
                let raw = &text[json_start..];
                let json = raw[..before_last_chars(raw, partial_tag_overlap(raw, END))].trim();
                out.push((json.to_string(), !json.is_empty() && loads(json).is_some()));
                break;
            }
        }
    }
    out
}

impl WholeText {
    fn step(&mut self, current: &str) -> Step {
        let sendable = match current.find(START) {
            Some(i) => current[..i].chars().count(),
            None => current.chars().count() - partial_tag_overlap(current, START),
        };
        let mut content = None;
        if sendable > self.sent_content {
            content = Some(current.chars().skip(self.sent_content).take(sendable - self.sent_content).collect());
            self.sent_content = sendable;
        }
        let mut deltas = Vec::new();
        for (i, (json, complete)) in call_jsons(current).into_iter().enumerate() {
            if i >= self.names.len() {
                self.names.push(None);
                self.streamed_args.push(String::new());
            }
            if self.names[i].is_none() {
                let Some(name) = tool_name(&json) else { break };
                self.names[i] = Some(name.clone());
                deltas.push((i as i64, Some(name), None));
            }
            if let Some(args) = tool_args(&json, complete) {
                let sent = self.streamed_args[i].chars().count();
                if args.chars().count() > sent {
                    let diff: String = args.chars().skip(sent).collect();
                    self.streamed_args[i] = args;
                    deltas.push((i as i64, None, Some(diff)));
                }
            }
        }
        (content.is_some() || !deltas.is_empty()).then_some((content, deltas))
    }
}

type Step = Option<(Option<String>, Vec<(i64, Option<String>, Option<String>)>)>;

fn simplify(d: Option<Delta>) -> Step {
    d.map(|d| {
        let calls = d
            .tool_calls
            .into_iter()
            .map(|tc| {
                let (name, args) = tc.function.map_or((None, None), |f| (f.name, f.arguments));
                (tc.index, name, args)
            })
            .collect();
        (d.content, calls)
    })
}

const TEXTS: &[&str] = &[
    "Just an answer, no calls at all.",
    "Hello <tool and <to then more",
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
    "Checking. <tool_call>{\"name\": \"a\", \"arguments\": {\"x\": [1, 2, {\"y\": \"}\"}]}}</tool_call>\n\
     <tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call> trailing",
    "<tool_call>{\"arguments\": {\"q\": 1}, \"name\": \"late_name\"}</tool_call>",
    "<tool_call>{\"nam\": \"broken\"}</tool_call><tool_call>{\"name\": \"never\", \"arguments\": {}}</tool_call>",
    "<tool_call>{\"name\": \"unclosed\", \"arguments\": {\"text\": \"巴黎 🌧 </tool\"",
    "pre <tool_call>{\"name\": \"f\", \"arguments\": \"raw\"} </tool_call>x<tool_call> {\"name\" : \"g\" , \"arguments\" :{\"k\":\"</tool_call\"}}</tool_call>",
    "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}}</tool_call>",
    "<<tool_call>{\"name\": \"x\", \"arguments\": {\"n\": NaN}}",
];

/// A small deterministic PRNG (splitmix64).
fn next(seed: &mut u64) -> u64 {
    *seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *seed;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `text` cut into chunks at char boundaries.
fn chunkings(text: &str, seed: &mut u64) -> Vec<Vec<String>> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = vec![vec![text.to_string()], chars.iter().map(|c| c.to_string()).collect()];
    for _ in 0..40 {
        let mut parts = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let n = 1 + (next(seed) % 9) as usize;
            parts.push(chars[i..(i + n).min(chars.len())].iter().collect());
            i += n;
        }
        out.push(parts);
    }
    out
}

fn stream(parts: &[String], restore_each_call: bool) -> Vec<Step> {
    let ctx = ChatContext::from_request(&Default::default(), &Default::default());
    let mut parser = HermesParser::new(&HERMES);
    let mut steps = Vec::new();
    for part in parts {
        if restore_each_call {
            let saved = parser.save_state().unwrap();
            parser = HermesParser::new(&HERMES);
            parser.load_state(saved).unwrap();
        }
        let texts = Texts { previous: "", current: "", delta: part };
        let ids = Ids { previous: &[], current: &[], delta: &[] };
        steps.push(simplify(parser.extract_tool_calls_streaming(&texts, &ids, &ctx)));
    }
    steps
}

#[test]
fn incremental_stream_gives_the_whole_text_algorithms_deltas() {
    let mut seed = 11;
    for text in TEXTS {
        for parts in chunkings(text, &mut seed) {
            let mut whole = WholeText::default();
            let mut current = String::new();
            let expected: Vec<Step> = parts
                .iter()
                .map(|p| {
                    current.push_str(p);
                    whole.step(&current)
                })
                .collect();
            assert_eq!(stream(&parts, false), expected, "{text:?} as {parts:?}");
            assert_eq!(stream(&parts, true), expected, "{text:?} restored, as {parts:?}");
        }
    }
}

#[test]
fn state_is_the_open_call_not_the_output() {
    let ctx = ChatContext::from_request(&Default::default(), &Default::default());
    let mut parser = HermesParser::new(&HERMES);
    let call = "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>\n";
    for _ in 0..50 {
        let texts = Texts { previous: "", current: "", delta: call };
        parser.extract_tool_calls_streaming(&texts, &Ids { previous: &[], current: &[], delta: &[] }, &ctx);
    }
    assert_eq!(parser.settled, 50);
    assert!(parser.save_state().unwrap().to_string().len() < 64);
}
