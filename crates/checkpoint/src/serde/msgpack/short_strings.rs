//! The short strings of one decode, shared ([`ShortStrings`]): one allocation per distinct
//! key or small value instead of one per occurrence.

use crate::value::Str;

/// Strings up to this many bytes are shared within one decode (see [`ShortStrings`]).
pub(super) const SHORT_STRING: usize = 24;

/// Slots of [`ShortStrings`] (a power of two).
const SHORT_SLOTS: usize = 64;

/// The short strings one decode has read, by a hash of their bytes (one per slot, the
/// latest wins): map keys and small values such as `"role"`, `"content"`, `"user"` repeat
/// in every message of a list, and a repeat is then a reference-count increment on the
/// shared [`Str`] instead of an allocation and a copy. Values are immutable, so sharing is
/// invisible to readers.
pub(super) struct ShortStrings<'a> {
    slots: [Option<(&'a [u8], Str)>; SHORT_SLOTS],
}

impl<'a> ShortStrings<'a> {
    #[inline]
    pub(super) fn new() -> ShortStrings<'a> {
        ShortStrings {
            slots: std::array::from_fn(|_| None),
        }
    }

    /// The shared string for `text` (at most [`SHORT_STRING`] bytes).
    #[inline]
    pub(super) fn get(&mut self, text: &'a str) -> Str {
        let bytes = text.as_bytes();
        // FNV-1a over the bytes.
        let mut hash: u32 = 0x811c_9dc5;
        for b in bytes {
            hash = (hash ^ u32::from(*b)).wrapping_mul(0x0100_0193);
        }
        let slot = &mut self.slots[hash as usize & (SHORT_SLOTS - 1)];
        match slot {
            Some((seen, shared)) if *seen == bytes => shared.clone(),
            _ => {
                let shared = Str::from(text);
                *slot = Some((bytes, shared.clone()));
                shared
            }
        }
    }
}
