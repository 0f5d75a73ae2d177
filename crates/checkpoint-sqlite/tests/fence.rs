//! The fence on SQLite: two processes racing on one thread, 100 rounds.
//!
//! A round is one step of a run, played by two processes on the same file: each loads the
//! head `H` of a fresh thread, both wait until the other has loaded it, then each stores
//! its task's result against `H` (the same task id, as two runs of one graph compute it)
//! and puts a child of `H`. In half the rounds the two results differ (a node that is
//! not deterministic: the write decides the race), in the other half they are equal (the
//! writes are idempotent and the put decides); who is told to go first alternates. Exactly one must succeed; the other must fail with
//! `Error::Conflict` at one of its two calls, and the file must then hold `H` and the
//! winner's child only, with the winner's values, and the winner's task write on `H`:
//! no fork, nothing of the loser that contradicts the winner.
//!
//! The two racers are this test binary run again as child processes (the
//! `racer_process_entry` test, switched on by an environment variable), each driven
//! line by line over stdin/stdout, so both keep one saver open for all rounds.

#[path = "suite/support.rs"]
#[allow(dead_code)]
mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdout, Command, Stdio};

use stategraph_checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
    CheckpointSource, Error, ListOptions, Value,
};
use stategraph_checkpoint_sqlite::SqliteSaver;
use support::TempPath;

const ROUNDS: usize = 100;

/// The task id both racers use for their step (a run derives it from the checkpoint).
const TASK: &str = "00000000-0000-0000-0000-00000000cafe";

/// The environment variable that turns this binary into a racer on the named file.
const RACER_DB: &str = "STATEGRAPH_SQLITE_RACER_DB";

/// A checkpoint holding `who`, with a fresh id.
fn checkpoint(who: &str, version: &stategraph_checkpoint::ChannelVersion) -> Checkpoint {
    let id = stategraph_checkpoint::id::IdGenerator::system().uuid6(0);
    let mut cp = Checkpoint::empty(id, "2025-01-01T00:00:00+00:00");
    cp.channel_values.insert("who".into(), Value::from(who));
    cp.channel_versions.insert("who".into(), version.clone());
    cp
}

/// One racer's step from `head`: the task's write (`result`) against it, then its
/// child. Returns the child's id and the outcome (`Err` at the first refused call).
async fn step(
    saver: &SqliteSaver,
    head: &CheckpointConfig,
    who: &str,
    result: &str,
) -> (String, Result<(), Error>) {
    let version = saver.get_next_version(None);
    let cp = checkpoint(who, &version);
    let id = cp.id.clone();
    let writes = [("who".to_owned(), Value::from(result))];
    if let Err(e) = saver
        .put_writes(head, &writes, TASK, "~__pregel_pull, step")
        .await
    {
        return (id, Err(e));
    }
    let md = CheckpointMetadata::new(CheckpointSource::Loop, 0);
    let versions: ChannelVersions = cp.channel_versions.clone();
    let result = saver.put(head, &cp, &md, &versions).await.map(|_| ());
    (id, result)
}

/// Not a test of its own: the entry point of the racer processes, which run this binary
/// with [`RACER_DB`] set. Commands on stdin: `LOAD <thread>` loads the head and answers
/// `LOADED <id>`; `GO <who> <result>` takes the step and answers `WON <child>` or
/// `CONFLICT <child>` (or `ERROR <text>`); end of input ends it.
#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn racer_process_entry() {
    let Ok(path) = std::env::var(RACER_DB) else {
        return;
    };
    let saver = SqliteSaver::open(&path).expect("racer open");
    let mut head = None;
    for line in std::io::stdin().lines() {
        let line = line.expect("racer stdin");
        let (command, arg) = line.split_once(' ').unwrap_or((line.as_str(), ""));
        match command {
            "LOAD" => {
                let tuple = saver
                    .get_tuple(&CheckpointConfig::thread(arg))
                    .await
                    .expect("racer load")
                    .expect("racer head");
                say(&format!("LOADED {}", tuple.checkpoint.id));
                head = Some(tuple.config);
            }
            "GO" => {
                let config = head.take().expect("LOAD before GO");
                let (who, result) = arg.split_once(' ').expect("GO who result");
                match step(&saver, &config, who, result).await {
                    (id, Ok(())) => say(&format!("WON {id}")),
                    (id, Err(Error::Conflict(_))) => say(&format!("CONFLICT {id}")),
                    (_, Err(e)) => say(&format!("ERROR {e}")),
                }
            }
            _ => panic!("unknown racer command {line:?}"),
        }
    }
}

/// Writes a `RACER` line to the real stdout at once (the harness may capture `println!`).
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "RACER {line}").expect("racer stdout");
    out.flush().expect("racer flush");
}

/// A racer child process.
struct Racer {
    child: Child,
    lines: std::io::Lines<BufReader<ChildStdout>>,
}

impl Racer {
    fn spawn(db: &std::path::Path) -> Racer {
        let mut child = Command::new(std::env::current_exe().expect("test binary"))
            .args([
                "racer_process_entry",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(RACER_DB, db)
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

    fn send(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().expect("racer stdin");
        writeln!(stdin, "{line}").expect("send to racer");
        stdin.flush().expect("flush");
    }

    /// The words after `RACER` on the next line that has it.
    fn next(&mut self) -> Vec<String> {
        for line in self.lines.by_ref() {
            let line = line.expect("racer output");
            if let Some(at) = line.find("RACER ") {
                return line[at + 6..].split(' ').map(str::to_owned).collect();
            }
        }
        panic!("the racer ended without a RACER line");
    }
}

impl Drop for Racer {
    /// Closes its stdin (it then ends) and reaps it; kills it, by its own handle, if a
    /// failed assertion left it waiting.
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        if !matches!(self.child.wait(), Ok(status) if status.success()) {
            let _ = self.child.kill();
        }
    }
}

/// Asserts the thread holds `head` and the winner's child only, with the winner's
/// values, and exactly the winner's task write (`result`) on `head`.
async fn assert_winner_intact(
    saver: &SqliteSaver,
    thread: &str,
    head: &str,
    (winner_id, who, result): (&str, &str, &str),
    loser_id: &str,
) {
    let listed = saver
        .list(
            Some(&CheckpointConfig::thread(thread)),
            &ListOptions::default(),
        )
        .await
        .expect("list");
    let ids: Vec<&str> = listed.iter().map(|t| t.checkpoint.id.as_str()).collect();
    assert_eq!(
        ids,
        [winner_id, head],
        "no fork, no checkpoint of the loser"
    );
    assert_ne!(winner_id, loser_id);
    let top = &listed[0];
    assert_eq!(
        top.checkpoint.channel_values.get("who"),
        Some(&Value::from(who))
    );
    let writes: Vec<(&str, &str, &Value)> = listed[1]
        .pending_writes
        .iter()
        .map(|w| (w.task_id.as_str(), w.channel.as_str(), &w.value))
        .collect();
    let want = Value::from(result);
    assert_eq!(
        writes,
        [(TASK, "who", &want)],
        "{thread}: the task write is the winner's"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_racing_on_one_thread_exactly_one_wins_every_round() {
    let file = TempPath::new("race");
    let saver = SqliteSaver::open(file.path()).expect("open");
    let mut racers = [Racer::spawn(file.path()), Racer::spawn(file.path())];
    let mut wins = [0usize; 2];
    for round in 0..ROUNDS {
        let thread = format!("race-{round}");
        let first = checkpoint("start", &saver.get_next_version(None));
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
            .expect("the first checkpoint of the thread");
        for racer in &mut racers {
            racer.send(&format!("LOAD {thread}"));
        }
        for racer in &mut racers {
            assert_eq!(racer.next(), ["LOADED", first.id.as_str()]);
        }
        // Alternate who is told first, so both orders of arrival are played.
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        let results = if round % 4 < 2 {
            ["a", "b"]
        } else {
            ["same", "same"]
        };
        for i in order {
            racers[i].send(&format!("GO {} {}", ["a", "b"][i], results[i]));
        }
        let outcomes: Vec<Vec<String>> = racers.iter_mut().map(Racer::next).collect();
        let won: Vec<usize> = (0..2).filter(|&i| outcomes[i][0] == "WON").collect();
        let lost: Vec<usize> = (0..2).filter(|&i| outcomes[i][0] == "CONFLICT").collect();
        assert_eq!(
            (won.len(), lost.len()),
            (1, 1),
            "round {round}: one winner, one conflict: {outcomes:?}"
        );
        wins[won[0]] += 1;
        let who = ["a", "b"][won[0]];
        let (winner_id, loser_id) = (&outcomes[won[0]][1], &outcomes[lost[0]][1]);
        let winner = (winner_id.as_str(), who, results[won[0]]);
        assert_winner_intact(&saver, &thread, &first.id, winner, loser_id).await;
    }
    println!("wins: a {}, b {}", wins[0], wins[1]);
}
