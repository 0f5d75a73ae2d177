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

pub use crate::float_repr::python_float_repr;
use crate::float_repr::{push_zeros, write_python_float_repr};
use crate::source::{OsRandom, PyRandom, RandomSource};
use crate::version::ChannelVersion;

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
