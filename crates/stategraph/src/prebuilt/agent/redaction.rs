//! The PII detectors and redaction strategies of [`PiiMiddleware`](super::PiiMiddleware)
//! (langchain's `agents/middleware/_redaction.py`).
//!
//! The built-in detectors use Python's patterns, compiled with the `regex` crate: they
//! use no feature `regex` lacks (no look-around, no back-references), and both engines
//! pick the same leftmost-first matches. Where the two read a class differently, the
//! detectors run on a view of the text in which each such character is swapped for one
//! both read alike: Python's `\w` (behind `\b`) is letters, numbers and `_`, `regex`'s
//! also takes marks and connector punctuation but not `No` numbers such as `²`; Python's
//! `\s` also takes `\x1c`..`\x1f`. Card digits outside ASCII (any `\d`) count with their
//! value, as Python's `int`. A custom regex ([`Detector::regex`]) is `regex`'s own.
//! Offsets ([`PiiMatch::start`], `end`) count characters (code points), as Python's do,
//! so a custom detector's matches and the strategies' slicing are Python's.

use std::borrow::Cow;
use std::sync::{Arc, LazyLock};

use regex::Regex;
use sha2::{Digest, Sha256};

use super::error::MiddlewareConfigError;

/// One detected value (Python's `PIIMatch`): offsets in characters, end exclusive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PiiMatch {
    /// The PII type (`email`, `credit_card`, ... or a custom name).
    pub pii_type: String,
    /// The matched text.
    pub value: String,
    /// Where the match starts, in characters.
    pub start: usize,
    /// Where the match ends (exclusive), in characters.
    pub end: usize,
}

/// How detected values are handled (Python's `RedactionStrategy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RedactionStrategy {
    /// Fail the hook with a `PIIDetectionError`.
    Block,
    /// Replace each value with `[REDACTED_<TYPE>]`.
    #[default]
    Redact,
    /// Keep the last characters (`****-****-****-1234`, `user@****.com`, ...).
    Mask,
    /// Replace each value with `<type_hash:first 8 hex digits of its SHA-256>`.
    Hash,
}

/// The error of the `block` strategy (Python's `PIIDetectionError`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("Detected {} instance(s) of {pii_type} in text content", matches.len())]
pub struct PiiDetectionError {
    /// The type of the first match.
    pub pii_type: String,
    /// Every match found.
    pub matches: Vec<PiiMatch>,
}

type DetectFn = dyn Fn(&str) -> Vec<PiiMatch> + Send + Sync;

/// Finds the values of one PII type in a text: a built-in detector, a regex, or a
/// function (Python's `detector=`).
#[derive(Clone)]
pub struct Detector(Arc<DetectFn>);

impl std::fmt::Debug for Detector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Detector")
    }
}

impl Detector {
    /// A detector of `f`'s matches (offsets in characters; a match without a type gets
    /// the middleware's when `f` leaves `pii_type` empty).
    pub fn function(f: impl Fn(&str) -> Vec<PiiMatch> + Send + Sync + 'static) -> Detector {
        Detector(Arc::new(f))
    }

    /// A detector of `pattern`'s matches, typed `pii_type` (a pattern `regex` refuses,
    /// such as one with look-around or back-references, is a [`MiddlewareConfigError`]).
    pub fn regex(pii_type: &str, pattern: &str) -> Result<Detector, MiddlewareConfigError> {
        let re = Regex::new(pattern).map_err(|e| {
            MiddlewareConfigError::new("PIIMiddleware", format!("detector {pattern:?}: {e}"))
        })?;
        let pii_type = pii_type.to_owned();
        Ok(Detector(Arc::new(move |text| {
            find_all(&re, text, &pii_type, |_| true)
        })))
    }

    /// The built-in detector of `pii_type` (`email`, `credit_card`, `ip`, `mac_address`,
    /// `url`), if there is one.
    pub fn builtin(pii_type: &str) -> Option<Detector> {
        let f: fn(&str) -> Vec<PiiMatch> = match pii_type {
            "email" => detect_email,
            "credit_card" => detect_credit_card,
            "ip" => detect_ip,
            "mac_address" => detect_mac_address,
            "url" => detect_url,
            _ => return None,
        };
        Some(Detector(Arc::new(f)))
    }

    /// The matches in `text`.
    pub fn detect(&self, text: &str) -> Vec<PiiMatch> {
        (self.0)(text)
    }
}

/// The names of the built-in detectors, in Python's order.
pub const BUILTIN_PII_TYPES: [&str; 5] = ["email", "credit_card", "ip", "mac_address", "url"];

fn re(pattern: &str) -> Regex {
    #[allow(clippy::expect_used)] // the built-in patterns are constants
    Regex::new(pattern).expect("a built-in pattern")
}

static PY_WORD: LazyLock<Regex> = LazyLock::new(|| re(r"^[\p{L}\p{N}_]$"));
static RS_WORD: LazyLock<Regex> = LazyLock::new(|| re(r"^\w$"));
static DIGIT: LazyLock<Regex> = LazyLock::new(|| re(r"^\d$"));

fn char_is(re: &Regex, c: char) -> bool {
    re.is_match(c.encode_utf8(&mut [0; 4]))
}

/// `text` as Python's `re` reads it, for `regex`: each character the two place
/// differently in `\w` or `\s` swapped for one they place alike (one character for one).
fn python_view(text: &str) -> Cow<'_, str> {
    if text.is_ascii() && !text.bytes().any(|b| (0x1c..=0x1f).contains(&b)) {
        return Cow::Borrowed(text);
    }
    let swap = |c: char| match c {
        '\x1c'..='\x1f' => '\x0b',
        c if c.is_ascii() => c,
        c => match (char_is(&PY_WORD, c), char_is(&RS_WORD, c)) {
            (true, false) => '\u{aa}', // a letter (`ª`) in no pattern's class
            (false, true) => '\u{ac}', // a symbol (`¬`) in no pattern's class
            _ => c,
        },
    };
    Cow::Owned(text.chars().map(swap).collect())
}

/// A decimal digit's value (`\d` is Unicode's `Nd`, in runs of ten from 0).
fn digit_value(c: char) -> Option<u32> {
    if let Some(d) = c.to_digit(10) {
        return Some(d);
    }
    if !char_is(&DIGIT, c) {
        return None;
    }
    let mut below = 0;
    while char::from_u32(c as u32 - below - 1).is_some_and(|p| char_is(&DIGIT, p)) {
        below += 1;
    }
    Some(below % 10)
}

/// The built-in pattern `re`'s matches in `text` as Python finds them (see the module's
/// docs), that `keep` accepts, with character offsets.
fn find_python(
    re: &Regex,
    text: &str,
    pii_type: &str,
    keep: impl Fn(&str) -> bool,
) -> Vec<PiiMatch> {
    let view = python_view(text);
    if let Cow::Borrowed(_) = view {
        return find_all(re, text, pii_type, keep);
    }
    let chars: Vec<char> = text.chars().collect();
    find_all(re, &view, pii_type, |_| true)
        .into_iter()
        .filter_map(|mut m| {
            m.value = chars[m.start..m.end].iter().collect();
            keep(&m.value).then_some(m)
        })
        .collect()
}

/// `re`'s matches in `text` that `keep` accepts, with character offsets.
fn find_all(re: &Regex, text: &str, pii_type: &str, keep: impl Fn(&str) -> bool) -> Vec<PiiMatch> {
    re.find_iter(text)
        .filter(|m| keep(m.as_str()))
        .map(|m| PiiMatch {
            pii_type: pii_type.to_owned(),
            value: m.as_str().to_owned(),
            start: text[..m.start()].chars().count(),
            end: text[..m.end()].chars().count(),
        })
        .collect()
}

static EMAIL: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Z|a-z]{2,}\b"));
static CARD: LazyLock<Regex> = LazyLock::new(|| re(r"\b\d{4}[\s-]?\d{4}[\s-]?\d{4}[\s-]?\d{4}\b"));
static IPV4: LazyLock<Regex> = LazyLock::new(|| re(r"\b(?:[0-9]{1,3}\.){3}[0-9]{1,3}\b"));
static MAC: LazyLock<Regex> = LazyLock::new(|| re(r"\b([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}\b"));
static URL_SCHEME: LazyLock<Regex> = LazyLock::new(|| re(r#"https?://[^\s<>"{}|\\^`\[\]]+"#));
static URL_BARE: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"\b(?:www\.)?[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?",
        r"(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+(?:/[^\s]*)?"
    ))
});

/// Email addresses.
pub fn detect_email(text: &str) -> Vec<PiiMatch> {
    find_python(&EMAIL, text, "email", |_| true)
}

/// Card numbers (16 digits, optionally grouped by spaces or dashes) passing Luhn's check.
pub fn detect_credit_card(text: &str) -> Vec<PiiMatch> {
    find_python(&CARD, text, "credit_card", passes_luhn)
}

/// IPv4 addresses Python's `ipaddress.ip_address` accepts (each part at most 255, no
/// leading zero).
pub fn detect_ip(text: &str) -> Vec<PiiMatch> {
    find_python(&IPV4, text, "ip", |ip| {
        ip.split('.').all(|part| {
            (part == "0" || !part.starts_with('0')) && part.parse::<u32>().is_ok_and(|n| n <= 255)
        })
    })
}

/// MAC addresses (six hex pairs split by `:` or `-`).
pub fn detect_mac_address(text: &str) -> Vec<PiiMatch> {
    find_python(&MAC, text, "mac_address", |_| true)
}

/// URLs: `http(s)://` ones with a host, then bare ones (`www.` or with a path) that do
/// not overlap them.
pub fn detect_url(text: &str) -> Vec<PiiMatch> {
    // `urlparse` finds a host when the text after `://` does not start the path,
    // query or fragment.
    let mut found = find_python(&URL_SCHEME, text, "url", |url| {
        let rest = url.split_once("://").map_or("", |(_, r)| r);
        !rest.starts_with(['/', '?', '#'])
    });
    // A bare match's host (the text before its first `/`) always holds a dot.
    let bare = find_python(&URL_BARE, text, "url", |url| {
        url.contains('/') || url.starts_with("www.")
    });
    for m in bare {
        let overlaps = found.iter().any(|f| {
            (f.start <= m.start && m.start < f.end) || (f.start < m.end && m.end <= f.end)
        });
        if !overlaps {
            found.push(m);
        }
    }
    found
}

fn passes_luhn(number: &str) -> bool {
    let digits: Vec<u32> = number.chars().filter_map(digit_value).collect();
    if !(13..=19).contains(&digits.len()) {
        return false;
    }
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| match (i % 2 == 1, d * 2) {
            (true, v) if v > 9 => v - 9,
            (true, v) => v,
            (false, _) => d,
        })
        .sum();
    sum.is_multiple_of(10)
}

/// `text` with each match replaced as `strategy` says, the last first (Python's
/// `apply_strategy`; offsets out of range are clamped as Python's slices are).
pub fn apply_strategy(
    text: &str,
    matches: &[PiiMatch],
    strategy: RedactionStrategy,
) -> Result<String, PiiDetectionError> {
    if matches.is_empty() {
        return Ok(text.to_owned());
    }
    if strategy == RedactionStrategy::Block {
        return Err(PiiDetectionError {
            pii_type: matches[0].pii_type.clone(),
            matches: matches.to_vec(),
        });
    }
    let mut sorted: Vec<&PiiMatch> = matches.iter().collect();
    sorted.sort_by_key(|m| std::cmp::Reverse(m.start)); // stable, as Python's `sorted`
    let mut chars: Vec<char> = text.chars().collect();
    for m in sorted {
        let replacement = match strategy {
            RedactionStrategy::Mask => mask(m),
            RedactionStrategy::Hash => {
                let digest = hex_digest(m.value.as_bytes());
                format!("<{}_hash:{}>", m.pii_type, &digest[..8])
            }
            _ => format!("[REDACTED_{}]", m.pii_type.to_uppercase()),
        };
        let (start, end) = (m.start.min(chars.len()), m.end.min(chars.len()));
        let mut next: Vec<char> = chars[..start].to_vec();
        next.extend(replacement.chars());
        next.extend_from_slice(&chars[end..]);
        chars = next;
    }
    Ok(chars.into_iter().collect())
}

fn hex_digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The last `n` characters of `s`.
fn last_chars(s: &str, n: usize) -> String {
    let count = s.chars().count();
    s.chars().skip(count.saturating_sub(n)).collect()
}

fn mask(m: &PiiMatch) -> String {
    let value = m.value.as_str();
    match m.pii_type.as_str() {
        "email" => match value.split('@').collect::<Vec<_>>().as_slice() {
            [user, domain] => match domain.rsplit_once('.') {
                Some((_, tld)) => format!("{user}@****.{tld}"),
                None => format!("{user}@****"),
            },
            _ => "****".to_owned(),
        },
        "credit_card" => {
            let digits: String = value
                .chars()
                .filter(|&c| digit_value(c).is_some())
                .collect();
            let last = last_chars(&digits, 4);
            let sep = if value.contains('-') {
                "-"
            } else if value.contains(' ') {
                " "
            } else {
                ""
            };
            if sep.is_empty() {
                format!("************{last}")
            } else {
                format!("****{sep}****{sep}****{sep}{last}")
            }
        }
        "ip" => match value.split('.').collect::<Vec<_>>().as_slice() {
            [_, _, _, last] => format!("*.*.*.{last}"),
            _ => "****".to_owned(),
        },
        "mac_address" => {
            let s = if value.contains(':') { ":" } else { "-" };
            format!("**{s}**{s}**{s}**{s}**{s}{}", last_chars(value, 2))
        }
        "url" => "[MASKED_URL]".to_owned(),
        _ if value.chars().count() > 4 => format!("****{}", last_chars(value, 4)),
        _ => "****".to_owned(),
    }
}
