//! The fence on `MemorySaver`: two tasks racing on one thread, 100 rounds.
//!
//! A round is one step of a run played twice at once, by two tokio tasks on two worker
//! threads sharing one saver: each loads the head `H` of a fresh thread, both wait until
//! the other has loaded it, then each stores its task's result against `H` (the same task
//! id, as two runs of one graph compute it) and puts a child of `H`. Exactly one must
//! succeed; the other must fail with `Error::Conflict`, and the saver must then hold `H`
//! and the winner's child only, with the winner's values and the winner's task write on
//! `H`. In half the rounds the two results differ (the write decides the race), in the
//! other half they are equal (the writes are idempotent and the put decides).

use std::sync::Arc;

use stategraph_checkpoint::{
    Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, CheckpointSource, Error,
    ListOptions, MemorySaver, Value,
};
use tokio::sync::Barrier;

const ROUNDS: usize = 100;
const TASK: &str = "00000000-0000-0000-0000-00000000cafe";

fn checkpoint(saver: &MemorySaver, who: &str) -> Checkpoint {
    let id = stategraph_checkpoint::id::IdGenerator::system().uuid6(0);
    let mut cp = Checkpoint::empty(id, "2025-01-01T00:00:00+00:00");
    cp.channel_values.insert("who".into(), Value::from(who));
    cp.channel_versions
        .insert("who".into(), saver.get_next_version(None));
    cp
}

/// Loads the head, waits for the other racer, then takes the step: the task's write,
/// then the child. Returns the child's id and the outcome.
async fn race(
    saver: Arc<MemorySaver>,
    thread: String,
    who: &'static str,
    result: &'static str,
    barrier: Arc<Barrier>,
) -> (String, Result<(), Error>) {
    let head = saver
        .get_tuple(&CheckpointConfig::thread(thread.as_str()))
        .await
        .expect("load")
        .expect("a head");
    let cp = checkpoint(&saver, who);
    barrier.wait().await;
    let writes = [("who".to_owned(), Value::from(result))];
    if let Err(e) = saver.put_writes(&head.config, &writes, TASK, "").await {
        return (cp.id, Err(e));
    }
    let md = CheckpointMetadata::new(CheckpointSource::Loop, 0);
    let versions = cp.channel_versions.clone();
    let put = saver.put(&head.config, &cp, &md, &versions).await;
    (cp.id, put.map(|_| ()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_tasks_racing_on_one_thread_exactly_one_wins_every_round() {
    let saver = Arc::new(MemorySaver::new());
    let mut wins = [0usize; 2];
    for round in 0..ROUNDS {
        let thread = format!("race-{round}");
        let first = checkpoint(&saver, "start");
        let md = CheckpointMetadata::new(CheckpointSource::Input, -1);
        let versions = first.channel_versions.clone();
        saver
            .put(
                &CheckpointConfig::thread(thread.as_str()),
                &first,
                &md,
                &versions,
            )
            .await
            .expect("the first checkpoint");
        let results = if round % 2 == 0 {
            ["a", "b"]
        } else {
            ["same", "same"]
        };
        let barrier = Arc::new(Barrier::new(2));
        let tasks: Vec<_> = (0..2)
            .map(|i| {
                let args = (saver.clone(), thread.clone(), barrier.clone());
                let (who, result) = (["a", "b"][i], results[i]);
                tokio::spawn(async move { race(args.0, args.1, who, result, args.2).await })
            })
            .collect();
        let mut outcomes = Vec::new();
        for task in tasks {
            outcomes.push(task.await.expect("racer"));
        }
        let won: Vec<usize> = (0..2).filter(|&i| outcomes[i].1.is_ok()).collect();
        let lost: Vec<usize> = (0..2)
            .filter(|&i| matches!(outcomes[i].1, Err(Error::Conflict(_))))
            .collect();
        assert_eq!(
            (won.len(), lost.len()),
            (1, 1),
            "round {round}: one winner, one conflict: {outcomes:?}"
        );
        let w = won[0];
        wins[w] += 1;
        let listed = saver
            .list(
                Some(&CheckpointConfig::thread(thread.as_str())),
                &ListOptions::default(),
            )
            .await
            .expect("list");
        let ids: Vec<&str> = listed.iter().map(|t| t.checkpoint.id.as_str()).collect();
        assert_eq!(ids, [outcomes[w].0.as_str(), first.id.as_str()], "no fork");
        assert_eq!(
            listed[0].checkpoint.channel_values.get("who"),
            Some(&Value::from(["a", "b"][w]))
        );
        let writes: Vec<(&str, &Value)> = listed[1]
            .pending_writes
            .iter()
            .map(|p| (p.task_id.as_str(), &p.value))
            .collect();
        let want = Value::from(results[w]);
        assert_eq!(writes, [(TASK, &want)], "the task write is the winner's");
    }
    println!("wins: a {}, b {}", wins[0], wins[1]);
}

#[tokio::test]
async fn an_unfenced_saver_lets_both_racers_win() {
    // What the fence prevents: without it both children of the head are stored.
    let saver = MemorySaver::new().with_fencing(false);
    let first = checkpoint(&saver, "start");
    let md = CheckpointMetadata::new(CheckpointSource::Input, -1);
    let head = saver
        .put(
            &CheckpointConfig::thread("t"),
            &first,
            &md,
            &first.channel_versions.clone(),
        )
        .await
        .expect("first");
    for who in ["a", "b"] {
        let cp = checkpoint(&saver, who);
        saver
            .put(&head, &cp, &md, &cp.channel_versions.clone())
            .await
            .expect("unfenced put");
    }
    let listed = saver
        .list(
            Some(&CheckpointConfig::thread("t")),
            &ListOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(listed.len(), 3, "a fork");
}
