//! The streaming scanner (transformers' `ResponseParser`): text goes to the
//! open region until a delimiter commits; text that could still become a
//! delimiter is held. The state keeps only the held text, a little consumed
//! context for look-behind, and the open region's body when its value is
//! wanted, so each chunk costs its own length.

use onig::{Region, SearchOptions};
use regex_automata::{Anchored, Input};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::content::{process, ToolParams};
use super::template::{Delim, Template};

/// Consumed text kept before the held text, for look-behind and `\b`.
const CONTEXT: usize = 64;

#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// `text`: the delimiter, less any part of it in the prompt.
    /// `width`: the delimiter's length (0 for an implicit region).
    Open {
        field: usize,
        text: String,
        width: usize,
    },
    Chunk {
        field: usize,
        text: String,
    },
    Close {
        field: usize,
        text: String,
        value: Option<Value>,
    },
    Malformed {
        field: usize,
        text: String,
    },
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Scanner {
    /// Consumed text just before `held`.
    before: String,
    held: String,
    current: Option<usize>,
    opened: bool,
    captures: Map<String, Value>,
    body: String,
    /// Bytes at the start of `held` that belong to the prompt.
    prompt_left: usize,
}

/// A committable delimiter: kind (open = true), field, span in the haystack
/// and the named captures.
struct Found {
    open: bool,
    field: usize,
    start: usize,
    end: usize,
    captures: Map<String, Value>,
}

impl Scanner {
    /// A scanner that has read the prompt's tail after the last anchor;
    /// the prompt's events are returned (they set state, never output).
    pub fn new(t: &Template, prompt: &str, tools: &ToolParams) -> (Scanner, Vec<Event>) {
        let mut s = Scanner { current: t.implicit, ..Scanner::default() };
        let mut events = Vec::new();
        let tail = t.after_last_anchor(prompt);
        if !tail.is_empty() {
            s.held.push_str(tail);
            s.run(t, tools, false, &mut events);
            s.prompt_left = s.held.len();
        }
        (s, events)
    }

    /// The text held back as a possible delimiter.
    pub fn held(&self) -> &str {
        &self.held
    }

    pub fn feed(&mut self, t: &Template, tools: &ToolParams, text: &str, eos: bool) -> Vec<Event> {
        self.held.push_str(text);
        let mut events = Vec::new();
        self.run(t, tools, eos, &mut events);
        events
    }

    fn run(&mut self, t: &Template, tools: &ToolParams, eos: bool, events: &mut Vec<Event>) {
        loop {
            let hay = format!("{}{}", self.before, self.held);
            let base = self.before.len();
            let (best, hold) = self.scan(t, &hay, base, eos);
            if let Some(f) = best {
                let (start, end) = (f.start - base, f.end - base);
                self.accumulate(t, start, events);
                let delim = self.consume(end - start);
                if f.open {
                    self.close_current(t, tools, String::new(), events);
                    self.current = Some(f.field);
                    self.captures = f.captures;
                    self.body.clear();
                    self.opened = true;
                    events.push(Event::Open { field: f.field, text: delim, width: end - start });
                } else {
                    let had_content = self.opened;
                    self.close_current(t, tools, delim, events);
                    if !had_content && start == end {
                        break;
                    }
                }
                continue;
            }
            if eos {
                self.accumulate(t, self.held.len(), events);
                self.close_current(t, tools, String::new(), events);
                break;
            }
            self.accumulate(t, hold - base, events);
            break;
        }
        self.trim_context();
    }

    /// Moves `n` bytes of `held` to the consumed side; returns the part of
    /// them that is output (not prompt).
    fn consume(&mut self, n: usize) -> String {
        let taken: String = self.held.drain(..n).collect();
        let prompt = self.prompt_left.min(n);
        self.prompt_left -= prompt;
        self.before.push_str(&taken);
        taken[prompt..].to_string()
    }

    fn trim_context(&mut self) {
        if self.before.len() > 2 * CONTEXT {
            let mut cut = self.before.len() - CONTEXT;
            while !self.before.is_char_boundary(cut) {
                cut += 1;
            }
            self.before.drain(..cut);
        }
    }

    /// `_accumulate`: the first `n` held bytes into the current region.
    fn accumulate(&mut self, t: &Template, n: usize, events: &mut Vec<Event>) {
        if n == 0 {
            return;
        }
        let Some(field) = self.current else {
            self.consume(n);
            return;
        };
        if !self.opened {
            self.opened = true;
            events.push(Event::Open { field, text: String::new(), width: 0 });
        }
        if t.fields[field].valued {
            self.body.push_str(&self.held[..n]);
        }
        let text = self.consume(n);
        if !text.is_empty() {
            events.push(Event::Chunk { field, text });
        }
    }

    /// `_close_current`: the region's value, then back to the implicit one.
    fn close_current(&mut self, t: &Template, tools: &ToolParams, delim: String, events: &mut Vec<Event>) {
        if let Some(field) = self.current.filter(|_| self.opened) {
            let f = &t.fields[field];
            if !f.valued {
                events.push(Event::Close { field, text: delim, value: None });
            } else {
                match process(&self.body, f, &self.captures, tools) {
                    Ok(value) => events.push(Event::Close { field, text: delim, value: Some(value) }),
                    Err(_) => events.push(Event::Malformed { field, text: delim }),
                }
            }
        }
        self.current = t.implicit;
        self.captures.clear();
        self.body.clear();
        self.opened = false;
    }

    /// `_watchlist` + `_scan`: the delimiter to commit now, if any, and
    /// where held text starts (`hay.len()` when nothing is pending).
    fn scan(&self, t: &Template, hay: &str, base: usize, eos: bool) -> (Option<Found>, usize) {
        let explicit = self.current.filter(|c| Some(*c) != t.implicit);
        let mut watch: Vec<(bool, usize, &Delim)> = Vec::new();
        match explicit {
            Some(c) => watch.extend(t.fields[c].close.as_ref().map(|d| (false, c, d))),
            None => {
                for (i, f) in t.fields.iter().enumerate() {
                    watch.extend(f.open.as_ref().map(|d| (true, i, d)));
                }
                if let Some(i) = t.implicit {
                    watch.extend(t.fields[i].close.as_ref().map(|d| (false, i, d)));
                }
            }
        }
        let mut hold = hay.len();
        let mut best: Option<(Found, (usize, isize, u8))> = None;
        let mut region = Region::new();
        for (open, field, delim) in watch {
            let found = delim.re.search_with_options(
                hay,
                base,
                hay.len(),
                SearchOptions::SEARCH_OPTION_NONE,
                Some(&mut region),
            );
            let Some((start, end)) = found.and_then(|_| region.pos(0)) else {
                if !eos {
                    if let Some(p) = partial_start(delim, hay, base) {
                        hold = hold.min(p);
                    }
                }
                continue;
            };
            if !eos && can_grow(delim, start, end, hay.len()) {
                hold = hold.min(start);
                continue;
            }
            let key = (start, -((end - start) as isize), u8::from(!open));
            let better = match &best {
                None => true,
                Some((b, k)) => key < *k || (key == *k && t.fields[field].name < t.fields[b.field].name),
            };
            if better {
                let captures = named_captures(delim, &region, hay);
                best = Some((Found { open, field, start, end, captures }, key));
            }
        }
        let best = best.map(|(f, _)| f).filter(|f| f.start < hold);
        (best, hold)
    }
}

fn named_captures(delim: &Delim, region: &Region, hay: &str) -> Map<String, Value> {
    let mut out = Map::new();
    delim.re.foreach_name(|name, groups| {
        let text = groups.iter().find_map(|&g| region.pos(g as usize)).map(|(s, e)| &hay[s..e]);
        if let Some(text) = text {
            out.insert(name.to_string(), Value::String(text.to_string()));
        }
        true
    });
    out
}

/// `_can_grow`: a complete match at the buffer's edge that more text could
/// change (zero-width, a regex, or a literal another one extends).
fn can_grow(delim: &Delim, start: usize, end: usize, len: usize) -> bool {
    if end != len {
        return false;
    }
    start == end || delim.literals.is_none() || delim.can_extend
}

/// The leftmost position from `from` where the rest of `hay` could still
/// grow into a match (the `regex` module's partial match); the text's end
/// (where nothing is held) is not reported.
fn partial_start(delim: &Delim, hay: &str, from: usize) -> Option<usize> {
    let dfa = delim.dfa.as_ref()?;
    let mut cache = dfa.create_cache();
    let bytes = hay.as_bytes();
    'start: for p in (from..hay.len()).filter(|&p| hay.is_char_boundary(p)) {
        let input = Input::new(hay).range(p..).anchored(Anchored::Yes);
        let Ok(mut sid) = dfa.start_state_forward(&mut cache, &input) else { return Some(p) };
        for &b in &bytes[p..] {
            sid = match dfa.next_state(&mut cache, sid, b) {
                Ok(next) => next,
                Err(_) => return Some(p),
            };
            if sid.is_dead() {
                continue 'start;
            }
            if sid.is_quit() {
                return Some(p);
            }
        }
        return Some(p);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::families::response_template::template::load;
    use serde_json::json;

    fn qwen3() -> Template {
        let mut t = load(&json!({
            "start_anchor": "<|im_start|>assistant\n",
            "fields": {
                "thinking": {"open": "<think>", "close": "</think>"},
                "tool_calls": {"open_pattern": "\\s*<tool_call>", "close": "</tool_call>", "repeats": true,
                               "content": "json", "transform": {"type": "function", "function": "{content}"}},
                "content": {"close_pattern": "\\s*(?:<\\|im_end\\|>)"}
            }
        }))
        .unwrap();
        t.fields[1].valued = true;
        t
    }

    fn chunks(events: &[Event]) -> String {
        events.iter().map(|e| if let Event::Chunk { text, .. } = e { text.as_str() } else { "" }).collect()
    }

    #[test]
    fn holds_what_could_become_a_delimiter() {
        let t = qwen3();
        let tools = ToolParams::new();
        let (mut s, _) = Scanner::new(&t, "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n", &tools);
        assert_eq!(chunks(&s.feed(&t, &tools, "a</th", false)), "a");
        assert_eq!(chunks(&s.feed(&t, &tools, "ink>Hi ", false)), "Hi");
        let events = s.feed(&t, &tools, "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>", false);
        let value = events.iter().find_map(|e| match e {
            Event::Close { value, .. } => value.clone(),
            _ => None,
        });
        assert_eq!(value, Some(json!({"type": "function", "function": {"name": "f", "arguments": {}}})));
        assert_eq!(chunks(&s.feed(&t, &tools, " bye  ", true)), " bye  ");
    }
}
