//! The nesting limit of the codec ([`DecodeLimits`]), below the files that enforce it.

/// Limits applied while decoding untrusted bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeLimits {
    /// The deepest nesting of arrays, maps and extensions accepted (default
    /// [`DecodeLimits::DEFAULT_MAX_DEPTH`], 1000). The encoder enforces the default too.
    pub max_depth: usize,
}

impl DecodeLimits {
    /// The default nesting limit, just below ormsgpack's (about 1022 levels).
    pub const DEFAULT_MAX_DEPTH: usize = 1000;
}

impl Default for DecodeLimits {
    fn default() -> DecodeLimits {
        DecodeLimits {
            max_depth: DecodeLimits::DEFAULT_MAX_DEPTH,
        }
    }
}
