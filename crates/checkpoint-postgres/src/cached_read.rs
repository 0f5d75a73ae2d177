//! `get_tuple` through the decoded-blob cache ([`crate::blob_cache`]): the query that
//! leaves out the bytes of the blobs the saver holds, and the decoding of its row.
//!
//! The query is [`crate::sql::SELECT`] with three more parameters, the channels, versions
//! and identities the cache holds for the thread (`$1`–`$3`; thread, namespace and id
//! follow as `$4`–`$6`), and three more columns: per joined blob its version, its row's
//! identity, and whether it is held. A held blob's bytes come back as NULL; the server
//! reads only its TOAST pointer (for the length), so it is neither detoasted nor sent.

use stategraph_checkpoint::serde::msgpack::DecodeMemo;
use stategraph_checkpoint::serde::{Serializer, TAG_EMPTY};
use stategraph_checkpoint::{Error, Result, Value};
use tokio_postgres::Row;

use crate::blob_cache::{Fill, Held, MIN_CACHED_BYTES};
use crate::error::col;

/// The blob values of a row, which of them were held, and what the cache may keep.
#[derive(Debug, Default)]
pub(crate) struct CachedRead {
    /// Channel values read from blobs (held or decoded).
    pub(crate) values: Vec<(String, Value)>,
    /// `(channel, version)` of the held blobs used.
    pub(crate) hits: Vec<(String, String)>,
    /// The decoded blobs worth keeping (none unless `fill`).
    pub(crate) fills: Vec<Fill>,
}

/// Decodes the blob columns of a row of [`crate::sql::get_sql`]: held blobs from `held`, the others
/// from their bytes through `memo`; with `fill`, the decoded ones large enough to cache
/// are returned for the cache.
pub(crate) fn decode(
    row: &Row,
    serde: &dyn Serializer,
    memo: &DecodeMemo,
    held: &Held,
    fill: bool,
) -> Result<CachedRead> {
    let channels: Vec<String> = col::<Option<_>>(row, 6)?.unwrap_or_default();
    let types: Vec<String> = col::<Option<_>>(row, 7)?.unwrap_or_default();
    let blobs: Vec<Option<Vec<u8>>> = col::<Option<_>>(row, 8)?.unwrap_or_default();
    let versions: Vec<String> = col::<Option<_>>(row, 15)?.unwrap_or_default();
    let idents: Vec<String> = col::<Option<_>>(row, 16)?.unwrap_or_default();
    let helds: Vec<bool> = col::<Option<_>>(row, 17)?.unwrap_or_default();
    let n = channels.len();
    if [
        types.len(),
        blobs.len(),
        versions.len(),
        idents.len(),
        helds.len(),
    ] != [n; 5]
    {
        return Err(Error::InvalidData("blob arrays of unequal length".into()));
    }
    let mut read = CachedRead::default();
    let rows = channels
        .into_iter()
        .zip(types)
        .zip(blobs)
        .zip(versions)
        .zip(idents)
        .zip(helds);
    for (((((channel, tag), bytes), version), ident), was_held) in rows {
        if tag == TAG_EMPTY {
            continue;
        }
        if was_held {
            let (held_tag, value) = held.get(&channel, &version, &ident).ok_or_else(|| {
                Error::InvalidData(format!(
                    "the server left out blob {channel:?} {version:?}, which the read did not hold"
                ))
            })?;
            if held_tag != tag {
                return Err(Error::InvalidData(format!(
                    "blob {channel:?} {version:?}: held as {held_tag:?}, stored as {tag:?}"
                )));
            }
            read.values.push((channel.clone(), value.clone()));
            read.hits.push((channel, version));
            continue;
        }
        let bytes = bytes.unwrap_or_default();
        let value = serde.loads_typed_with_memo(&tag, &bytes, memo)?;
        if fill && bytes.len() >= MIN_CACHED_BYTES {
            read.fills.push(Fill {
                channel: channel.clone(),
                version,
                ident,
                tag,
                value: value.clone(),
                bytes: bytes.len(),
            });
        }
        read.values.push((channel, value));
    }
    Ok(read)
}
