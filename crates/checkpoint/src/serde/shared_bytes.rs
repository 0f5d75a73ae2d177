//! [`SharedBytes`]: serialized bytes held as shared pieces (encode once, kept once).

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use crate::value::{EncodedItems, Str};

/// The bytes of a serialized value, possibly as shared pieces: a long list's encoding is
/// its array header followed by the element chunks its shared payload already holds (see
/// [`crate::serde::msgpack`], "Encode once"). A saver that keeps bytes in memory stores
/// this instead of a copy, so successive versions of a growing list share their common
/// chunks. [`SharedBytes::to_vec`] gives the contiguous bytes, equal to a fresh encoding.
#[derive(Clone)]
pub struct SharedBytes(Repr);

#[derive(Clone)]
enum Repr {
    Whole(Vec<u8>),
    Pieces {
        head: Vec<u8>,
        items: Arc<EncodedItems>,
    },
    /// A string's header and its shared UTF-8 payload (a long string is stored once).
    Text {
        head: Vec<u8>,
        text: Str,
    },
}

impl SharedBytes {
    /// Bytes from a list's array header and its elements' shared encoding.
    pub(crate) fn pieces(head: Vec<u8>, items: Arc<EncodedItems>) -> SharedBytes {
        SharedBytes(Repr::Pieces { head, items })
    }

    /// Bytes from a string's msgpack header and its shared payload.
    pub(crate) fn text(head: Vec<u8>, text: Str) -> SharedBytes {
        SharedBytes(Repr::Text { head, text })
    }

    /// The total length.
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Whole(b) => b.len(),
            Repr::Pieces { head, items } => head.len() + items.len,
            Repr::Text { head, text } => head.len() + text.len(),
        }
    }

    /// True when there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The pieces, in order; their concatenation is the bytes.
    pub fn iter_pieces(&self) -> impl Iterator<Item = &[u8]> {
        let (first, second, rest): (&[u8], &[u8], &[_]) = match &self.0 {
            Repr::Whole(b) => (b, &[], &[]),
            Repr::Pieces { head, items } => (head, &[], &items.chunks),
            Repr::Text { head, text } => (head, text.as_bytes(), &[]),
        };
        [first, second]
            .into_iter()
            .chain(rest.iter().map(|c| c.bytes.as_slice()))
    }

    /// The bytes, contiguous: borrowed when they are one piece.
    pub fn contiguous(&self) -> Cow<'_, [u8]> {
        match &self.0 {
            Repr::Whole(b) => Cow::Borrowed(b),
            Repr::Pieces { .. } | Repr::Text { .. } => Cow::Owned(self.to_vec()),
        }
    }

    /// The bytes as one vector.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len());
        for piece in self.iter_pieces() {
            out.extend_from_slice(piece);
        }
        out
    }
}

impl From<Vec<u8>> for SharedBytes {
    fn from(b: Vec<u8>) -> SharedBytes {
        SharedBytes(Repr::Whole(b))
    }
}

impl PartialEq for SharedBytes {
    fn eq(&self, other: &SharedBytes) -> bool {
        self.len() == other.len() && self.contiguous() == other.contiguous()
    }
}

impl fmt::Debug for SharedBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} bytes", self.len())
    }
}
