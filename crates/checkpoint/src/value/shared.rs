//! Shared, immutable payloads of a [`Value`](super::Value): strings, bytes and lists.
//!
//! Each payload is reference counted: cloning a value (to hand a channel value to a node,
//! to put it in a checkpoint or to queue a save) bumps a counter instead of copying the
//! payload. Mutation goes through copy-on-write (`make_mut`, `DerefMut` for lists): a
//! payload nobody else holds is mutated in place, a shared one is copied once (shallowly:
//! a list copies its element handles, not the elements).
//!
//! Why `Arc<Vec<Value>>` and not a persistent vector (`imbl`): the engine's hot path is
//! "read the whole list" (node input, encode, compare) and "append a few elements to a
//! list held by one channel". A flat vector keeps reads and encoding at memory speed and
//! appends amortised O(new) when the channel holds the only handle; when a checkpoint
//! still holds the previous version, the copy is of 16-byte handles (a few microseconds
//! for thousands of messages), while a persistent vector would make every read and every
//! element access pay a tree walk.

use std::borrow::Borrow;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use super::Value;

/// A shared, immutable UTF-8 string (Python `str`). Dereferences to `str`.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Str(Arc<str>);

impl Str {
    /// The string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// An owned copy of the string.
    pub fn into_string(self) -> String {
        String::from(&*self.0)
    }

    /// True when both handles share one payload (no comparison of contents).
    pub fn ptr_eq(a: &Str, b: &Str) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

impl Deref for Str {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Str {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Str {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl AsRef<[u8]> for Str {
    fn as_ref(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl From<&str> for Str {
    fn from(s: &str) -> Str {
        Str(Arc::from(s))
    }
}
impl From<String> for Str {
    fn from(s: String) -> Str {
        Str(Arc::from(s))
    }
}
impl From<&String> for Str {
    fn from(s: &String) -> Str {
        Str(Arc::from(s.as_str()))
    }
}
impl From<Box<str>> for Str {
    fn from(s: Box<str>) -> Str {
        Str(Arc::from(s))
    }
}
impl From<Str> for String {
    fn from(s: Str) -> String {
        s.into_string()
    }
}

impl PartialEq<str> for Str {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}
impl PartialEq<&str> for Str {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}
impl PartialEq<String> for Str {
    fn eq(&self, other: &String) -> bool {
        &*self.0 == other.as_str()
    }
}
impl PartialEq<Str> for str {
    fn eq(&self, other: &Str) -> bool {
        self == &*other.0
    }
}
impl PartialEq<Str> for &str {
    fn eq(&self, other: &Str) -> bool {
        *self == &*other.0
    }
}
impl PartialEq<Str> for String {
    fn eq(&self, other: &Str) -> bool {
        self.as_str() == &*other.0
    }
}

/// Shared, immutable raw bytes (Python `bytes`). Dereferences to `[u8]`.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Bytes(Arc<[u8]>);

impl Bytes {
    /// The byte slice.
    pub fn as_slice(&self) -> &[u8] {
        &self.0
    }

    /// An owned copy of the bytes.
    pub fn into_vec(self) -> Vec<u8> {
        self.0.to_vec()
    }

    /// True when both handles share one payload.
    pub fn ptr_eq(a: &Bytes, b: &Bytes) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

impl Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl AsRef<[u8]> for Bytes {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl From<Vec<u8>> for Bytes {
    fn from(b: Vec<u8>) -> Bytes {
        Bytes(Arc::from(b))
    }
}
impl From<&[u8]> for Bytes {
    fn from(b: &[u8]) -> Bytes {
        Bytes(Arc::from(b))
    }
}
impl<const N: usize> From<&[u8; N]> for Bytes {
    fn from(b: &[u8; N]) -> Bytes {
        Bytes(Arc::from(&b[..]))
    }
}
impl From<Bytes> for Vec<u8> {
    fn from(b: Bytes) -> Vec<u8> {
        b.into_vec()
    }
}
impl PartialEq<[u8]> for Bytes {
    fn eq(&self, other: &[u8]) -> bool {
        &*self.0 == other
    }
}
impl PartialEq<Vec<u8>> for Bytes {
    fn eq(&self, other: &Vec<u8>) -> bool {
        &*self.0 == other.as_slice()
    }
}

/// A shared list of values (Python `list` or `tuple`). Dereferences to `Vec<Value>`;
/// mutable access copies the list first if another handle shares it (copy-on-write), so
/// appending to a list nobody else holds costs only the new elements.
#[derive(Clone, PartialEq, Default)]
pub struct List(Arc<Vec<Value>>);

impl List {
    /// An empty list.
    pub fn new() -> List {
        List::default()
    }

    /// The elements, mutably: copied first if shared (copy-on-write).
    pub fn make_mut(&mut self) -> &mut Vec<Value> {
        Arc::make_mut(&mut self.0)
    }

    /// The elements as an owned vector: moved out when this is the only handle, copied
    /// (shallowly) otherwise.
    pub fn into_vec(self) -> Vec<Value> {
        Arc::try_unwrap(self.0).unwrap_or_else(|shared| (*shared).clone())
    }

    /// True when both handles share one payload.
    pub fn ptr_eq(a: &List, b: &List) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

impl Deref for List {
    type Target = Vec<Value>;
    fn deref(&self) -> &Vec<Value> {
        &self.0
    }
}

impl DerefMut for List {
    fn deref_mut(&mut self) -> &mut Vec<Value> {
        self.make_mut()
    }
}

impl fmt::Debug for List {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.iter()).finish()
    }
}

impl From<Vec<Value>> for List {
    fn from(v: Vec<Value>) -> List {
        List(Arc::new(v))
    }
}
impl From<List> for Vec<Value> {
    fn from(l: List) -> Vec<Value> {
        l.into_vec()
    }
}
impl FromIterator<Value> for List {
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> List {
        List(Arc::new(iter.into_iter().collect()))
    }
}
impl<'a> IntoIterator for &'a List {
    type Item = &'a Value;
    type IntoIter = std::slice::Iter<'a, Value>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}
impl IntoIterator for List {
    type Item = Value;
    type IntoIter = std::vec::IntoIter<Value>;
    fn into_iter(self) -> Self::IntoIter {
        self.into_vec().into_iter()
    }
}
impl PartialEq<Vec<Value>> for List {
    fn eq(&self, other: &Vec<Value>) -> bool {
        *self.0 == *other
    }
}
impl PartialEq<[Value]> for List {
    fn eq(&self, other: &[Value]) -> bool {
        self.0.as_slice() == other
    }
}

impl serde::Serialize for Str {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl serde::Serialize for Bytes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

impl FromIterator<u8> for Bytes {
    fn from_iter<I: IntoIterator<Item = u8>>(iter: I) -> Bytes {
        Bytes(iter.into_iter().collect())
    }
}
