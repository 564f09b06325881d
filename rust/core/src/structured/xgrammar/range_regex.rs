//! The anchored regexes xgrammar writes for bounded integers and numbers:
//! integers as alternations of digit-length boxes, numbers as those plus
//! fraction patterns on a grid of six decimals (bounds snapped inwards).

/// Fraction digits a bounded `number` may have.
const FRACTION_DIGITS: usize = 6;

/// One digit in `low..=high` as a regex fragment.
fn digit_class(low: u8, high: u8) -> String {
    match (low, high) {
        _ if low == high => char::from(low).to_string(),
        (b'0', b'9') => r"\d".to_string(),
        _ => format!("[{}-{}]", char::from(low), char::from(high)),
    }
}

fn exact_digits(count: usize) -> String {
    match count {
        0 => String::new(),
        1 => r"\d".to_string(),
        _ => format!(r"\d{{{count}}}"),
    }
}

/// Patterns for the equal-length digit strings between `a` and `b`,
/// split on the first digit.
fn same_length(a: &str, b: &str) -> Vec<String> {
    let (a_bytes, b_bytes) = (a.as_bytes(), b.as_bytes());
    if a == b {
        return vec![a.to_string()];
    }
    let (Some(&a0), Some(&b0)) = (a_bytes.first(), b_bytes.first()) else { return Vec::new() };
    if a.len() == 1 {
        return vec![digit_class(a0, b0)];
    }
    let (a_rest, b_rest) = (&a[1..], &b[1..]);
    let prefixed = |first: u8, parts: Vec<String>| parts.into_iter().map(move |p| format!("{}{p}", char::from(first)));
    if a0 == b0 {
        return prefixed(a0, same_length(a_rest, b_rest)).collect();
    }
    if a_rest.bytes().all(|c| c == b'0') && b_rest.bytes().all(|c| c == b'9') {
        if a0 == b'0' && b0 == b'9' {
            return vec![exact_digits(a.len())];
        }
        return vec![digit_class(a0, b0) + &exact_digits(a.len() - 1)];
    }
    let mut parts: Vec<String> = prefixed(a0, same_length(a_rest, &"9".repeat(a.len() - 1))).collect();
    if b0 - a0 >= 2 {
        parts.push(digit_class(a0 + 1, b0 - 1) + &exact_digits(a.len() - 1));
    }
    parts.extend(prefixed(b0, same_length(&"0".repeat(a.len() - 1), b_rest)));
    parts
}

/// Compares decimal magnitudes without leading zeros.
fn compare_magnitudes(a: &str, b: &str) -> std::cmp::Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

fn magnitude_patterns(low: &str, high: &str) -> Vec<String> {
    if compare_magnitudes(low, high).is_gt() {
        return Vec::new();
    }
    let mut patterns = Vec::new();
    for len in low.len()..=high.len() {
        let a = if len == low.len() { low.to_string() } else { format!("1{}", "0".repeat(len - 1)) };
        let b = if len == high.len() { high.to_string() } else { "9".repeat(len) };
        patterns.extend(same_length(&a, &b));
    }
    patterns
}

fn magnitude_group(low: &str, high: &str) -> String {
    format!("({})", magnitude_patterns(low, high).join("|"))
}

fn at_least_patterns(low: &str) -> Vec<String> {
    let mut parts = same_length(low, &"9".repeat(low.len()));
    parts.push(format!(r"[1-9]\d{{{},}}", low.len()));
    parts
}

/// The digits of `|v|` (fine for `i64::MIN` too).
fn magnitude(v: i64) -> String {
    v.unsigned_abs().to_string()
}

pub(super) fn integer_range_regex(start: Option<i64>, end: Option<i64>) -> String {
    let mut parts: Vec<String> = Vec::new();
    match (start, end) {
        (None, None) => return r"^-?\d+$".to_string(),
        (Some(start), None) => {
            if start <= 0 {
                if start < 0 {
                    parts.push(format!("-{}", magnitude_group("1", &magnitude(start))));
                }
                parts.push("0".into());
                parts.push(r"[1-9]\d*".into());
            } else {
                parts.extend(at_least_patterns(&start.to_string()));
            }
        }
        (None, Some(end)) => {
            if end >= 0 {
                parts.push(r"-[1-9]\d*".into());
                parts.push("0".into());
                if end > 0 {
                    parts.push(magnitude_group("1", &end.to_string()));
                }
            } else {
                parts.extend(at_least_patterns(&magnitude(end)).into_iter().map(|p| format!("-{p}")));
            }
        }
        (Some(start), Some(end)) => {
            if start > end {
                return "^()$".to_string();
            }
            if start < 0 {
                let negative_end = end.min(-1);
                parts.push(format!("-{}", magnitude_group(&magnitude(negative_end), &magnitude(start))));
            }
            if start <= 0 && end >= 0 {
                parts.push("0".into());
            }
            if end > 0 {
                parts.push(magnitude_group(&start.max(1).to_string(), &end.to_string()));
            }
        }
    }
    format!("^({})$", parts.join("|"))
}

/// `value` on the grid of `FRACTION_DIGITS` decimals, without trailing zeros.
fn format_grid(value: f64) -> String {
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&value) && value == value.trunc() {
        return (value as i64).to_string();
    }
    let text = format!("{value:.FRACTION_DIGITS$}");
    match text.find('.') {
        Some(dot) => {
            let trimmed = text.trim_end_matches('0');
            if trimmed.len() == dot + 1 {
                text[..dot].to_string()
            } else {
                trimmed.to_string()
            }
        }
        None => text,
    }
}

fn split_decimal(text: &str) -> (&str, &str) {
    text.split_once('.').unwrap_or((text, ""))
}

/// One grid step up or down from a canonical non-negative decimal.
fn step_grid(text: &str, up: bool) -> String {
    let (int_part, frac_part) = split_decimal(text);
    let mut digits: Vec<u8> = int_part.bytes().collect();
    digits.extend(frac_part.bytes());
    digits.extend(std::iter::repeat_n(b'0', FRACTION_DIGITS.saturating_sub(frac_part.len())));
    let (carry_from, carry_to) = if up { (b'9', b'0') } else { (b'0', b'9') };
    let mut index = digits.len();
    while index > 0 && digits[index - 1] == carry_from {
        digits[index - 1] = carry_to;
        index -= 1;
    }
    if index == 0 {
        if up {
            digits.insert(0, b'1');
        } else {
            digits.iter_mut().for_each(|d| *d = b'0');
        }
    } else if up {
        digits[index - 1] += 1;
    } else {
        digits[index - 1] -= 1;
    }
    while digits.len() <= FRACTION_DIGITS {
        digits.insert(0, b'0');
    }
    let split = digits.len() - FRACTION_DIGITS;
    let int_text: String = digits[..split].iter().map(|&d| char::from(d)).collect();
    let frac_text: String = digits[split..].iter().map(|&d| char::from(d)).collect();
    let int_text = match int_text.trim_start_matches('0') {
        "" => "0".to_string(),
        trimmed => trimmed.to_string(),
    };
    let frac_text = frac_text.trim_end_matches('0');
    if frac_text.is_empty() {
        int_text
    } else {
        format!("{int_text}.{frac_text}")
    }
}

/// Snaps a non-negative bound onto the grid, inwards; returns the grid text
/// and whether the boundary value itself stays excluded.
fn bound_on_grid(value: f64, is_lower: bool, strict: bool) -> (String, bool) {
    let text = format_grid(value);
    let snapped: f64 = text.parse().unwrap_or(value);
    if snapped == value {
        return (text, strict);
    }
    if is_lower && snapped < value {
        return (step_grid(&text, true), false);
    }
    if !is_lower && snapped > value {
        return (step_grid(&text, false), false);
    }
    (text, false)
}

fn free_digits(count: i64) -> String {
    if count <= 0 {
        String::new()
    } else {
        format!(r"\d{{0,{count}}}")
    }
}

fn optional_zeros(count: i64) -> String {
    if count <= 0 {
        String::new()
    } else {
        format!("0{{0,{count}}}")
    }
}

fn some_zeros(count: i64) -> String {
    format!("0{{1,{count}}}")
}

/// Fraction digit strings (1..=max_len digits) and whether no fraction at
/// all also qualifies.
#[derive(Default)]
struct Fractions {
    parts: Vec<String>,
    include_empty: bool,
}

/// Fractions `t` with `0.t > 0.s` (or `>=` unless strict).
fn fractions_above(s: &str, strict: bool, max_len: i64) -> Fractions {
    let mut result = Fractions::default();
    let n = s.len() as i64;
    for (i, digit) in s.bytes().enumerate() {
        if digit < b'9' {
            result.parts.push(format!(
                "{}{}{}",
                &s[..i],
                digit_class(digit + 1, b'9'),
                free_digits(max_len - i as i64 - 1)
            ));
        }
    }
    let mut zeros = 0;
    while n + zeros < max_len {
        result.parts.push(format!("{s}{}[1-9]{}", "0".repeat(zeros as usize), free_digits(max_len - n - zeros - 1)));
        zeros += 1;
    }
    if !strict {
        if n > 0 {
            result.parts.push(format!("{s}{}", optional_zeros(max_len - n)));
        } else {
            result.include_empty = true;
            if max_len >= 1 {
                result.parts.push(some_zeros(max_len));
            }
        }
    }
    result
}

/// Fractions `t` with `0.t < 0.s` (or `<=` unless strict).
fn fractions_below(s: &str, strict: bool, max_len: i64) -> Fractions {
    let mut result = Fractions::default();
    let n = s.len() as i64;
    for (i, digit) in s.bytes().enumerate() {
        if digit > b'0' {
            result.parts.push(format!(
                "{}{}{}",
                &s[..i],
                digit_class(b'0', digit - 1),
                free_digits(max_len - i as i64 - 1)
            ));
        }
    }
    for i in 0..s.len() {
        if i == 0 {
            if max_len >= 1 {
                result.parts.push(some_zeros(max_len));
            }
        } else {
            result.parts.push(format!("{}{}", &s[..i], optional_zeros(max_len - i as i64)));
        }
    }
    if !strict {
        if n > 0 {
            result.parts.push(format!("{s}{}", optional_zeros(max_len - n)));
        } else if max_len >= 1 {
            result.parts.push(some_zeros(max_len));
        }
    }
    result.include_empty = n > 0 || !strict;
    result
}

/// Fractions between `0.a` and `0.b` (`0.a < 0.b`, `b` non-empty).
fn fractions_between(a: &str, strict_a: bool, b: &str, strict_b: bool, max_len: i64) -> Fractions {
    let mut result = Fractions::default();
    let (a_bytes, b_bytes) = (a.as_bytes(), b.as_bytes());
    let padded_a = |i: usize| a_bytes.get(i).copied().unwrap_or(b'0');
    let mut common = 0;
    while common < b_bytes.len() && padded_a(common) == b_bytes[common] {
        common += 1;
    }
    // `0.a < 0.b` keeps the common prefix shorter than `b`.
    let Some(&digit_b) = b_bytes.get(common) else { return result };
    let prefix = &b[..common];
    let digit_a = padded_a(common);
    let rest_len = max_len - common as i64 - 1;
    if digit_b >= digit_a + 2 {
        result.parts.push(format!("{prefix}{}{}", digit_class(digit_a + 1, digit_b - 1), free_digits(rest_len)));
    }
    let lower_prefix = format!("{prefix}{}", char::from(digit_a));
    if common < a.len() {
        let lower = fractions_above(&a[common + 1..], strict_a, rest_len);
        result.parts.extend(lower.parts.into_iter().map(|p| format!("{lower_prefix}{p}")));
        if lower.include_empty {
            result.parts.push(lower_prefix.clone());
        }
    } else {
        let lower = fractions_above("", true, rest_len);
        result.parts.extend(lower.parts.into_iter().map(|p| format!("{lower_prefix}{p}")));
        if !strict_a {
            if !a.is_empty() {
                result.parts.push(format!("{a}{}", optional_zeros(max_len - a.len() as i64)));
            } else {
                result.include_empty = true;
                if max_len >= 1 {
                    result.parts.push(some_zeros(max_len));
                }
            }
        }
    }
    let upper_prefix = format!("{prefix}{}", char::from(digit_b));
    let upper = fractions_below(&b[common + 1..], strict_b, rest_len);
    result.parts.extend(upper.parts.into_iter().map(|p| format!("{upper_prefix}{p}")));
    if upper.include_empty {
        result.parts.push(upper_prefix);
    }
    result
}

fn compare_decimals(a: (&str, &str), b: (&str, &str)) -> std::cmp::Ordering {
    compare_magnitudes(a.0, b.0).then_with(|| {
        let len = a.1.len().max(b.1.len());
        let digit = |s: &str, i: usize| s.as_bytes().get(i).copied().unwrap_or(b'0');
        (0..len).map(|i| digit(a.1, i).cmp(&digit(b.1, i))).find(|o| o.is_ne()).unwrap_or(std::cmp::Ordering::Equal)
    })
}

/// An integer part's value, capped at `i64::MAX`.
fn capped_integer(digits: &str) -> i64 {
    digits.parse().unwrap_or(i64::MAX)
}

fn strip_anchors(regex: &str) -> &str {
    regex.get(1..regex.len().saturating_sub(1)).unwrap_or(regex)
}

/// Unsigned decimals between `low` and `high` (never the value 0).
fn positive_parts(low: &str, strict_low: bool, high: Option<&str>, strict_high: bool) -> Vec<String> {
    let mut parts = Vec::new();
    let (int_low, frac_low) = split_decimal(low);
    let strict_low = strict_low || (int_low == "0" && frac_low.is_empty());
    let int_low_value = capped_integer(int_low);
    let any_fraction = format!(r"(\.\d{{1,{FRACTION_DIGITS}}})?");
    let max_len = FRACTION_DIGITS as i64;
    let add = |int_part: &str, set: Fractions, parts: &mut Vec<String>| {
        parts.extend(set.parts.into_iter().map(|p| format!(r"{int_part}\.{p}")));
        if set.include_empty {
            parts.push(int_part.to_string());
        }
    };
    let Some(high) = high else {
        add(int_low, fractions_above(frac_low, strict_low, max_len), &mut parts);
        if int_low_value < i64::MAX {
            parts.push(format!("{}{any_fraction}", strip_anchors(&integer_range_regex(Some(int_low_value + 1), None))));
        }
        return parts;
    };
    let (int_high, frac_high) = split_decimal(high);
    let int_high_value = capped_integer(int_high);
    let order = compare_decimals((int_low, frac_low), (int_high, frac_high));
    if order.is_gt() || (order.is_eq() && (strict_low || strict_high)) {
        return parts;
    }
    if order.is_eq() {
        if frac_low.is_empty() {
            parts.push(format!(r"{int_low}(\.{})?", some_zeros(max_len)));
        } else {
            parts.push(format!(r"{int_low}\.{frac_low}{}", optional_zeros(max_len - frac_low.len() as i64)));
        }
        return parts;
    }
    if int_low == int_high {
        add(int_low, fractions_between(frac_low, strict_low, frac_high, strict_high, max_len), &mut parts);
    } else {
        add(int_low, fractions_above(frac_low, strict_low, max_len), &mut parts);
        if int_high_value - int_low_value >= 2 {
            let middle = integer_range_regex(Some(int_low_value + 1), Some(int_high_value - 1));
            parts.push(format!("{}{any_fraction}", strip_anchors(&middle)));
        }
        add(int_high, fractions_below(frac_high, strict_high, max_len), &mut parts);
    }
    parts
}

pub(super) fn float_range_regex(
    start: Option<f64>,
    end: Option<f64>,
    exclusive_start: bool,
    exclusive_end: bool,
) -> String {
    if let (Some(s), Some(e)) = (start, end) {
        if s > e || (s == e && (exclusive_start || exclusive_end)) {
            return "^()$".to_string();
        }
    }
    if start.is_none() && end.is_none() {
        return format!(r"^-?\d+(\.\d{{1,{FRACTION_DIGITS}}})?$");
    }
    let mut parts = Vec::new();
    // Negatives: x in [start, end] iff -x in [-end, -start].
    let negatives = start.is_none_or(|s| s < 0.0);
    if negatives {
        let (low, strict_low) = match end {
            Some(e) if e < 0.0 => bound_on_grid(-e, true, exclusive_end),
            _ => ("0".to_string(), true),
        };
        let high = start.map(|s| bound_on_grid(-s, false, exclusive_start));
        let (high_text, strict_high) = match &high {
            Some((text, strict)) => (Some(text.as_str()), *strict),
            None => (None, false),
        };
        parts.extend(positive_parts(&low, strict_low, high_text, strict_high).into_iter().map(|p| format!("-{p}")));
    }
    let zero_allowed = start.is_none_or(|s| s < 0.0 || (s == 0.0 && !exclusive_start))
        && end.is_none_or(|e| e > 0.0 || (e == 0.0 && !exclusive_end));
    if zero_allowed {
        parts.push(format!(r"0(\.{})?", some_zeros(FRACTION_DIGITS as i64)));
        if negatives {
            parts.push(format!(r"-0(\.{})", some_zeros(FRACTION_DIGITS as i64)));
        }
    }
    if end.is_none_or(|e| e > 0.0) {
        let (low, strict_low) = match start {
            Some(s) if s > 0.0 => bound_on_grid(s, true, exclusive_start),
            _ => ("0".to_string(), true),
        };
        let high = end.map(|e| bound_on_grid(e, false, exclusive_end));
        let (high_text, strict_high) = match &high {
            Some((text, strict)) => (Some(text.as_str()), *strict),
            None => (None, false),
        };
        parts.extend(positive_parts(&low, strict_low, high_text, strict_high));
    }
    format!("^({})$", parts.join("|"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_ranges_read_like_xgrammar() {
        assert_eq!(integer_range_regex(Some(-5), Some(100)), r"^(-([1-5])|0|([1-9]|[1-9]\d|100))$");
        assert_eq!(integer_range_regex(Some(1), None), r"^([1-9]|[1-9]\d{1,})$");
        assert_eq!(integer_range_regex(Some(0), None), r"^(0|[1-9]\d*)$");
    }
}
