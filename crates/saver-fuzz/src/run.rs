//! Runs a script against a reference saver and the savers under test, comparing every
//! answer; a difference is a [`Mismatch`] naming the step, the call and both answers.

use std::fmt;
use std::sync::Arc;

use futures::TryStreamExt;
use stategraph_checkpoint::{CheckpointSaver, ListOptions, PruneStrategy, SaveOp};

use crate::answer::{Answer, Shape, TupleView};
use crate::op::{BatchOp, ListOp, Op, Script, MAX_BATCH};
use crate::world::{self, chosen, World};

/// A saver under test: a name for reports, the saver, and how its answers are normalized.
pub struct Subject<'a> {
    /// Shown in a mismatch.
    pub name: &'a str,
    /// The saver.
    pub saver: &'a dyn CheckpointSaver,
    /// Its documented differences from the reference.
    pub shape: Shape,
}

/// Two savers answered one call differently.
pub struct Mismatch {
    /// The index of the op in the script (`ops.len()` for the final sweep).
    pub step: usize,
    /// The call, with its resolved arguments.
    pub call: String,
    /// The saver that differed.
    pub saver: String,
    /// The reference's answer.
    pub expected: Answer,
    /// The saver's answer.
    pub got: Answer,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "step {}: {} answered differently from the reference\ncall: {}\n",
            self.step, self.saver, self.call
        )?;
        if let (Answer::Tuples(a), Answer::Tuples(b)) = (&self.expected, &self.got) {
            let at = a.iter().zip(b).take_while(|(x, y)| x == y).count();
            writeln!(
                f,
                "{} tuples expected, {} got; the first difference is at {at}",
                a.len(),
                b.len()
            )?;
        }
        write!(f, "expected: {:?}\ngot: {:?}", self.expected, self.got)
    }
}

impl fmt::Debug for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Runs `script` on `reference` (first) and on each of `others`, in lockstep, comparing
/// each answer; then compares a final sweep (every thread's listing). The savers must start
/// empty of the threads of [`world::THREADS`] and be fenced as `script.fenced` says.
pub async fn run_script(
    script: &Script,
    reference: &dyn CheckpointSaver,
    others: &[Subject<'_>],
) -> Result<(), Mismatch> {
    run_script_with(script, reference, others, false).await
}

/// [`run_script`], with the final sweep after every op when `sweep_each` is set: slower,
/// and a difference that no read has shown yet is reported at the op that made it.
pub async fn run_script_with(
    script: &Script,
    reference: &dyn CheckpointSaver,
    others: &[Subject<'_>],
    sweep_each: bool,
) -> Result<(), Mismatch> {
    let mut world = World::default();
    for (step, op) in script.ops.iter().enumerate() {
        let call = Call::new(op, &mut world);
        call.compare(step, reference, others).await?;
        if sweep_each {
            sweep().compare(step, reference, others).await?;
        }
    }
    sweep().compare(script.ops.len(), reference, others).await
}

/// Every checkpoint of every thread.
fn sweep() -> Call {
    Call::List {
        op: ListOp {
            scope: crate::op::ListScope::All,
            filter: Vec::new(),
            before: None,
            limit: None,
            stream: false,
        },
        config: None,
        options: ListOptions::default(),
    }
}

/// Deletes every thread a script can write, so that a saver can serve the next script.
pub async fn clear(saver: &dyn CheckpointSaver) -> stategraph_checkpoint::Result<()> {
    for thread in &world::THREADS[..3] {
        saver.delete_thread(thread).await?;
    }
    Ok(())
}

/// An op with its arguments resolved against the world (ids minted once, for all savers).
#[derive(Debug)]
enum Call {
    Put(SaveOp),
    Batch(Vec<SaveOp>),
    GetTuple(stategraph_checkpoint::CheckpointConfig),
    List {
        op: ListOp,
        config: Option<stategraph_checkpoint::CheckpointConfig>,
        options: ListOptions,
    },
    DeltaHistory(stategraph_checkpoint::CheckpointConfig, Vec<String>),
    DeleteThread(&'static str),
    CopyThread(&'static str, &'static str),
    Prune(Vec<String>, PruneStrategy),
    DeleteForRuns(Vec<String>),
}

impl Call {
    fn new(op: &Op, world: &mut World) -> Call {
        match op {
            Op::Put(p) => Call::Put(save_op(world, &BatchOp::Put(p.clone()))),
            Op::PutWrites(w) => Call::Put(save_op(world, &BatchOp::Writes(w.clone()))),
            Op::Batch(ops) => Call::Batch(
                ops.iter()
                    .take(MAX_BATCH)
                    .map(|o| save_op(world, o))
                    .collect(),
            ),
            Op::GetTuple(at) => Call::GetTuple(world.config(*at)),
            Op::List(l) => {
                let mut options = ListOptions::default();
                for (k, v) in l.filter.iter().take(2) {
                    let key = world::FILTER_KEYS[usize::from(*k) % world::FILTER_KEYS.len()];
                    options = options.filter(key, world::filter_value(*v));
                }
                if let Some(pick) = l.before {
                    let scope = match l.scope {
                        crate::op::ListScope::Ns(s) => s,
                        crate::op::ListScope::One(at) => at.scope,
                        _ => crate::op::Scope { thread: 0, ns: 0 },
                    };
                    options.before = Some(world.config(crate::op::At { scope, id: pick }));
                }
                options.limit = l.limit.map(|n| usize::from(n % 5));
                Call::List {
                    op: l.clone(),
                    config: world.list_config(l.scope),
                    options,
                }
            }
            Op::DeltaHistory { at, channels } => {
                let channels = chosen(*channels, &world::CHANNELS)
                    .into_iter()
                    .map(String::from)
                    .collect();
                Call::DeltaHistory(world.config(*at), channels)
            }
            Op::DeleteThread(t) => Call::DeleteThread(world::thread(*t)),
            Op::CopyThread { source, target } => {
                Call::CopyThread(world::thread(*source), world::thread(*target))
            }
            Op::Prune { threads, delete } => Call::Prune(
                chosen(*threads, &world::THREADS)
                    .into_iter()
                    .map(String::from)
                    .collect(),
                if *delete {
                    PruneStrategy::Delete
                } else {
                    PruneStrategy::KeepLatest
                },
            ),
            Op::DeleteForRuns(runs) => Call::DeleteForRuns(
                chosen(*runs, &world::RUNS)
                    .into_iter()
                    .map(String::from)
                    .collect(),
            ),
        }
    }

    /// Makes the call on every saver and compares each answer with the reference's. A
    /// change is made once on the reference; a read is asked again for each saver's shape.
    async fn compare(
        &self,
        step: usize,
        reference: &dyn CheckpointSaver,
        others: &[Subject<'_>],
    ) -> Result<(), Mismatch> {
        let own = self.answer(reference, Shape::default()).await;
        if let Call::List { .. } = self {
            self.check_own_order(step, reference, &own).await?;
        }
        for subject in others {
            let expected = match self {
                Call::List { .. } => self.listing_expected(reference, subject.shape).await,
                Call::GetTuple(_) | Call::DeltaHistory(..) => {
                    self.answer(reference, subject.shape).await
                }
                _ => own.clone(),
            };
            let got = self.answer(subject.saver, subject.shape).await;
            if got != expected {
                return Err(Mismatch {
                    step,
                    call: format!("{self:#?}"),
                    saver: subject.name.to_owned(),
                    expected,
                    got,
                });
            }
        }
        Ok(())
    }

    /// The listing a SQL saver must give: the reference's whole listing (no limit) in the
    /// SQL savers' order, then the limit. A documented difference, normalized: MemorySaver
    /// lists threads in first-write order, then namespaces, then ids descending (LangGraph's
    /// `InMemorySaver.list`, crates/checkpoint/src/memory/read.rs), the SQL savers by
    /// `checkpoint_id DESC, thread_id, checkpoint_ns`; over one namespace both are ids
    /// descending, over several they differ, and so does which tuples a limit keeps.
    async fn listing_expected(&self, reference: &dyn CheckpointSaver, shape: Shape) -> Answer {
        let Call::List {
            config, options, ..
        } = self
        else {
            unreachable!("a listing")
        };
        let whole = ListOptions {
            limit: None,
            ..options.clone()
        };
        match Answer::tuples(reference.list(config.as_ref(), &whole).await, shape) {
            Answer::Tuples(mut ts) => {
                ts.sort_by_key(TupleView::sql_order_key);
                ts.truncate(options.limit.unwrap_or(usize::MAX));
                Answer::Tuples(ts)
            }
            other => other,
        }
    }

    /// The reference's own listing with a limit is the first tuples of its whole listing.
    async fn check_own_order(
        &self,
        step: usize,
        reference: &dyn CheckpointSaver,
        got: &Answer,
    ) -> Result<(), Mismatch> {
        let Call::List {
            config, options, ..
        } = self
        else {
            return Ok(());
        };
        let whole = ListOptions {
            limit: None,
            ..options.clone()
        };
        let expected = match Answer::tuples(
            reference.list(config.as_ref(), &whole).await,
            Shape::default(),
        ) {
            Answer::Tuples(mut ts) => {
                ts.truncate(options.limit.unwrap_or(usize::MAX));
                Answer::Tuples(ts)
            }
            other => other,
        };
        if &expected == got {
            return Ok(());
        }
        Err(Mismatch {
            step,
            call: format!("{self:#?} (the limit against the same saver's whole listing)"),
            saver: "reference".into(),
            expected,
            got: got.clone(),
        })
    }

    async fn answer(&self, saver: &dyn CheckpointSaver, shape: Shape) -> Answer {
        match self {
            Call::Put(SaveOp::Put {
                config,
                checkpoint,
                metadata,
                new_versions,
            }) => Answer::config(
                saver.put(config, checkpoint, metadata, new_versions).await,
                shape,
            ),
            Call::Put(SaveOp::PutWrites {
                config,
                writes,
                task_id,
                task_path,
            }) => Answer::unit(saver.put_writes(config, writes, task_id, task_path).await),
            Call::Batch(ops) => Answer::unit(saver.put_batch(ops).await),
            Call::GetTuple(config) => Answer::tuple(saver.get_tuple(config).await, shape),
            Call::List {
                op,
                config,
                options,
            } => {
                let listed = if op.stream {
                    saver
                        .list_stream(config.clone(), options.clone())
                        .try_collect()
                        .await
                } else {
                    saver.list(config.as_ref(), options).await
                };
                Answer::tuples(listed, shape)
            }
            Call::DeltaHistory(config, channels) => Answer::histories(
                saver.get_delta_channel_history(config, channels).await,
                shape,
            ),
            Call::DeleteThread(t) => Answer::unit(saver.delete_thread(t).await),
            Call::CopyThread(s, t) => Answer::unit(saver.copy_thread(s, t).await),
            Call::Prune(threads, strategy) => Answer::unit(saver.prune(threads, *strategy).await),
            Call::DeleteForRuns(runs) => Answer::unit(saver.delete_for_runs(runs).await),
        }
    }
}

/// The `SaveOp` of one put or write, its ids resolved (and minted) now.
fn save_op(world: &mut World, op: &BatchOp) -> SaveOp {
    match op {
        BatchOp::Put(p) => {
            let (config, checkpoint, metadata, new_versions) = world.put(p);
            SaveOp::Put {
                config,
                checkpoint: Arc::new(checkpoint),
                metadata,
                new_versions,
            }
        }
        BatchOp::Writes(w) => {
            let (config, writes, task_id, task_path) = world.writes(w);
            SaveOp::PutWrites {
                config,
                writes,
                task_id,
                task_path,
            }
        }
    }
}
