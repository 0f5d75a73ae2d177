//! Durability `async`: the saves of a run go to one background task, in order, while the
//! next super-step runs; the run waits for them at its end (spec §5.13).

use std::sync::Arc;

use stategraph_checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, Value,
};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::error::{Error, Result};

/// One save, with everything it needs owned.
// Ops travel through a channel one at a time; their size does not matter.
#[allow(clippy::large_enum_variant)]
pub(crate) enum SaveOp {
    /// `saver.put`.
    Put(Box<PutOp>),
    /// `saver.put_writes`.
    Writes {
        config: CheckpointConfig,
        writes: Vec<(String, Value)>,
        task_id: String,
        task_path: String,
    },
}

/// The arguments of one `put`.
pub(crate) struct PutOp {
    pub config: CheckpointConfig,
    pub checkpoint: Checkpoint,
    pub metadata: CheckpointMetadata,
    pub new_versions: ChannelVersions,
}

/// A queue of saves executed in order by one tokio task. The first failure stops the
/// queue and is reported by [`Background::finish`] (and refuses later submissions).
pub(crate) struct Background {
    tx: mpsc::UnboundedSender<SaveOp>,
    worker: JoinHandle<Result<()>>,
}

impl Background {
    /// Starts the worker; `None` outside a tokio runtime (saves then happen inline).
    pub(crate) fn start(saver: Arc<dyn CheckpointSaver>) -> Option<Background> {
        tokio::runtime::Handle::try_current().ok()?;
        let (tx, mut rx) = mpsc::unbounded_channel::<SaveOp>();
        let worker = tokio::spawn(async move {
            while let Some(op) = rx.recv().await {
                match op {
                    SaveOp::Put(op) => {
                        saver
                            .put(&op.config, &op.checkpoint, &op.metadata, &op.new_versions)
                            .await?;
                    }
                    SaveOp::Writes {
                        config,
                        writes,
                        task_id,
                        task_path,
                    } => {
                        saver
                            .put_writes(&config, &writes, &task_id, &task_path)
                            .await?;
                    }
                }
            }
            Ok(())
        });
        Some(Background { tx, worker })
    }

    /// Queues a save. Fails when the worker already stopped on an error.
    pub(crate) fn submit(&self, op: SaveOp) -> Result<()> {
        self.tx.send(op).map_err(|_| {
            Error::Checkpoint(stategraph_checkpoint::Error::Backend(
                "a background save failed; see the run's error".into(),
            ))
        })
    }

    /// Waits until every queued save is done; the first failure, if any.
    pub(crate) async fn finish(self) -> Result<()> {
        drop(self.tx);
        match self.worker.await {
            Ok(r) => r,
            Err(e) => Err(Error::Checkpoint(stategraph_checkpoint::Error::Backend(
                Box::new(e),
            ))),
        }
    }
}
