//! Minting channel versions as LangGraph's savers do, with Python's float `repr`.
//!
//! Every shipped saver's `get_next_version` returns `f"{n + 1:032}.{random.random():016}"`
//! (docs/format.md#channel-versions). Reproducing those bytes needs two Python behaviours: the
//! Mersenne Twister
//! behind `random.random()` (see [`PyRandom`]) and CPython's float formatting, which is
//! [`python_float_repr`] here.

use std::fmt;
use std::fmt::Write as _;

use parking_lot::Mutex;

use crate::source::{OsRandom, PyRandom, RandomSource};
use crate::version::ChannelVersion;

/// CPython's `repr(x)` of a float: the shortest digits that read back as `x`, in positional
/// form (`0.0001`, `1.0`, `123.5`) unless the decimal exponent is below -4 or at least 16,
/// where Python switches to `1.2e-05` / `1e+16` (at least two exponent digits, `.0` never
/// added). Non-finite values are `inf`, `-inf` and `nan`.
pub fn python_float_repr(x: f64) -> String {
    let mut out = String::with_capacity(24);
    write_python_float_repr(&mut out, x);
    out
}

/// [`python_float_repr`] appended to `out`.
fn write_python_float_repr(out: &mut String, x: f64) {
    if x.is_nan() {
        out.push_str("nan");
        return;
    }
    if x.is_sign_negative() {
        out.push('-');
    }
    if x.is_infinite() {
        out.push_str("inf");
        return;
    }
    let (digits, exp) = shortest_digits(x.abs());
    if !(-4..16).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let e = exp.unsigned_abs();
        if e < 10 {
            out.push('0');
        }
        let _ = write!(out, "{e}");
    } else {
        // Digits before the decimal point; -4 ..= 16.
        let point = exp + 1;
        let ndigits = digits.len() as i32;
        if point <= 0 {
            out.push_str("0.");
            push_zeros(out, point.unsigned_abs() as usize);
            out.push_str(&digits);
        } else if point >= ndigits {
            out.push_str(&digits);
            push_zeros(out, (point - ndigits) as usize);
            out.push_str(".0");
        } else {
            let (int, frac) = digits.split_at(point as usize);
            out.push_str(int);
            out.push('.');
            out.push_str(frac);
        }
    }
}

fn push_zeros(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n('0', n));
}

/// Splits `{:e}` output (`d.ddde-N`) into its digits and decimal exponent.
fn split_sci(sci: &str) -> (String, i32) {
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci, "0"));
    let digits = mantissa.chars().filter(|c| *c != '.').collect();
    (digits, exp.parse().unwrap_or(0))
}

/// The shortest digits that read back as `x` (finite, non-negative) and the decimal exponent
/// of the first one, chosen as CPython chooses them.
///
/// Rust's `{:e}` already gives the shortest digits closest to `x`. The two differ only when
/// `x` lies exactly halfway between two shortest candidates (`853268168481533.25`): Rust
/// may round up where CPython takes the even last digit (`853268168481533.2`).
fn shortest_digits(x: f64) -> (String, i32) {
    let (digits, exp) = split_sci(&format!("{x:e}"));
    // An exact half needs the exact expansion of x to be at most 18 digits long, so x must
    // have at most 26 binary fraction bits (5^27 alone has 19 digits).
    let bits = x.to_bits();
    let (field, frac) = ((bits >> 52) as i32, bits & ((1 << 52) - 1));
    let (m, q) = if field == 0 {
        (frac, -1074)
    } else {
        (frac | 1 << 52, field - 1075)
    };
    if m == 0 || q + (m.trailing_zeros() as i32) < -26 {
        return (digits, exp);
    }
    // Exact: 800 places hold every double's full expansion.
    let (exact, exact_exp) = split_sci(&format!("{x:.800e}"));
    let n = digits.len();
    if exact_exp != exp || exact.len() <= n {
        return (digits, exp);
    }
    let (head, tail) = exact.split_at(n);
    let tie = tail.starts_with('5') && tail[1..].bytes().all(|b| b == b'0');
    if !tie {
        return (digits, exp);
    }
    let even = round_half_even(head, exp);
    // Next to a power of two the lower neighbour is nearer, so the even candidate may not
    // read back as x; CPython then keeps the one that does.
    if even.0 != digits && parse_digits(&even.0, even.1) == Some(x) {
        even
    } else {
        (digits, exp)
    }
}

/// Rounds `head` followed by an exact half to an even last digit.
fn round_half_even(head: &str, exp: i32) -> (String, i32) {
    let mut up: Vec<u8> = head.bytes().collect();
    // ASCII digits share their parity with their values.
    if up.last().is_none_or(|b| b & 1 == 0) {
        return (head.trim_end_matches('0').to_owned(), exp);
    }
    let mut i = up.len();
    while i > 0 {
        i -= 1;
        if up[i] == b'9' {
            up[i] = b'0';
        } else {
            up[i] += 1;
            return (
                String::from_utf8_lossy(&up)
                    .trim_end_matches('0')
                    .to_owned(),
                exp,
            );
        }
    }
    ("1".to_owned(), exp + 1)
}

/// Reads `d.ddd` times `10^exp` back as a double.
fn parse_digits(digits: &str, exp: i32) -> Option<f64> {
    let (first, rest) = digits.split_at(digits.len().min(1));
    format!("{first}.{rest}0e{exp}").parse().ok()
}

/// Appends `text` (the text of a number) as Python's `format(value, "0{width}")` gives
/// it: zeros go between the sign and the digits until the text is `width` characters long.
fn push_zero_padded(out: &mut String, text: &str, width: usize) {
    let (sign, body) = match text.strip_prefix('-') {
        Some(body) => ("-", body),
        None => ("", text),
    };
    out.push_str(sign);
    push_zeros(out, width.saturating_sub(sign.len() + body.len()));
    out.push_str(body);
}

/// A saver version string: `f"{counter:032}.{fraction:016}"` in Python, e.g.
/// `format_version(3, 0.8418417915109482)` is
/// `00000000000000000000000000000003.0.8418417915109482` and a fraction of `0.5` gives
/// `...03.00000000000000.5`.
///
/// Built in one buffer (one version is minted per super-step): Rust's sign-aware `{:032}`
/// pads an integer as Python's `032` does.
pub fn format_version(counter: i64, fraction: f64) -> String {
    let mut out = String::with_capacity(56);
    let _ = write!(out, "{counter:032}.");
    let mut repr = String::with_capacity(24);
    write_python_float_repr(&mut repr, fraction);
    push_zero_padded(&mut out, &repr, 16);
    out
}

/// The version minting of LangGraph's savers (`InMemorySaver`, `SqliteSaver`,
/// `PostgresSaver`): the integer part counts up, the fraction is a fresh
/// `random.random()`. Safe to share: the random source sits behind a mutex.
pub struct VersionGenerator {
    rng: Mutex<Box<dyn RandomSource>>,
}

impl VersionGenerator {
    /// A generator drawing fractions from `rng`.
    pub fn new(rng: Box<dyn RandomSource>) -> Self {
        VersionGenerator {
            rng: Mutex::new(rng),
        }
    }

    /// A generator drawing the fractions of `random.Random(seed)` (the golden traces use
    /// seed 1235 for versions).
    pub fn python_seeded(seed: u64) -> Self {
        Self::new(Box::new(PyRandom::new(seed)))
    }

    /// The version after `current` (docs/format.md#channel-versions): the integer part is 1 for
    /// `None`, else
    /// the current integer (the text before the first `.` of a string) plus one. A string
    /// whose integer part does not parse counts as 0 (Python would raise).
    pub fn next(&self, current: Option<&ChannelVersion>) -> ChannelVersion {
        let n = current.map_or(0, ChannelVersion::integer_part);
        let fraction = self.rng.lock().random();
        ChannelVersion::Str(format_version(n.saturating_add(1), fraction))
    }
}

impl Default for VersionGenerator {
    /// Fractions from an OS-seeded generator, as in production.
    fn default() -> Self {
        Self::new(Box::new(OsRandom::new()))
    }
}

impl fmt::Debug for VersionGenerator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VersionGenerator").finish_non_exhaustive()
    }
}

/// The integer versions used without a saver (docs/format.md#channel-versions): `None -> 1`, `n ->
/// n + 1`.
/// A string version counts by its integer part (Python would raise instead).
pub fn next_int_version(current: Option<&ChannelVersion>) -> ChannelVersion {
    let n = current.map_or(0, ChannelVersion::integer_part);
    ChannelVersion::Int(n.saturating_add(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repr_switches_to_exponent_form_at_python_thresholds() {
        assert_eq!(python_float_repr(0.0001), "0.0001");
        assert_eq!(python_float_repr(0.000012), "1.2e-05");
        assert_eq!(python_float_repr(1e16), "1e+16");
        assert_eq!(
            python_float_repr(9_999_999_999_999_998.0),
            "9999999999999998.0"
        );
        assert_eq!(python_float_repr(-0.0), "-0.0");
        assert_eq!(python_float_repr(5e-324), "5e-324");
        assert_eq!(python_float_repr(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn version_pads_both_parts_like_python_format() {
        assert_eq!(
            format_version(1, 0.5),
            "00000000000000000000000000000001.00000000000000.5"
        );
        assert_eq!(
            format_version(2, 0.000012),
            "00000000000000000000000000000002.0000000001.2e-05"
        );
        assert_eq!(
            format_version(-5, 0.25517664671157747),
            "-0000000000000000000000000000005.0.25517664671157747"
        );
    }

    #[test]
    fn next_counts_from_the_integer_part() {
        let gen = VersionGenerator::python_seeded(1235);
        let v1 = gen.next(None);
        assert_eq!(
            v1.to_string(),
            "00000000000000000000000000000001.0.9085506848193617"
        );
        let v2 = gen.next(Some(&ChannelVersion::Int(41)));
        assert_eq!(v2.integer_part(), 42);
        assert!(gen.next(Some(&v2)) > v2);
        assert_eq!(next_int_version(None), ChannelVersion::Int(1));
        assert_eq!(
            next_int_version(Some(&ChannelVersion::Int(7))),
            ChannelVersion::Int(8)
        );
        assert_eq!(next_int_version(Some(&v2)), ChannelVersion::Int(43));
    }
}
