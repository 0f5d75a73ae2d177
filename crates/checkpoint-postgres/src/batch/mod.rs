//! Group commit: [`CheckpointSaver::put_batch`](stategraph_checkpoint::CheckpointSaver::put_batch)
//! stores the queued saves of a run in one transaction, the general way
//! ([`general`]: one statement per op) or the chained way ([`chain`]: one statement per
//! `(thread, namespace)` when it can decide the fence up front).

pub(crate) mod chain;
mod general;

pub(crate) use general::put_batch;
