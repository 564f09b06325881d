//! `_normalize_model_output`: byte-level BPE's `Ġ` / `Ċ` read as space and
//! newline, and the collapsed `<functionname=` / `<paramname=` spellings
//! given back their space. Applying it when none occurs changes nothing, so
//! it is applied always; only the two spellings reach across deltas.

const PATTERNS: [(&str, &str); 2] = [("<functionname=", "<function name="), ("<paramname=", "<param name=")];

fn chars(text: &str) -> String {
    text.replace('\u{120}', " ").replace('\u{10a}', "\n")
}

/// The whole text normalized.
pub(super) fn normalize(text: &str) -> String {
    PATTERNS.iter().fold(chars(text), |t, (from, to)| t.replace(from, to))
}

/// How many bytes at the end of normalized `text` may still become one of
/// the collapsed spellings (ASCII: bytes are chars).
pub(super) fn pending_len(text: &str) -> usize {
    PATTERNS
        .iter()
        .map(|(from, _)| (1..from.len()).rev().find(|&k| text.ends_with(&from[..k])).unwrap_or(0))
        .max()
        .unwrap_or(0)
}

/// Appends `delta` to the normalized `text`, as normalizing the whole raw
/// text again would.
pub(super) fn normalize_step(text: &mut String, delta: &str) {
    let keep = text.len() - pending_len(text);
    let joined = text.split_off(keep) + &chars(delta);
    text.push_str(&PATTERNS.iter().fold(joined, |t, (from, to)| t.replace(from, to)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_collapsed_tag_across_deltas_reads_as_the_whole_text_does() {
        let mut text = String::new();
        for piece in ["a\u{120}<functionna", "me=\"f\"><param", "name=\"x\">1</param>"] {
            normalize_step(&mut text, piece);
        }
        assert_eq!(text, normalize("a\u{120}<functionname=\"f\"><paramname=\"x\">1</param>"));
        assert_eq!(text, "a <function name=\"f\"><param name=\"x\">1</param>");
    }
}
