//! The entrypoints of `tests/golden/gen_functional.py` (and of the interop script), in Rust.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use stategraph::checkpoint::CheckpointSaver;
use stategraph::functional::{task, CompiledEntrypoint, Entrypoint, Final};
use stategraph::{map, NodeContext, Value};

type CheckpointSaverArc = Arc<dyn CheckpointSaver>;

/// How many times each task body ran (to see that finished tasks never run again).
#[derive(Default)]
pub(crate) struct Counts {
    pub(crate) add_one: AtomicUsize,
    pub(crate) compose: AtomicUsize,
    pub(crate) ask: AtomicUsize,
}

impl Counts {
    pub(crate) fn get(&self) -> [usize; 3] {
        [
            self.add_one.load(Ordering::SeqCst),
            self.compose.load(Ordering::SeqCst),
            self.ask.load(Ordering::SeqCst),
        ]
    }
}

fn ints(xs: &[i64]) -> Value {
    Value::List(xs.iter().map(|&x| Value::from(x)).collect())
}

/// `add_all`: one `add_one` call per number, an interrupt, a `Final` saving the sum.
pub(crate) fn add_all(
    saver: CheckpointSaverArc,
    counts: Arc<Counts>,
) -> CompiledEntrypoint<Vec<i64>, Value> {
    let c = counts.clone();
    let add_one = task("add_one", move |x: i64| {
        c.add_one.fetch_add(1, Ordering::SeqCst);
        async move { Ok(x + 1) }
    });
    Entrypoint::new("add_all", move |nums: Vec<i64>, ctx: NodeContext| {
        let add_one = add_one.clone();
        async move {
            let calls: Vec<_> = nums.iter().map(|n| ctx.call(&add_one, *n)).collect();
            let sums: Vec<i64> = futures::future::try_join_all(calls).await?;
            let answer = ctx.interrupt(map! {"question" => "keep these sums?", "sums" => ints(&sums)})?;
            let previous: Option<i64> = ctx.previous()?;
            let value = map! {"sums" => ints(&sums), "answer" => answer, "previous" => previous.map_or(Value::Nil, Value::from)};
            Ok(Final::new(value).save(sums.iter().sum::<i64>()))
        }
    })
    .checkpointer(saver)
    .compile()
    .expect("compiles")
}

/// `review`: `compose`, then `ask`, a task that interrupts itself.
pub(crate) fn review(
    saver: CheckpointSaverArc,
    counts: Arc<Counts>,
) -> CompiledEntrypoint<String, Value> {
    let c = counts.clone();
    let compose = task("compose", move |topic: String| {
        c.compose.fetch_add(1, Ordering::SeqCst);
        async move { Ok(format!("an essay about {topic}")) }
    });
    let c = counts;
    let ask = task("ask", move |essay: String, ctx: NodeContext| {
        c.ask.fetch_add(1, Ordering::SeqCst);
        async move {
            let answer = ctx.interrupt(map! {"review" => essay.as_str()})?;
            Ok(format!("{essay}: {}", answer.as_str().unwrap_or_default()))
        }
    });
    Entrypoint::new("review", move |topic: String, ctx: NodeContext| {
        let (compose, ask) = (compose.clone(), ask.clone());
        async move {
            let essay: String = ctx.call(&compose, topic).await?;
            let review: String = ctx.call(&ask, essay.clone()).await?;
            Ok(map! {"essay" => essay.as_str(), "review" => review.as_str()})
        }
    })
    .checkpointer(saver)
    .compile()
    .expect("compiles")
}

/// `nested`: `double_then_ask`, a task that calls the task `double`, then interrupts.
pub(crate) fn nested(
    saver: CheckpointSaverArc,
    counts: Arc<Counts>,
) -> CompiledEntrypoint<i64, Value> {
    let double = task("double", move |x: i64| {
        counts.add_one.fetch_add(1, Ordering::SeqCst);
        async move { Ok(2 * x) }
    });
    let double_then_ask = task("double_then_ask", move |x: i64, ctx: NodeContext| {
        let double = double.clone();
        async move {
            let doubled: i64 = ctx.call(&double, x).await?;
            let answer = ctx.interrupt(format!("double {x}?"))?;
            Ok(map! {"doubled" => doubled, "answer" => answer})
        }
    });
    Entrypoint::new("nested", move |x: i64, ctx: NodeContext| {
        let double_then_ask = double_then_ask.clone();
        async move { ctx.call(&double_then_ask, x).await }
    })
    .checkpointer(saver)
    .compile()
    .expect("compiles")
}
