//! Python `str` index arithmetic, for parsers whose vLLM code slices with
//! the result of `find` unchecked: `-1` (not found) then counts from the
//! end. Indices are in characters, as Python's are.

/// `s.find(sub)`.
pub fn find(s: &str, sub: &str) -> i64 {
    s.find(sub).map_or(-1, |b| s[..b].chars().count() as i64)
}

/// `s.rfind(sub)`.
pub fn rfind(s: &str, sub: &str) -> i64 {
    s.rfind(sub).map_or(-1, |b| s[..b].chars().count() as i64)
}

/// `s[start:end]` (`None`: open).
pub fn slice(s: &str, start: Option<i64>, end: Option<i64>) -> &str {
    let n = s.chars().count() as i64;
    let clamp = |i: i64| if i < 0 { (n + i).max(0) } else { i.min(n) };
    let (a, b) = (start.map_or(0, clamp), end.map_or(n, clamp));
    if a >= b {
        return "";
    }
    let byte = |i: i64| s.char_indices().nth(i as usize).map_or(s.len(), |(at, _)| at);
    &s[byte(a)..byte(b)]
}

/// `str.isspace` for one character.
pub fn py_isspace(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_indices_count_from_the_end() {
        assert_eq!(find("héllo", "l"), 2);
        assert_eq!(rfind("héllo", "x"), -1);
        assert_eq!(slice("héllo", None, Some(-1)), "héll");
        assert_eq!(slice("héllo", Some(-1 + 3), None), "llo");
        assert_eq!(slice("héllo", Some(4), Some(2)), "");
    }
}
