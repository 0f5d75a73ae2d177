//! Group commit: [`CheckpointSaver::put_batch`] of [`SqliteSaver`] stores the queued saves
//! of a run, the one way SQLite has (no chained way: the transaction is local, so one
//! statement per op costs no round trip).
//!
//! The ops, serialized first, run in order in one `BEGIN IMMEDIATE` transaction (one
//! commit, one `fsync` with [`Synchronous::Full`]); the rows stored are the same as with
//! one call per op. Each op is fenced as its own call would be. Serialized ops are held
//! until their transaction runs, so once they reach 16 MiB ([`BATCH_BYTES`]) the ops so far
//! commit and the rest follow in the next transaction (a run with large values then holds
//! one value's encoding at a time, not all).
//!
//! When the fence refuses an op, the ops before it are committed (they are the run's own
//! earlier saves), nothing of the refused op or of the ops after it is stored, and its
//! [`Error::Conflict`] is returned. When an op is invalid (a config or id that
//! [`validate_config`] refuses) or cannot be serialized, the ops before it are committed and
//! its error returned. Any other failure (a database error) rolls back the ops of its
//! transaction (the whole batch unless it was split) and stores none after them.
//!
//! [`CheckpointSaver::put_batch`]: stategraph_checkpoint::CheckpointSaver::put_batch
//! [`Synchronous::Full`]: crate::Synchronous::Full
//! [`Error::Conflict`]: stategraph_checkpoint::Error::Conflict
//! [`validate_config`]: stategraph_checkpoint::config::validate_config

use stategraph_checkpoint::{Result, SaveOp};

use crate::error::Scope;
use crate::saver::{SqliteSaver, TABLES};

/// The serialized bytes a group commit holds before it
/// commits the ops so far and goes on in a new transaction (16 MiB).
pub(crate) const BATCH_BYTES: usize = 16 << 20;

impl SqliteSaver {
    /// [`put_batch`](stategraph_checkpoint::CheckpointSaver::put_batch) of this saver (see the module's docs): serializes
    /// the ops in order and runs them in one write transaction per [`BATCH_BYTES`] of
    /// serialized ops (see [`crate::write::apply`]).
    pub(crate) async fn group_commit(&self, ops: &[SaveOp]) -> Result<()> {
        let scope = || {
            let threads = ops.iter().map(|op| match op {
                SaveOp::Put { config, .. } | SaveOp::PutWrites { config, .. } => {
                    config.thread_id.as_str()
                }
            });
            Scope::many("put_batch", TABLES, "threads", threads)
        };
        let mut prepared = Vec::with_capacity(ops.len());
        let (mut failed, mut bytes) = (None, 0);
        for op in ops {
            let p = match op {
                SaveOp::Put {
                    config,
                    checkpoint,
                    metadata,
                    ..
                } => self.prepare_put(config, checkpoint, metadata),
                SaveOp::PutWrites {
                    config,
                    writes,
                    task_id,
                    task_path,
                } => self.prepare_writes(config, writes, task_id, task_path),
            };
            match p {
                Ok(p) => {
                    bytes += p.len();
                    prepared.push(p);
                    if bytes >= BATCH_BYTES {
                        self.run(std::mem::take(&mut prepared), scope).await?;
                        bytes = 0;
                    }
                }
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        if !prepared.is_empty() {
            self.run(prepared, scope).await?;
        }
        failed.map_or(Ok(()), Err)
    }
}
