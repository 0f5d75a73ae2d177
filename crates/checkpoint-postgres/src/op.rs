//! The ops a batch stores, as rows: each [`SaveOp`] validated and serialized once into the
//! parameters of its statement ([`Prepared`]), which the general way ([`crate::batch`])
//! and the chained way ([`crate::chain`]) both run.

use indexmap::IndexMap;
use stategraph_checkpoint::config::{validate_config, validate_key};
use stategraph_checkpoint::serde::Serializer;
use stategraph_checkpoint::{starts_branch, write_index, Error, Result, SaveOp, Value};
use tokio_postgres::types::ToSql;

use crate::filter::some_id;
use crate::layout::split;
use crate::write::metadata_json;

/// One op, validated and serialized, with the parameters of its statement.
pub(crate) enum Prepared {
    /// A put: the parameters of [`PUT`](crate::sql::PUT) / [`FENCED_PUT`](crate::sql::FENCED_PUT).
    Put {
        /// Whether the fence checks it.
        fenced: bool,
        thread: String,
        ns: String,
        id: String,
        parent: Option<String>,
        checkpoint: String,
        metadata: String,
        channels: Vec<String>,
        versions: Vec<String>,
        tags: Vec<String>,
        bytes: Vec<Vec<u8>>,
        carried: Vec<String>,
        carried_versions: Vec<String>,
    },
    /// A task's writes: the parameters of [`PUT_WRITES`](crate::sql::PUT_WRITES) /
    /// [`FENCED_WRITES`](crate::sql::FENCED_WRITES).
    Writes {
        /// Whether the fence checks it.
        fenced: bool,
        thread: String,
        ns: String,
        checkpoint_id: String,
        task_id: String,
        task_path: String,
        idxs: Vec<i32>,
        channels: Vec<String>,
        tags: Vec<String>,
        blobs: Vec<Vec<u8>>,
    },
}

impl Prepared {
    /// Whether the fence checks it.
    pub(crate) fn fenced(&self) -> bool {
        match self {
            Prepared::Put { fenced, .. } | Prepared::Writes { fenced, .. } => *fenced,
        }
    }

    /// Its thread and namespace.
    pub(crate) fn key(&self) -> (&str, &str) {
        match self {
            Prepared::Put { thread, ns, .. } | Prepared::Writes { thread, ns, .. } => {
                (thread.as_str(), ns.as_str())
            }
        }
    }

    /// The parameters of its statement, in order.
    pub(crate) fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        match self {
            Prepared::Put {
                thread,
                ns,
                id,
                parent,
                checkpoint,
                metadata,
                channels,
                versions,
                tags,
                bytes,
                carried,
                carried_versions,
                ..
            } => vec![
                thread,
                ns,
                id,
                parent,
                checkpoint,
                metadata,
                channels,
                versions,
                tags,
                bytes,
                carried,
                carried_versions,
            ],
            Prepared::Writes {
                thread,
                ns,
                checkpoint_id,
                task_id,
                task_path,
                idxs,
                channels,
                tags,
                blobs,
                ..
            } => vec![
                thread,
                ns,
                checkpoint_id,
                task_id,
                task_path,
                idxs,
                channels,
                tags,
                blobs,
            ],
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
            Ok(Some(Prepared::Put {
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
            }))
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
            let mut prepared = Prepared::Writes {
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
            if let Prepared::Writes {
                idxs,
                channels,
                tags,
                blobs,
                ..
            } = &mut prepared
            {
                for (idx, (channel, tag, blob)) in rows {
                    idxs.push(idx);
                    channels.push(channel);
                    tags.push(tag);
                    blobs.push(blob);
                }
            }
            Ok(Some(prepared))
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
