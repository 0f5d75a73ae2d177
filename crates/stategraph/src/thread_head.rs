//! A thread's head held by the caller: [`ThreadHead`], what a run left in its saver,
//! handed back to start the thread's next run without reading it
//! ([`RunConfig::start_from`](crate::RunConfig::start_from)).

use std::sync::Arc;

use stategraph_checkpoint::CheckpointTuple;

/// The head of a thread's root namespace as a run left it in the saver: its newest
/// checkpoint with the writes stored against it, exactly what `get_tuple` on the thread
/// returned right after the run ([`crate::RunStream::final_head`]).
///
/// Opaque and cheap to clone (shared). A caller that runs a thread again (a chat, run
/// after run on one thread) passes it back with
/// [`RunConfig::start_from`](crate::RunConfig::start_from) and the run starts from it
/// instead of reading the saver. Whether it is still the thread's head is the caller's
/// guess; on a fencing saver a wrong guess is refused by the fence (see there).
#[derive(Clone)]
pub struct ThreadHead {
    tuple: Arc<CheckpointTuple>,
}

impl ThreadHead {
    /// The head of a run that ended normally on `tuple` (the root namespace's).
    pub(crate) fn new(tuple: Arc<CheckpointTuple>) -> ThreadHead {
        ThreadHead { tuple }
    }

    /// The thread it is the head of.
    pub fn thread_id(&self) -> &str {
        &self.tuple.config.thread_id
    }

    /// The id of the head checkpoint.
    pub fn checkpoint_id(&self) -> &str {
        &self.tuple.checkpoint.id
    }

    /// How many writes are stored against the head checkpoint (one per
    /// `(task_id, index)`, as every saver keys them).
    pub fn write_count(&self) -> usize {
        self.tuple.pending_writes.len()
    }

    /// The tuple, as the saver stores it.
    pub(crate) fn tuple(&self) -> &CheckpointTuple {
        &self.tuple
    }
}

impl std::fmt::Debug for ThreadHead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadHead")
            .field("thread_id", &self.thread_id())
            .field("checkpoint_id", &self.checkpoint_id())
            .field("writes", &self.write_count())
            .finish()
    }
}
