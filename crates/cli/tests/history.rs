//! `history` for people: each checkpoint's writes named by their task (from the task path
//! stored with them), and in a forked thread the line to the latest checkpoint (the head)
//! kept as the trunk, marked `← head`.

use stategraph_checkpoint::{
    ChannelVersion, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
    CheckpointSource, Value,
};
use stategraph_checkpoint_sqlite::SqliteSaver;

use crate::support::{cli, temp_dir};

fn id(n: usize) -> String {
    format!("1ef00000-0000-6000-8000-{n:012}")
}

const START_TASK: &str = "5a5a5a5a-0000-0000-0000-000000000001";
const PULL_TASK: &str = "c5e27a3e-0000-0000-0000-000000000002";
const PUSH_TASK: &str = "d00d0000-0000-0000-0000-000000000003";
const PATHLESS_TASK: &str = "7e577e57-0000-0000-0000-000000000004";
const NULL_TASK: &str = "00000000-0000-0000-0000-000000000000";

/// Thread `t`: the input checkpoint 0 (written by `__start__`), checkpoint 1 with two
/// pending Sends to `worker` and writes of a pull task, a push task, the client (null
/// task) and a task stored without a path; the original run goes on to 2 and 3; an
/// update forks from 1 as checkpoint 4, the newest: the head.
fn write_db(path: &std::path::Path) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let saver = SqliteSaver::open(path).expect("open").with_fencing(false);
        let put =
            |n: usize, parent: Option<usize>, step: i64, source, values: Vec<(&str, Value)>| {
                let mut cp = Checkpoint::empty(id(n), format!("2026-01-01T00:00:{n:02}+00:00"));
                for (k, v) in values {
                    cp.channel_values.insert(k.into(), v);
                    cp.channel_versions
                        .insert(k.into(), ChannelVersion::Int(n as i64 + 1));
                }
                let mut config = CheckpointConfig::thread("t");
                if let Some(p) = parent {
                    config = config.with_checkpoint_id(id(p));
                }
                let versions = cp.channel_versions.clone();
                let saver = &saver;
                async move {
                    saver
                        .put(
                            &config,
                            &cp,
                            &CheckpointMetadata::new(source, step),
                            &versions,
                        )
                        .await
                        .expect("put");
                }
            };
        let writes = |n: usize, task: &'static str, task_path: &'static str, count: usize| {
            let saver = &saver;
            async move {
                let values: Vec<(String, Value)> = (0..count)
                    .map(|i| (format!("ch{i}"), Value::Int(i as i64)))
                    .collect();
                saver
                    .put_writes(
                        &CheckpointConfig::for_checkpoint("t", "", id(n).as_str()),
                        &values,
                        task,
                        task_path,
                    )
                    .await
                    .expect("put_writes");
            }
        };
        put(
            0,
            None,
            -1,
            CheckpointSource::Input,
            vec![("count", Value::Int(0))],
        )
        .await;
        writes(0, START_TASK, "~__pregel_pull, __start__", 2).await;
        let sends = Value::from(vec![
            Value::send("worker", Value::Int(1)),
            Value::send("worker", Value::Int(2)),
        ]);
        put(
            1,
            Some(0),
            0,
            CheckpointSource::Loop,
            vec![("__pregel_tasks", sends)],
        )
        .await;
        writes(1, PULL_TASK, "~__pregel_pull, get_address", 2).await;
        writes(1, PUSH_TASK, "~__pregel_push, 0000000001, 0000000000", 1).await;
        writes(1, NULL_TASK, "", 1).await;
        writes(1, PATHLESS_TASK, "", 1).await;
        put(
            2,
            Some(1),
            1,
            CheckpointSource::Loop,
            vec![("count", Value::Int(1))],
        )
        .await;
        put(
            3,
            Some(2),
            2,
            CheckpointSource::Loop,
            vec![("count", Value::Int(2))],
        )
        .await;
        put(
            4,
            Some(1),
            1,
            CheckpointSource::Update,
            vec![("count", Value::Int(9))],
        )
        .await;
    });
}

#[test]
fn history_names_tasks_and_keeps_the_head_on_the_trunk() {
    let dir = temp_dir("history-trunk");
    let path = dir.join("t.db");
    write_db(&path);
    let run = cli(&["history", path.to_str().expect("utf-8"), "t"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let want = format!(
        "\
● {}  step -1  input  writes: __start__ (2)
● {}  step 0  loop  next: worker, worker  writes: input (1), task 7e577e57… (1), get_address (2), worker (1)
├─╮ fork
│ ● {}  step 1  loop
│ ● {}  step 2  loop
● {}  step 1  update  ← head
",
        id(0),
        id(1),
        id(2),
        id(3),
        id(4)
    );
    assert_eq!(run.stdout, want);

    // Older than the head: the newest shown continues the trunk but is not the head.
    let run = cli(&[
        "history",
        "--before",
        &id(4),
        path.to_str().expect("utf-8"),
        "t",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stdout.contains("head"), "{}", run.stdout);
    assert!(
        run.stdout
            .ends_with(&format!("● {}  step 2  loop\n", id(3))),
        "{}",
        run.stdout
    );
    let _ = std::fs::remove_dir_all(dir);
}
