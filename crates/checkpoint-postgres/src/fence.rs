//! The fence: a `put` whose parent is no longer the head of its thread is refused.
//!
//! Several processes may run the same thread against one database (a retried job, two
//! workers picking up the same resume). Each loads the head checkpoint `H`, runs a step,
//! and puts a child of `H`. Without a fence both children are stored, the thread forks
//! silently and the next reader follows whichever id is greater. With the fence, the
//! first child to commit wins and the other put fails with
//! [`stategraph_checkpoint::Error::Conflict`], storing nothing: neither its checkpoint nor
//! its blobs, while the winner's rows are untouched. The loser can reload the head and
//! decide what to do.
//!
//! # The rule
//!
//! A put of checkpoint `C` with parent `P` (`config.checkpoint_id`, or none) into
//! `(thread, namespace)` is accepted when
//!
//! * `P` is the current head, the greatest checkpoint id of `(thread, namespace)`; with no
//!   parent, when the namespace has no checkpoint yet; or
//! * `C` is already stored there with the same parent: putting it again replaces it (a
//!   retry) and moves nothing on; or
//! * the put starts a deliberate branch (time travel, `update_state` of an older
//!   checkpoint: a fork the engine marks, see below), which is admitted.
//!
//! Anything else is a conflict, in particular a put with no parent into a namespace that
//! already has checkpoints, and a put whose parent was deleted meanwhile.
//!
//! # Task writes
//!
//! A put is not all a run stores: between two puts its tasks store their writes against
//! the checkpoint they ran on, and a resumed run reuses the writes it finds instead of
//! running the task again. Two runs resuming the same checkpoint `C` run the same tasks;
//! without a fence the first write of a task stays (a repeated normal index is ignored)
//! while the other run may win the put, and the thread then holds a child made from one
//! run's result beside the other run's write for the same task. So `put_writes` against
//! `C` into `(thread, namespace)` is refused with
//! [`stategraph_checkpoint::Error::Conflict`], storing nothing of that call, when
//!
//! * another checkpoint of `(thread, namespace)` already has `C` as its parent (a run
//!   moved past `C`), unless the config marks a deliberate branch; or
//! * a normal write (index ≥ 0) of the call meets a stored write of the same task and
//!   index with another channel, type or bytes: another run stored this task's result
//!   first. An identical repeat stays silently idempotent, and a reserved index
//!   (negative: errors, interrupts, resumes) is still replaced, last wins.
//!
//! The check and the insert are one statement behind the same advisory lock as the
//! fenced put, in the same pipelined transaction shape, so a write and a put of one
//! thread are serialized against each other.
//!
//! # What `Conflict` promises
//!
//! The refused call stored nothing. Whatever the losing run stored before its first
//! refused call is identical to what the winner stored (idempotent writes), on
//! checkpoints nobody descends from, or in the thread's history (the winner loaded the
//! thread after the loser had stored checkpoints, and started from its newest one); the
//! rule is `stategraph_checkpoint::fence`'s, and the engine tells the loser which
//! (`stategraph::InputFate`). The winner's rows are untouched.
//!
//! # How
//!
//! The put (and likewise the fenced `put_writes`) is one pipelined transaction, sent in
//! one round trip:
//!
//! ```text
//! BEGIN ISOLATION LEVEL READ COMMITTED
//! SELECT pg_advisory_xact_lock(hashtext(thread), hashtext(namespace))
//! WITH fence AS (head check), blobs AS (INSERT … WHERE ok), carried AS (INSERT … WHERE ok),
//!      saved AS (INSERT … WHERE ok)
//!     SELECT ok, head FROM fence
//! COMMIT
//! ```
//!
//! The lock serializes the fenced puts of one `(thread, namespace)` (its two-key form
//! keeps it apart from single-key advisory locks an application may take). The statement
//! after it runs on a snapshot taken once the lock is held, so it sees every put that
//! committed before, and its inserts happen only when the check passed. The transaction is
//! read committed whatever the session default, since a repeatable-read snapshot would be
//! taken before the lock wait.
//!
//! # What it costs and what it refuses
//!
//! Two fenced puts of one thread wait for each other for the length of one statement.
//! The head is found by one backward probe of the primary key (`ORDER BY checkpoint_id
//! DESC LIMIT 1`): written as `max(checkpoint_id)`, Postgres plans an aggregate over every
//! checkpoint of the thread (its estimates give no reason for the min/max rewrite), a cost
//! that grows with a conversation (0.25 ms at 48 checkpoints, against 0.02 ms).
//! Deliberate branching would look like a lost race at this level, so the engine marks it:
//! the first put of a replay from an older checkpoint ("time travel", metadata source
//! `fork`) or of `update_state` on a checkpoint that is not the head carries
//! [`stategraph_checkpoint::CONFIG_KEY_BRANCH`], and such a put is not fenced (its
//! followers chain from it, the new head, and are fenced as usual). A writer that branches
//! without the mark (Python's `__copy__` update, say) needs
//! [`crate::PostgresSaver::with_fencing`]`(false)`, which stores exactly what Python's
//! saver stores, without the check. The
//! fence adds no column or table: a fenced and an unfenced saver, or Python's, share a
//! database (only fenced writers are checked against each other, and against the rows
//! everyone wrote).

/// The error of task writes the fence refused: another run stored `child` after the
/// checkpoint, or a different write at index `idx` of the task.
pub(crate) fn writes_conflict(
    thread: &str,
    ns: &str,
    checkpoint: &str,
    task: &str,
    child: Option<&str>,
    idx: Option<i32>,
) -> stategraph_checkpoint::Error {
    let why = match (child, idx) {
        (Some(child), _) => {
            format!("checkpoint {child} already continues from it; another run moved the thread on")
        }
        (None, Some(idx)) => format!(
            "a different write of that task at index {idx} is stored; another run stored \
             this task's result first"
        ),
        (None, None) => "of another writer".to_owned(),
    };
    stategraph_checkpoint::Error::Conflict(format!(
        "thread {thread:?}, namespace {ns:?}: the writes of task {task} against checkpoint \
         {checkpoint} were refused because {why}"
    ))
}

/// The error of a put the fence refused.
pub(crate) fn conflict(
    thread: &str,
    ns: &str,
    parent: Option<&str>,
    head: Option<&str>,
) -> stategraph_checkpoint::Error {
    let parent = parent.map_or_else(|| "no parent".to_owned(), |p| format!("parent {p}"));
    let head = head.map_or_else(
        || "the namespace has no checkpoint".to_owned(),
        |h| format!("its latest checkpoint is {h}"),
    );
    stategraph_checkpoint::Error::Conflict(format!(
        "thread {thread:?}, namespace {ns:?}: a put with {parent} was refused because {head}; \
         another writer moved the thread on"
    ))
}
