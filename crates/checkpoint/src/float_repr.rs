//! CPython's float `repr`, which both the version strings ([`crate::version_gen`]) and the
//! Python-style rendering of values ([`crate::value::repr`]) print floats with.

use std::fmt::Write as _;

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
pub(crate) fn write_python_float_repr(out: &mut String, x: f64) {
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

pub(crate) fn push_zeros(out: &mut String, n: usize) {
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
}
