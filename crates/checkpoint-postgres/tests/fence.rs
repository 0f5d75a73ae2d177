//! The fence: racing writers of one thread, in one process and in two, and its rules.
//!
//! A race round: a thread has a head `H`; two writers each load the head (both see `H`,
//! a barrier makes sure of it), then each puts a child of `H` with its own values. Exactly
//! one put must succeed and the other fail with `Error::Conflict`; the thread must then
//! hold `H` and the winner's child, with the winner's values, and no row of the loser.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;

use stategraph_checkpoint::{
    list, ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointSaver, CheckpointSource, Error, ListOptions, Value,
};
use stategraph_checkpoint_postgres::PostgresSaver;
use tokio::sync::Barrier;

use crate::support::TestDb;

const ROUNDS: usize = 20;

/// A checkpoint with a primitive `who` and a blob `data`, both at `version`.
fn checkpoint(who: &str, version: &ChannelVersion) -> (Checkpoint, ChannelVersions) {
    let id = stategraph_checkpoint::id::IdGenerator::system().uuid6(0);
    let mut cp = Checkpoint::empty(id, "2025-01-01T00:00:00+00:00");
    let mut versions = ChannelVersions::default();
    for (channel, value) in [("who", Value::from(who)), ("data", list![who, 1])] {
        cp.channel_values.insert(channel.to_owned(), value);
        cp.channel_versions
            .insert(channel.to_owned(), version.clone());
        versions.insert(channel.to_owned(), version.clone());
    }
    (cp, versions)
}

/// Puts the first checkpoint of a fresh thread; returns the thread and the head's id.
async fn start_thread(saver: &PostgresSaver) -> (String, String) {
    let thread = uuid::Uuid::new_v4().to_string();
    let (cp, versions) = checkpoint("start", &saver.get_next_version(None));
    let md = CheckpointMetadata::new(CheckpointSource::Input, -1);
    saver
        .put(
            &CheckpointConfig::thread(thread.as_str()),
            &cp,
            &md,
            &versions,
        )
        .await
        .expect("the first put of a thread");
    (thread, cp.id)
}

/// One racer: loads the head, waits for the other, puts a child of what it loaded.
/// Returns the put's result and the version its values were stored at.
async fn race_once(
    saver: &PostgresSaver,
    thread: &str,
    who: &str,
    barrier: &Barrier,
) -> (Result<CheckpointConfig, Error>, String, String) {
    let head = saver
        .get_tuple(&CheckpointConfig::thread(thread))
        .await
        .expect("load the head")
        .expect("a head");
    barrier.wait().await;
    let version = saver.get_next_version(head.checkpoint.channel_versions.get("who"));
    let (cp, versions) = checkpoint(who, &version);
    let md = CheckpointMetadata::new(CheckpointSource::Loop, 0);
    let result = saver.put(&head.config, &cp, &md, &versions).await;
    (result, cp.id, version.as_text())
}

/// Asserts the thread holds exactly the head and the winner, with the winner's values,
/// and that no blob of the loser's version was stored.
async fn assert_winner_intact(
    db: &TestDb,
    thread: &str,
    head: &str,
    winner: (&str, &str),
    loser_version: &str,
) {
    let (winner_id, who) = winner;
    let tuple = db
        .get_tuple(&CheckpointConfig::thread(thread))
        .await
        .expect("get")
        .expect("a head");
    assert_eq!(tuple.checkpoint.id, winner_id);
    assert_eq!(
        tuple.checkpoint.channel_values.get("who"),
        Some(&Value::from(who))
    );
    assert_eq!(
        tuple.checkpoint.channel_values.get("data"),
        Some(&list![who, 1])
    );
    assert_eq!(
        tuple.parent_config.and_then(|p| p.checkpoint_id).as_deref(),
        Some(head)
    );
    let listed = db
        .list(
            Some(&CheckpointConfig::thread(thread)),
            &ListOptions::default(),
        )
        .await
        .expect("list");
    let ids: Vec<&str> = listed.iter().map(|t| t.checkpoint.id.as_str()).collect();
    assert_eq!(ids, [winner_id, head]);
    let raw = db.raw().await;
    let loser_blobs: i64 = raw
        .query_one(
            "SELECT count(*) FROM checkpoint_blobs WHERE thread_id = $1 AND version = $2",
            &[&thread, &loser_version],
        )
        .await
        .expect("count")
        .get(0);
    assert_eq!(loser_blobs, 0, "the loser stored a blob");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_tasks_racing_on_one_head_exactly_one_wins_every_time() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let savers = Arc::new([db.another_saver(true).await, db.another_saver(true).await]);
    for _ in 0..ROUNDS {
        let (thread, head) = start_thread(&db).await;
        let barrier = Arc::new(Barrier::new(2));
        let tasks: Vec<_> = ["a", "b"]
            .into_iter()
            .enumerate()
            .map(|(i, who)| {
                let (savers, barrier, thread) = (savers.clone(), barrier.clone(), thread.clone());
                tokio::spawn(async move { race_once(&savers[i], &thread, who, &barrier).await })
            })
            .collect();
        let mut results = Vec::new();
        for (task, who) in tasks.into_iter().zip(["a", "b"]) {
            results.push((task.await.expect("racer task"), who));
        }
        let winners: Vec<_> = results.iter().filter(|((r, _, _), _)| r.is_ok()).collect();
        let losers: Vec<_> = results.iter().filter(|((r, _, _), _)| r.is_err()).collect();
        assert_eq!(winners.len(), 1, "exactly one winner: {results:?}");
        let ((loss, _, loser_version), _) = losers[0];
        assert!(matches!(loss, Err(Error::Conflict(_))), "{loss:?}");
        let ((_, winner_id, _), who) = winners[0];
        assert_winner_intact(&db, &thread, &head, (winner_id, who), loser_version).await;
    }
}

/// The environment variables that switch this test binary into a racer.
const RACER_URL: &str = "STATEGRAPH_PG_RACER_URL";
const RACER_THREAD: &str = "STATEGRAPH_PG_RACER_THREAD";
const RACER_NAME: &str = "STATEGRAPH_PG_RACER_NAME";

/// Not a test of its own: the entry point of the child processes of
/// `two_processes_racing_on_one_head_exactly_one_wins_every_time`, which run this binary
/// with `RACER_*` set. It loads the head, prints `RACER LOADED`, waits for `GO` on stdin,
/// puts a child and prints `RACER WON <id> <version>` or `RACER CONFLICT <id> <version>`.
/// Without the variables it returns at once.
#[tokio::test]
async fn racer_process_entry() {
    let (Ok(url), Ok(thread), Ok(who)) = (
        std::env::var(RACER_URL),
        std::env::var(RACER_THREAD),
        std::env::var(RACER_NAME),
    ) else {
        return;
    };
    let saver = PostgresSaver::connect(&url).await.expect("racer connect");
    let head = saver
        .get_tuple(&CheckpointConfig::thread(thread.as_str()))
        .await
        .expect("racer load")
        .expect("racer head");
    say(&format!("LOADED {}", head.checkpoint.id));
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).expect("racer stdin");
    assert_eq!(line.trim(), "GO");
    let version = saver.get_next_version(head.checkpoint.channel_versions.get("who"));
    let (cp, versions) = checkpoint(&who, &version);
    let md = CheckpointMetadata::new(CheckpointSource::Loop, 0);
    match saver.put(&head.config, &cp, &md, &versions).await {
        Ok(_) => say(&format!("WON {} {}", cp.id, version.as_text())),
        Err(Error::Conflict(_)) => say(&format!("CONFLICT {} {}", cp.id, version.as_text())),
        Err(e) => say(&format!("ERROR {e}")),
    }
}

/// Writes a `RACER` line to the real stdout at once (the harness may capture `println!`).
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "RACER {line}").expect("racer stdout");
    out.flush().expect("racer flush");
}

/// A racer child process with its stdout read line by line.
struct Racer {
    child: std::process::Child,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl Racer {
    fn spawn(url: &str, thread: &str, who: &str) -> Racer {
        let mut child = Command::new(std::env::current_exe().expect("test binary"))
            .args([
                "fence::racer_process_entry",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(RACER_URL, url)
            .env(RACER_THREAD, thread)
            .env(RACER_NAME, who)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn a racer");
        let stdout = child.stdout.take().expect("racer stdout");
        Racer {
            child,
            lines: BufReader::new(stdout).lines(),
        }
    }

    /// The words after `RACER` on the next line that has it (the harness prints around
    /// them, even on the same line).
    fn next(&mut self) -> Vec<String> {
        for line in self.lines.by_ref() {
            let line = line.expect("racer output");
            if let Some(at) = line.find("RACER ") {
                return line[at + 6..].split(' ').map(str::to_owned).collect();
            }
        }
        panic!("the racer ended without a RACER line");
    }

    fn go(&mut self) {
        let stdin = self.child.stdin.as_mut().expect("racer stdin");
        stdin.write_all(b"GO\n").expect("send GO");
        stdin.flush().expect("flush GO");
    }
}

impl Drop for Racer {
    /// Ends the child if a failed assertion left it waiting (it is ours, by its id).
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn two_processes_racing_on_one_head_exactly_one_wins_every_time() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    for _ in 0..ROUNDS {
        let (thread, head) = start_thread(&db).await;
        let mut racers = [
            Racer::spawn(&db.url, &thread, "a"),
            Racer::spawn(&db.url, &thread, "b"),
        ];
        for racer in &mut racers {
            assert_eq!(racer.next(), ["LOADED", head.as_str()]);
        }
        for racer in &mut racers {
            racer.go();
        }
        let outcomes: Vec<Vec<String>> = racers.iter_mut().map(Racer::next).collect();
        for racer in &mut racers {
            assert!(racer.child.wait().expect("racer exit").success());
        }
        let won: Vec<usize> = (0..2).filter(|&i| outcomes[i][0] == "WON").collect();
        let lost: Vec<usize> = (0..2).filter(|&i| outcomes[i][0] == "CONFLICT").collect();
        assert_eq!(
            (won.len(), lost.len()),
            (1, 1),
            "one winner, one conflict: {outcomes:?}"
        );
        let who = ["a", "b"][won[0]];
        let (winner_id, loser_version) = (&outcomes[won[0]][1], &outcomes[lost[0]][2]);
        assert_winner_intact(&db, &thread, &head, (winner_id, who), loser_version).await;
    }
}

#[tokio::test]
async fn a_put_without_parent_on_a_thread_with_checkpoints_is_a_conflict() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let (thread, head) = start_thread(&db).await;
    let (cp, versions) = checkpoint("late", &db.get_next_version(None));
    let md = CheckpointMetadata::new(CheckpointSource::Input, -1);
    let err = db
        .put(
            &CheckpointConfig::thread(thread.as_str()),
            &cp,
            &md,
            &versions,
        )
        .await
        .expect_err("no parent on a non-empty thread");
    assert!(
        matches!(&err, Error::Conflict(m) if m.contains(&head)),
        "{err}"
    );
    // Another namespace of the same thread has no checkpoint yet: no conflict there.
    let child = CheckpointConfig::thread(thread.as_str()).with_ns("sub:1");
    db.put(&child, &cp, &md, &versions)
        .await
        .expect("a first put in a new namespace");
}

#[tokio::test]
async fn a_put_whose_parent_was_deleted_is_a_conflict() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let (thread, head) = start_thread(&db).await;
    db.delete_thread(&thread).await.expect("delete");
    let (cp, versions) = checkpoint("orphan", &db.get_next_version(None));
    let config = CheckpointConfig::for_checkpoint(thread.as_str(), "", head.as_str());
    let md = CheckpointMetadata::new(CheckpointSource::Loop, 0);
    let err = db
        .put(&config, &cp, &md, &versions)
        .await
        .expect_err("parent gone");
    assert!(matches!(err, Error::Conflict(_)), "{err}");
    assert!(db
        .get_tuple(&CheckpointConfig::thread(thread.as_str()))
        .await
        .unwrap()
        .is_none());
}

#[tokio::test]
async fn putting_the_same_checkpoint_again_passes_the_fence() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let (thread, head) = start_thread(&db).await;
    let parent = CheckpointConfig::for_checkpoint(thread.as_str(), "", head.as_str());
    let (mut cp, versions) = checkpoint("first", &db.get_next_version(None));
    let md = CheckpointMetadata::new(CheckpointSource::Loop, 0);
    db.put(&parent, &cp, &md, &versions).await.expect("child");
    // A retry of the same put (same id, same parent) replaces it although H is no longer
    // the head; the first checkpoint of a thread can be retried too.
    cp.channel_values
        .insert("who".into(), Value::from("retried"));
    db.put(&parent, &cp, &md, &versions).await.expect("retry");
    let (mut first, first_versions) = checkpoint("start", &db.get_next_version(None));
    first.id = head.clone();
    let start = CheckpointConfig::thread(thread.as_str());
    let md0 = CheckpointMetadata::new(CheckpointSource::Input, -1);
    db.put(&start, &first, &md0, &first_versions)
        .await
        .expect("retry of the first put");
    let got = db.get_tuple(&start).await.unwrap().expect("head");
    assert_eq!(got.checkpoint.id, cp.id);
    assert_eq!(
        got.checkpoint.channel_values.get("who"),
        Some(&Value::from("retried"))
    );
    // The same id with another parent is not a retry.
    let other = CheckpointConfig::for_checkpoint(thread.as_str(), "", "not-the-parent");
    let err = db
        .put(&other, &cp, &md, &versions)
        .await
        .expect_err("other parent");
    assert!(matches!(err, Error::Conflict(_)), "{err}");
}

#[tokio::test]
async fn an_unfenced_saver_stores_a_fork_the_fenced_one_refuses() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let (thread, head) = start_thread(&db).await;
    let parent = CheckpointConfig::for_checkpoint(thread.as_str(), "", head.as_str());
    let md = CheckpointMetadata::new(CheckpointSource::Loop, 0);
    let (a, va) = checkpoint("a", &db.get_next_version(None));
    db.put(&parent, &a, &md, &va).await.expect("first child");
    let (b, vb) = checkpoint("b", &db.get_next_version(None));
    let fork_md = CheckpointMetadata::new(CheckpointSource::Fork, 0);
    let err = db
        .put(&parent, &b, &fork_md, &vb)
        .await
        .expect_err("fenced fork");
    assert!(matches!(err, Error::Conflict(_)), "{err}");
    let unfenced = db.another_saver(false).await;
    assert!(!unfenced.fencing() && db.fencing());
    unfenced
        .put(&parent, &b, &fork_md, &vb)
        .await
        .expect("unfenced fork");
    let listed = db
        .list(
            Some(&CheckpointConfig::thread(thread.as_str())),
            &ListOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(listed.len(), 3);
}

/// Rounds of the two-process write race (each round a fresh thread).
const WRITE_ROUNDS: usize = 100;

/// The task both racers run on the head checkpoint: the same id in both processes, as
/// LangGraph derives task ids from the checkpoint and the node.
const RACED_TASK: &str = "0b6f1f5e-3c52-5d2b-9f62-7c1d2a4e9b10";

/// The environment variable that switches this test binary into a write racer.
const WRITER_URL: &str = "STATEGRAPH_PG_WRITER_URL";

/// Not a test of its own: the entry point of the child processes of
/// `two_processes_resuming_one_checkpoint_store_only_the_winners_task_writes`, which run
/// this binary with `STATEGRAPH_PG_WRITER_URL` set. For each line `ROUND <thread> <who>`
/// on stdin it loads the head `H` of the thread, prints `RACER LOADED <H>`, waits for
/// `GO`, then does what a resumed run does: stores its task's write against `H`, then
/// puts a child of `H`. It prints `RACER WON <child id>`, or `RACER CONFLICT <step>` for
/// the first step refused with `Error::Conflict`, or `RACER ERROR <text>`. Without the
/// variable it returns at once.
#[tokio::test]
async fn write_racer_process_entry() {
    let Ok(url) = std::env::var(WRITER_URL) else {
        return;
    };
    let saver = PostgresSaver::connect(&url).await.expect("racer connect");
    let mut line = String::new();
    loop {
        line.clear();
        if std::io::stdin().read_line(&mut line).expect("racer stdin") == 0 {
            return;
        }
        let words: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        let [_, thread, who] = &words[..] else {
            return;
        };
        let (thread, who) = (thread.as_str(), who.as_str());
        let head = saver
            .get_tuple(&CheckpointConfig::thread(thread))
            .await
            .expect("racer load")
            .expect("racer head");
        say(&format!("LOADED {}", head.checkpoint.id));
        line.clear();
        std::io::stdin().read_line(&mut line).expect("racer stdin");
        assert_eq!(line.trim(), "GO");
        let outcome = resume_once(&saver, &head.config, &head.checkpoint, who).await;
        say(&outcome);
    }
}

/// One resumed step: the task's write against the loaded head, then the child.
async fn resume_once(
    saver: &PostgresSaver,
    head_config: &CheckpointConfig,
    head: &Checkpoint,
    who: &str,
) -> String {
    let writes = [("who".to_owned(), Value::from(who))];
    match saver
        .put_writes(head_config, &writes, RACED_TASK, "~__pregel_pull, node")
        .await
    {
        Ok(()) => {}
        Err(Error::Conflict(_)) => return "CONFLICT writes".to_owned(),
        Err(e) => return format!("ERROR {e}"),
    }
    let version = saver.get_next_version(head.channel_versions.get("who"));
    let (cp, versions) = checkpoint(who, &version);
    let md = CheckpointMetadata::new(CheckpointSource::Loop, 0);
    match saver.put(head_config, &cp, &md, &versions).await {
        Ok(_) => format!("WON {}", cp.id),
        Err(Error::Conflict(_)) => "CONFLICT put".to_owned(),
        Err(e) => format!("ERROR {e}"),
    }
}

/// A write racer child process, serving many rounds.
fn spawn_writer(url: &str) -> Racer {
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "fence::write_racer_process_entry",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(WRITER_URL, url)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn a write racer");
    let stdout = child.stdout.take().expect("racer stdout");
    Racer {
        child,
        lines: BufReader::new(stdout).lines(),
    }
}

impl Racer {
    fn send(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().expect("racer stdin");
        writeln!(stdin, "{line}").expect("send to the racer");
        stdin.flush().expect("flush");
    }
}

/// The task writes stored against `checkpoint`: `(task, channel, value)`.
async fn stored_writes(db: &TestDb, thread: &str, checkpoint: &str) -> Vec<(String, Value)> {
    let tuple = db
        .get_tuple(&CheckpointConfig::for_checkpoint(thread, "", checkpoint))
        .await
        .expect("get")
        .expect("the head");
    tuple
        .pending_writes
        .into_iter()
        .map(|w| (w.task_id, w.value))
        .collect()
}

/// Hole 3 of issue 9: two processes resume the same checkpoint `H` and run the same task.
/// Exactly one gets through both its task write and its child checkpoint; the other is
/// refused (at whichever step it reaches second) and stores nothing of that step, so the
/// write stored for the task against `H` is the winner's.
#[tokio::test]
async fn two_processes_resuming_one_checkpoint_store_only_the_winners_task_writes() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let mut racers = [spawn_writer(&db.url), spawn_writer(&db.url)];
    let names = ["a", "b"];
    for round in 0..WRITE_ROUNDS {
        let (thread, head) = start_thread(&db).await;
        for (racer, who) in racers.iter_mut().zip(names) {
            racer.send(&format!("ROUND {thread} {who}"));
        }
        for racer in &mut racers {
            assert_eq!(racer.next(), ["LOADED", head.as_str()]);
        }
        for racer in &mut racers {
            racer.send("GO");
        }
        let outcomes: Vec<Vec<String>> = racers.iter_mut().map(Racer::next).collect();
        let won: Vec<usize> = (0..2).filter(|&i| outcomes[i][0] == "WON").collect();
        let lost: Vec<usize> = (0..2).filter(|&i| outcomes[i][0] == "CONFLICT").collect();
        assert_eq!(
            (won.len(), lost.len()),
            (1, 1),
            "round {round}: one winner, one conflict: {outcomes:?}"
        );
        let who = names[won[0]];
        let winner_id = &outcomes[won[0]][1];
        let tip = db
            .get_tuple(&CheckpointConfig::thread(thread.as_str()))
            .await
            .expect("get")
            .expect("a head");
        assert_eq!(&tip.checkpoint.id, winner_id, "round {round}");
        assert_eq!(
            stored_writes(&db, &thread, &head).await,
            [(RACED_TASK.to_owned(), Value::from(who))],
            "round {round}: the task's stored write is the winner's ({outcomes:?})"
        );
    }
}

#[tokio::test]
async fn a_task_write_against_a_checkpoint_with_a_child_is_a_conflict_unless_it_branches() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let (thread, head) = start_thread(&db).await;
    let at_head = CheckpointConfig::for_checkpoint(thread.as_str(), "", head.as_str());
    let w = |v: &str| [("who".to_owned(), Value::from(v))];
    db.put_writes(&at_head, &w("first"), "t1", "")
        .await
        .expect("a write on the head");
    // Repeating the same write is idempotent, a different one for the same task is not.
    db.put_writes(&at_head, &w("first"), "t1", "")
        .await
        .expect("an identical repeat");
    let err = db
        .put_writes(&at_head, &w("second"), "t1", "")
        .await
        .expect_err("a different write of the same task");
    assert!(
        matches!(&err, Error::Conflict(m) if m.contains("index 0")),
        "{err}"
    );
    // Reserved indexes keep "last wins".
    db.put_writes(
        &at_head,
        &w("x").map(|(_, v)| ("__error__".to_owned(), v)),
        "t1",
        "",
    )
    .await
    .expect("a reserved write");
    db.put_writes(
        &at_head,
        &w("y").map(|(_, v)| ("__error__".to_owned(), v)),
        "t1",
        "",
    )
    .await
    .expect("a reserved write again");
    let (cp, versions) = checkpoint("next", &db.get_next_version(None));
    let md = CheckpointMetadata::new(CheckpointSource::Loop, 0);
    db.put(&at_head, &cp, &md, &versions).await.expect("child");
    let err = db
        .put_writes(&at_head, &w("late"), "t2", "")
        .await
        .expect_err("a write after the thread moved on");
    assert!(
        matches!(&err, Error::Conflict(m) if m.contains(&cp.id)),
        "{err}"
    );
    // Nothing of the refused calls was stored.
    let mut stored = stored_writes(&db, &thread, &head).await;
    stored.sort_by_key(|w| format!("{w:?}"));
    assert_eq!(
        stored,
        [
            ("t1".to_owned(), Value::from("first")),
            ("t1".to_owned(), Value::from("y")),
        ],
        "the refused calls stored nothing"
    );
    // A deliberate branch is admitted, and an unfenced saver stores as Python does.
    let branch = at_head
        .clone()
        .with_configurable(stategraph_checkpoint::CONFIG_KEY_BRANCH, true);
    db.put_writes(&branch, &w("branch"), "t3", "")
        .await
        .expect("a branching write");
    let unfenced = db.another_saver(false).await;
    unfenced
        .put_writes(&at_head, &w("python"), "t4", "")
        .await
        .expect("an unfenced write");
}
