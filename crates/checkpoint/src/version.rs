//! Channel versions: how LangGraph numbers each value a channel takes.
//!
//! Savers mint versions as `{counter:032}.{fraction}` where the fraction is Python's
//! `repr(random.random())` left-padded with `0` to 16 characters (docs/format.md#channel-versions):
//! the random
//! part keeps the blobs of two forked branches apart. Without a saver, versions are plain
//! integers. Both kinds are a [`ChannelVersion`]; strings compare as text (the 32-digit
//! prefix makes that numeric order), integers as numbers.

use std::cmp::Ordering;
use std::fmt;

use indexmap::IndexMap;

use crate::value::Value;

/// One channel's version: a string for every shipped saver, an integer without a saver.
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum ChannelVersion {
    /// An integer version (no checkpointer, or written by hand).
    Int(i64),
    /// A string version such as `00000000000000000000000000000003.0.8418417915109482`.
    Str(String),
}

/// The hasher of the maps keyed by channel or node name ([`ChannelVersions`], and the
/// engine's own maps of channels): foldhash's fast variant.
///
/// Why: a super-step looks channel names up hundreds of times (the versions of every
/// channel for `new_versions`, every trigger, every value of a checkpoint), and the names
/// are short (`branch:to:n57`). With std's SipHash-1-3 hashing was 13 % of a super-step's
/// instructions on the 100-node chain (S2, BENCHMARKS.md). foldhash hashes a short string
/// in a handful of multiplications: on S2, 117.7 k instructions per super-step with it,
/// 121.9 k with SipHash in the same tree (callgrind; BENCHMARKS.md, "`step` branch"). It is
/// already in the dependency tree (hashbrown's default hasher), and it keeps a per-map
/// random seed, so keys read from a stored checkpoint cannot be chosen to collide in advance (it is not a cryptographic hash, and a map of channel names does not
/// need one). Iteration order is insertion order whatever the hasher, so stored bytes do
/// not depend on it.
pub type NameHasher = foldhash::fast::RandomState;

/// Channel name to version, in insertion order (the order is part of the stored bytes).
///
/// Hashed with [`NameHasher`]: build one with `ChannelVersions::default()` or
/// `collect()` (`IndexMap::new` exists only for std's hasher).
pub type ChannelVersions = IndexMap<String, ChannelVersion, NameHasher>;

impl ChannelVersion {
    /// The integer part: the number itself, or the text before the first `.` of a string.
    /// A string whose integer part does not parse counts as 0.
    pub fn integer_part(&self) -> i64 {
        match self {
            ChannelVersion::Int(n) => *n,
            ChannelVersion::Str(s) => s
                .split('.')
                .next()
                .and_then(|p| p.parse().ok())
                .unwrap_or(0),
        }
    }

    /// The version as a stored value.
    pub fn to_value(&self) -> Value {
        match self {
            ChannelVersion::Int(n) => Value::Int(*n),
            ChannelVersion::Str(s) => Value::Str(s.clone().into()),
        }
    }

    /// Reads a version from a stored value (a string, an integer, or a whole float).
    pub fn from_value(v: &Value) -> Option<ChannelVersion> {
        match v {
            Value::Str(s) => Some(ChannelVersion::Str(s.to_string())),
            Value::Int(n) => Some(ChannelVersion::Int(*n)),
            Value::Float(f) if f.fract() == 0.0 && f.is_finite() => {
                Some(ChannelVersion::Int(*f as i64))
            }
            _ => None,
        }
    }

    /// The string form as Python's `str(version)` gives it.
    pub fn as_text(&self) -> String {
        match self {
            ChannelVersion::Int(n) => n.to_string(),
            ChannelVersion::Str(s) => s.clone(),
        }
    }
}

impl Ord for ChannelVersion {
    /// Strings compare as text and integers as numbers, as in Python. Python cannot compare
    /// a string with an integer; here the integer parts decide, then integers sort first.
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (ChannelVersion::Int(a), ChannelVersion::Int(b)) => a.cmp(b),
            (ChannelVersion::Str(a), ChannelVersion::Str(b)) => a.cmp(b),
            (ChannelVersion::Int(_), ChannelVersion::Str(_)) => self
                .integer_part()
                .cmp(&other.integer_part())
                .then(Ordering::Less),
            (ChannelVersion::Str(_), ChannelVersion::Int(_)) => self
                .integer_part()
                .cmp(&other.integer_part())
                .then(Ordering::Greater),
        }
    }
}

impl PartialOrd for ChannelVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Debug for ChannelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChannelVersion::Int(n) => write!(f, "{n}"),
            ChannelVersion::Str(s) => write!(f, "{s:?}"),
        }
    }
}

impl fmt::Display for ChannelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChannelVersion::Int(n) => write!(f, "{n}"),
            ChannelVersion::Str(s) => f.write_str(s),
        }
    }
}

impl From<i64> for ChannelVersion {
    fn from(n: i64) -> Self {
        ChannelVersion::Int(n)
    }
}

impl From<&str> for ChannelVersion {
    fn from(s: &str) -> Self {
        ChannelVersion::Str(s.to_owned())
    }
}

impl From<String> for ChannelVersion {
    fn from(s: String) -> Self {
        ChannelVersion::Str(s)
    }
}
