//! The ops a batch stores, as rows: each [`SaveOp`] validated and serialized once into the
//! parameters of its statement ([`Prepared`]), which the general way ([`crate::batch`])
//! and the chained way ([`crate::batch::chain`]) both run.

use indexmap::IndexMap;
use stategraph_checkpoint::config::{validate_config, validate_key};
use stategraph_checkpoint::serde::Serializer;
use stategraph_checkpoint::{starts_branch, write_index, Error, Result, SaveOp, Value};
use tokio_postgres::types::ToSql;

use crate::layout::{split, BlobRow};
use crate::query::some_id;
use crate::write::metadata_json;

/// A put, validated and serialized: the parameters of [`PUT`](crate::sql::PUT) /
/// [`FENCED_PUT`](crate::sql::FENCED_PUT) (the blob columns one list each).
pub(crate) struct PutRow {
    /// Whether the fence checks it.
    pub(crate) fenced: bool,
    /// The thread.
    pub(crate) thread: String,
    /// The namespace.
    pub(crate) ns: String,
    /// The checkpoint id.
    pub(crate) id: String,
    /// The parent checkpoint id.
    pub(crate) parent: Option<String>,
    /// The checkpoint's JSON.
    pub(crate) checkpoint: String,
    /// The metadata's JSON.
    pub(crate) metadata: String,
    /// The new blobs' channels.
    pub(crate) channels: Vec<String>,
    /// The new blobs' versions.
    pub(crate) versions: Vec<String>,
    /// The new blobs' type tags.
    pub(crate) tags: Vec<String>,
    /// The new blobs' bytes.
    pub(crate) bytes: Vec<Vec<u8>>,
    /// The channels whose inline string the statement carries into a blob.
    pub(crate) carried: Vec<String>,
    /// Their versions.
    pub(crate) carried_versions: Vec<String>,
}

/// A task's writes, validated and serialized: the parameters of
/// [`PUT_WRITES`](crate::sql::PUT_WRITES) / [`FENCED_WRITES`](crate::sql::FENCED_WRITES).
pub(crate) struct WritesRow {
    /// Whether the fence checks it.
    pub(crate) fenced: bool,
    /// The thread.
    pub(crate) thread: String,
    /// The namespace.
    pub(crate) ns: String,
    /// The checkpoint the writes belong to.
    pub(crate) checkpoint_id: String,
    /// The task.
    pub(crate) task_id: String,
    /// The task's path.
    pub(crate) task_path: String,
    /// Each write's index.
    pub(crate) idxs: Vec<i32>,
    /// Each write's channel.
    pub(crate) channels: Vec<String>,
    /// Each write's type tag.
    pub(crate) tags: Vec<String>,
    /// Each write's bytes.
    pub(crate) blobs: Vec<Vec<u8>>,
}

/// One op, validated and serialized, with the parameters of its statement.
pub(crate) enum Prepared {
    /// A put.
    Put(PutRow),
    /// A task's writes.
    Writes(WritesRow),
}

impl PutRow {
    /// The parameters of its statement, in order.
    fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        vec![
            &self.thread,
            &self.ns,
            &self.id,
            &self.parent,
            &self.checkpoint,
            &self.metadata,
            &self.channels,
            &self.versions,
            &self.tags,
            &self.bytes,
            &self.carried,
            &self.carried_versions,
        ]
    }

    /// Its new blobs as rows (for the blob cache).
    pub(crate) fn into_blob_rows(self) -> Vec<BlobRow> {
        self.channels
            .into_iter()
            .zip(self.versions)
            .zip(self.tags)
            .zip(self.bytes)
            .map(|(((channel, version), tag), bytes)| BlobRow {
                channel,
                version,
                tag,
                bytes,
            })
            .collect()
    }
}

impl WritesRow {
    /// The parameters of its statement, in order.
    fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        vec![
            &self.thread,
            &self.ns,
            &self.checkpoint_id,
            &self.task_id,
            &self.task_path,
            &self.idxs,
            &self.channels,
            &self.tags,
            &self.blobs,
        ]
    }
}

impl Prepared {
    /// Whether the fence checks it.
    pub(crate) fn fenced(&self) -> bool {
        match self {
            Prepared::Put(p) => p.fenced,
            Prepared::Writes(w) => w.fenced,
        }
    }

    /// Its thread and namespace.
    pub(crate) fn key(&self) -> (&str, &str) {
        match self {
            Prepared::Put(p) => (&p.thread, &p.ns),
            Prepared::Writes(w) => (&w.thread, &w.ns),
        }
    }

    /// The parameters of its statement, in order.
    pub(crate) fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        match self {
            Prepared::Put(p) => p.params(),
            Prepared::Writes(w) => w.params(),
        }
    }
}

/// Validates and serializes one op as its own call would; `None` for writes that store
/// nothing (an empty list).
pub(crate) fn prepare(
    op: &SaveOp,
    serde: &dyn Serializer,
    fencing: bool,
) -> Result<Option<Prepared>> {
    match op {
        SaveOp::Put {
            config,
            checkpoint,
            metadata,
            new_versions,
        } => {
            validate_config(config).and(validate_key("checkpoint id", &checkpoint.id))?;
            let split = split(checkpoint, new_versions, serde)?;
            let metadata = metadata_json(config, metadata)?;
            let (channels, versions, tags, bytes) = split.blobs.into_iter().fold(
                (Vec::new(), Vec::new(), Vec::new(), Vec::new()),
                |(mut c, mut v, mut t, mut b), row| {
                    c.push(row.channel);
                    v.push(row.version);
                    t.push(row.tag);
                    b.push(row.bytes);
                    (c, v, t, b)
                },
            );
            let (carried, carried_versions) = split
                .carried
                .into_iter()
                .map(|c| (c.channel, c.version))
                .unzip();
            Ok(Some(Prepared::Put(PutRow {
                fenced: fencing && !starts_branch(config),
                thread: config.thread_id.clone(),
                ns: config.ns().to_owned(),
                id: checkpoint.id.clone(),
                parent: some_id(config.checkpoint_id.as_ref()).map(str::to_owned),
                checkpoint: split.checkpoint,
                metadata,
                channels,
                versions,
                tags,
                bytes,
                carried,
                carried_versions,
            })))
        }
        SaveOp::PutWrites {
            config,
            writes,
            task_id,
            task_path,
        } => {
            validate_config(config).and(validate_key("task id", task_id))?;
            let checkpoint_id = config
                .checkpoint_id
                .clone()
                .ok_or_else(|| Error::InvalidConfig("put_writes needs a checkpoint_id".into()))?;
            if writes.is_empty() {
                return Ok(None);
            }
            let rows = write_rows(writes, serde)?;
            let mut prepared = WritesRow {
                fenced: fencing && !starts_branch(config),
                thread: config.thread_id.clone(),
                ns: config.ns().to_owned(),
                checkpoint_id,
                task_id: task_id.clone(),
                task_path: task_path.clone(),
                idxs: Vec::with_capacity(rows.len()),
                channels: Vec::with_capacity(rows.len()),
                tags: Vec::with_capacity(rows.len()),
                blobs: Vec::with_capacity(rows.len()),
            };
            for (idx, (channel, tag, blob)) in rows {
                prepared.idxs.push(idx);
                prepared.channels.push(channel);
                prepared.tags.push(tag);
                prepared.blobs.push(blob);
            }
            Ok(Some(Prepared::Writes(prepared)))
        }
    }
}

/// One write row: channel, type tag, bytes.
type WriteRow = (String, String, Vec<u8>);

/// The rows of a task's writes by index, as `put_writes` stores them: a repeated reserved
/// index keeps its last write.
fn write_rows(
    writes: &[(String, Value)],
    serde: &dyn Serializer,
) -> Result<IndexMap<i32, WriteRow>> {
    let mut rows = IndexMap::new();
    for (position, (channel, value)) in writes.iter().enumerate() {
        let idx = i32::try_from(write_index(channel, position))
            .map_err(|_| Error::InvalidData("too many writes for an INTEGER index".into()))?;
        let typed = serde.dumps_typed(value)?;
        rows.insert(idx, (channel.clone(), typed.tag.to_string(), typed.bytes));
    }
    Ok(rows)
}
