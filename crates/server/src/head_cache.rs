//! The heads of the threads this process ran last: a conversation's next run starts from
//! the head its previous run left (`RunConfig::start_from`) instead of reading it.
//!
//! **The rule.** At its normal end a run leaves its thread's head here (its newest root
//! checkpoint and the writes stored against it, [`stategraph::ThreadHead`]); every run of
//! the thread takes the entry out at its start, whatever happens next. The claim of a
//! run returns the thread's stored head as the database has it then ([`StoredHead`]: the
//! greatest checkpoint id of the root namespace and the number of writes against it), and
//! the cached head is used only when both match.
//!
//! **Why the check suffices.** Checkpoint ids grow with time (uuid6), and the fence and
//! `get_tuple` both take the greatest id as the head, so the claim's id is the checkpoint
//! a read would load. Anything that stores a checkpoint on the thread after the cached
//! run (another process's run, `update_state`, a fork at an older checkpoint) makes a
//! greater id: a mismatch. A rollback deletes the rolled-back run's checkpoints, which
//! are all newer than the head the run started from: the greatest id goes back to an
//! older checkpoint, which is either the cached head itself (the rolled-back run took the
//! entry out at its start, so there is none) or another one (a mismatch). Deleting and
//! recreating the thread leaves new ids. What a new checkpoint does not show is a write
//! stored against the same head: a run in another process that failed, or paused again,
//! before its first checkpoint (a `Command`'s update, a task's writes). Writes at a
//! normal index are only ever added, so the count shows them; those at a reserved index
//! (interrupt, resume, error) replace each other, but a run with new input, the only kind
//! that starts from a held head, does not read them. Runs of one thread never overlap (the
//! claim takes only a thread that is not busy), and a head that went stale between the
//! claim and the run's first checkpoint is refused by the saver's fence with a conflict,
//! as a read head would be after such a race.
//!
//! The cache is bounded ([`CAPACITY`] threads by default,
//! `ServerBuilder::head_cache`); an evicted thread's next run reads.

use std::collections::{HashMap, VecDeque};

use parking_lot::Mutex;
use stategraph::ThreadHead;
use uuid::Uuid;

use crate::db::StoredHead;

/// How many threads' heads a process keeps by default (the oldest entries go first).
pub const CAPACITY: usize = 1024;

/// Thread id -> the head its last run in this process left.
pub(crate) struct HeadCache {
    capacity: usize,
    inner: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    /// Each thread's head and the stamp of its insertion.
    heads: HashMap<Uuid, (u64, ThreadHead)>,
    /// Insertions, oldest first; an entry whose stamp is no longer its thread's is stale.
    order: VecDeque<(Uuid, u64)>,
    next: u64,
}

impl HeadCache {
    /// A cache of at most `capacity` threads (0: it keeps nothing).
    pub(crate) fn with_capacity(capacity: usize) -> HeadCache {
        HeadCache {
            capacity,
            inner: Mutex::new(Entries::default()),
        }
    }

    /// Takes `thread`'s entry out, and returns the head when it is the one the database
    /// holds (`stored`, from the run's claim).
    pub(crate) fn take(&self, thread: Uuid, stored: Option<&StoredHead>) -> Option<ThreadHead> {
        let (_, head) = self.inner.lock().heads.remove(&thread)?;
        let stored = stored?;
        let same = head.checkpoint_id() == stored.checkpoint_id
            && i64::try_from(head.write_count()).is_ok_and(|n| n == stored.writes);
        same.then_some(head)
    }

    /// Keeps `head` as `thread`'s, evicting the oldest threads beyond the capacity.
    pub(crate) fn put(&self, thread: Uuid, head: ThreadHead) {
        if self.capacity == 0 {
            return;
        }
        let mut e = self.inner.lock();
        let stamp = e.next;
        e.next += 1;
        e.heads.insert(thread, (stamp, head));
        e.order.push_back((thread, stamp));
        while e.heads.len() > self.capacity || e.order.len() > 2 * self.capacity {
            let Some((old, at)) = e.order.pop_front() else {
                break;
            };
            if e.heads.get(&old).is_some_and(|(s, _)| *s == at) {
                e.heads.remove(&old);
            }
        }
    }

    /// How many threads have a head here.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.inner.lock().heads.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use futures::StreamExt;
    use stategraph::checkpoint::MemorySaver;
    use stategraph::{CompileOptions, DynState, RunConfig, StateGraph, StreamMode, END, START};

    /// A head of `thread` from a one-node run on a memory saver.
    async fn head_of(thread: Uuid) -> ThreadHead {
        let mut g = StateGraph::<DynState>::with_channels(vec![(
            "n".into(),
            Box::new(stategraph::channels::LastValue::new()) as _,
        )]);
        g.add_node("inc", |_s: DynState| async move {
            stategraph::update([("n", 1)])
        });
        g.add_edge(START, "inc").add_edge("inc", END);
        let saver = std::sync::Arc::new(MemorySaver::new());
        let app = g
            .compile_with(CompileOptions::new().checkpointer(saver))
            .unwrap();
        let cfg = RunConfig::thread(thread.to_string());
        let mut run = app.stream_run(stategraph::update([("n", 0)]), &cfg, [StreamMode::Values]);
        while let Some(e) = run.next().await {
            e.unwrap();
        }
        run.final_head().cloned().unwrap()
    }

    fn stored(head: &ThreadHead, writes: i64) -> StoredHead {
        StoredHead {
            checkpoint_id: head.checkpoint_id().to_owned(),
            writes,
        }
    }

    #[tokio::test]
    async fn a_head_is_used_only_when_the_database_holds_it_and_only_once() {
        let cache = HeadCache::with_capacity(CAPACITY);
        let t = Uuid::new_v4();
        let head = head_of(t).await;
        let cases = [
            (Some(stored(&head, 0)), true),
            (Some(stored(&head, 1)), false),
            (
                Some(StoredHead {
                    checkpoint_id: "newer".into(),
                    writes: 0,
                }),
                false,
            ),
            (None, false),
        ];
        for (db, used) in cases {
            cache.put(t, head.clone());
            let got = cache.take(t, db.as_ref());
            assert_eq!(got.is_some(), used, "{db:?}");
            assert!(
                cache.take(t, Some(&stored(&head, 0))).is_none(),
                "taken out"
            );
        }
        assert!(cache
            .take(Uuid::new_v4(), Some(&stored(&head, 0)))
            .is_none());
    }

    #[tokio::test]
    async fn the_oldest_threads_are_evicted_beyond_the_capacity() {
        let cache = HeadCache::with_capacity(2);
        let threads: Vec<Uuid> = (0..3).map(|_| Uuid::new_v4()).collect();
        let mut heads = Vec::new();
        for t in &threads {
            heads.push(head_of(*t).await);
        }
        cache.put(threads[0], heads[0].clone());
        cache.put(threads[1], heads[1].clone());
        // Renewing thread 0 makes thread 1 the oldest.
        cache.put(threads[0], heads[0].clone());
        cache.put(threads[2], heads[2].clone());
        assert_eq!(cache.len(), 2);
        let present: Vec<bool> = threads
            .iter()
            .zip(&heads)
            .map(|(t, h)| cache.take(*t, Some(&stored(h, 0))).is_some())
            .collect();
        assert_eq!(present, [true, false, true]);

        let none = HeadCache::with_capacity(0);
        none.put(threads[0], heads[0].clone());
        assert_eq!(none.len(), 0, "a cache of no threads keeps nothing");
    }
}
