//! The op model: what a script asks of a saver, as small numbers that [`crate::world`]
//! turns into arguments.
//!
//! Every field is a small integer or flag read modulo the size of its pool, so any bytes
//! make a valid script (`arbitrary` derives the decoding) and a seeded generator makes the
//! same kind of scripts from random bytes ([`crate::seeded`]).

use arbitrary::Arbitrary;

/// A sequence of operations, all run against savers fenced or all unfenced.
#[derive(Arbitrary, Clone, Debug)]
pub struct Script {
    /// Whether the savers enforce one writer per thread (`with_fencing`).
    pub fenced: bool,
    /// The operations, in order.
    pub ops: Vec<Op>,
}

/// One call of the [`stategraph_checkpoint::CheckpointSaver`] trait.
#[derive(Arbitrary, Clone, Debug)]
pub enum Op {
    /// `put`.
    Put(PutOp),
    /// `put_writes`.
    PutWrites(WritesOp),
    /// `put_batch` of a few puts and writes (at most [`MAX_BATCH`]).
    Batch(Vec<BatchOp>),
    /// `get_tuple`.
    GetTuple(At),
    /// `list` (or `list_stream`, collected).
    List(ListOp),
    /// `get_delta_channel_history` for the channels whose bits are set.
    DeltaHistory {
        /// The checkpoint whose history is read.
        at: At,
        /// A bit per channel of [`crate::world::CHANNELS`].
        channels: u8,
    },
    /// `delete_thread`.
    DeleteThread(u8),
    /// `copy_thread(source, target)`.
    CopyThread {
        /// The thread copied.
        source: u8,
        /// The thread it is copied to (maybe the same one, maybe holding checkpoints).
        target: u8,
    },
    /// `prune` of the threads whose bits are set.
    Prune {
        /// A bit per thread of [`crate::world::THREADS`].
        threads: u8,
        /// `PruneStrategy::Delete` instead of `KeepLatest`.
        delete: bool,
    },
    /// `delete_for_runs` of the run ids whose bits are set.
    DeleteForRuns(u8),
}

/// The most ops of one [`Op::Batch`] that are run (the rest are ignored).
pub const MAX_BATCH: usize = 6;

/// One op of a `put_batch`.
#[derive(Arbitrary, Clone, Debug)]
pub enum BatchOp {
    /// A `SaveOp::Put`.
    Put(PutOp),
    /// A `SaveOp::PutWrites`.
    Writes(WritesOp),
}

/// A thread and a namespace.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub struct Scope {
    /// Index into [`crate::world::THREADS`] (one of them holds a NUL, which savers refuse).
    pub thread: u8,
    /// Index into [`crate::world::NAMESPACES`].
    pub ns: u8,
}

/// A checkpoint id, chosen among the ids minted so far.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum Pick {
    /// No id (the latest, for reads; no parent, for a put).
    Latest,
    /// The `n`-th newest id minted in the same scope (modulo their number).
    Newest(u8),
    /// Any id minted so far, in any scope (modulo their number).
    Any(u8),
    /// An id never minted, greater than every minted one.
    Unknown,
}

/// A checkpoint address: a scope and an id.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub struct At {
    /// Where.
    pub scope: Scope,
    /// Which checkpoint.
    pub id: Pick,
}

/// The arguments of a `put`.
#[derive(Arbitrary, Clone, Debug)]
pub struct PutOp {
    /// Where, and the parent id (`config.checkpoint_id`).
    pub parent: At,
    /// Re-put the `n`-th newest id of the scope instead of minting a new one.
    pub reuse: Option<u8>,
    /// Mark the put as a deliberate branch (`CONFIG_KEY_BRANCH`).
    pub branch: bool,
    /// The version of each channel of [`crate::world::CHANNELS`] (absent when `None`).
    pub versions: [Option<u8>; 4],
    /// Record every channel version as seen by a node.
    pub seen: bool,
    /// `updated_channels` set (to the channels present) or null.
    pub updated: bool,
    /// The metadata.
    pub meta: MetaOp,
}

/// Checkpoint metadata and the config keys `put` copies into it.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub struct MetaOp {
    /// Index into the sources (`input`, `loop`, `update`, `fork`, another string).
    pub source: u8,
    /// The step.
    pub step: i8,
    /// Index into [`crate::world::RUNS`] (past its end: no `run_id`).
    pub run: u8,
    /// A user key `k` with this value of [`crate::world::meta_value`].
    pub key: Option<u8>,
    /// `parents` `{"": <an id>}` instead of `{}`.
    pub parents: bool,
    /// A `config.metadata` key `user` with this value of [`crate::world::meta_value`].
    pub config_meta: Option<u8>,
}

/// The arguments of a `put_writes`.
#[derive(Arbitrary, Clone, Debug)]
pub struct WritesOp {
    /// The checkpoint written against.
    pub at: At,
    /// Index into [`crate::world::TASKS`].
    pub task: u8,
    /// Index into [`crate::world::TASK_PATHS`].
    pub path: u8,
    /// `(channel, value)` indexes into [`crate::world::WRITE_CHANNELS`] and the values (at
    /// most four are used).
    pub writes: Vec<(u8, u8)>,
}

/// The arguments of a `list`.
#[derive(Arbitrary, Clone, Debug)]
pub struct ListOp {
    /// Which checkpoints.
    pub scope: ListScope,
    /// Metadata filter keys and values (at most two are used).
    pub filter: Vec<(u8, u8)>,
    /// `before` this id.
    pub before: Option<Pick>,
    /// `limit` (modulo 5).
    pub limit: Option<u8>,
    /// Read through `list_stream` instead of `list`.
    pub stream: bool,
}

/// The config of a `list`.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum ListScope {
    /// `None`: every thread.
    All,
    /// A thread without a namespace: every namespace of it.
    Thread(u8),
    /// One namespace of a thread.
    Ns(Scope),
    /// One checkpoint.
    One(At),
}
