//! A database written by stategraph's SqliteSaver with fixed ids and times: human output
//! under insta snapshots, the quadratic-growth warning, and the maintenance commands.

use std::path::{Path, PathBuf};

use stategraph_checkpoint::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointSaver, CheckpointSource, Value,
};
use stategraph_checkpoint_sqlite::SqliteSaver;

use crate::support::{cli, temp_dir};

fn id(n: usize) -> String {
    format!("1ef00000-0000-6000-8000-{n:012}")
}

/// Thread `notes`: 12 checkpoints, each appending a note to the `notes` list (so each
/// checkpoint stores one more note: quadratic growth), a fork from checkpoint 3, and
/// pending writes on the latest. Thread `other`: one checkpoint.
pub(crate) fn write_db(path: &Path) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        // Unfenced: the fixture stores a fork without marking it as a branch.
        let saver = SqliteSaver::open(path).expect("open").with_fencing(false);
        let mut notes: Vec<Value> = Vec::new();
        let mut parent: Option<String> = None;
        for n in 0..12 {
            notes.push(Value::from(format!("note {n}: {}", "x".repeat(200))));
            let mut cp = Checkpoint::empty(id(n), format!("2026-01-01T00:00:{n:02}+00:00"));
            cp.channel_values
                .insert("notes".into(), Value::from(notes.clone()));
            cp.channel_values
                .insert("count".into(), Value::Int(n as i64));
            let v = ChannelVersion::Int(n as i64 + 1);
            cp.channel_versions.insert("notes".into(), v.clone());
            cp.channel_versions.insert("count".into(), v);
            let mut config = CheckpointConfig::thread("notes");
            if let Some(p) = &parent {
                config = config.with_checkpoint_id(p.as_str());
            }
            let metadata = CheckpointMetadata::new(CheckpointSource::Loop, n as i64);
            saver
                .put(&config, &cp, &metadata, &cp.channel_versions.clone())
                .await
                .expect("put");
            parent = Some(id(n));
        }
        // A fork: an update on checkpoint 3.
        let mut fork = Checkpoint::empty(id(100), "2026-01-01T00:01:00+00:00");
        fork.channel_values.insert("count".into(), Value::Int(-1));
        fork.channel_values
            .insert("notes".into(), Value::from(Vec::<Value>::new()));
        let versions: ChannelVersions = [
            ("count".to_owned(), ChannelVersion::Int(50)),
            ("notes".to_owned(), ChannelVersion::Int(50)),
        ]
        .into_iter()
        .collect();
        fork.channel_versions = versions.clone();
        saver
            .put(
                &CheckpointConfig::thread("notes").with_checkpoint_id(id(3)),
                &fork,
                &CheckpointMetadata::new(CheckpointSource::Update, 4),
                &versions,
            )
            .await
            .expect("put fork");
        saver
            .put_writes(
                &CheckpointConfig::for_checkpoint("notes", "", id(11).as_str()),
                &[("count".to_owned(), Value::Int(12))],
                "00000000-0000-0000-0000-00000000000a",
                "",
            )
            .await
            .expect("put_writes");
        let mut one = Checkpoint::empty(id(200), "2026-01-02T00:00:00+00:00");
        one.channel_values.insert("count".into(), Value::Int(7));
        one.channel_versions
            .insert("count".into(), ChannelVersion::Int(1));
        saver
            .put(
                &CheckpointConfig::thread("other"),
                &one,
                &CheckpointMetadata::new(CheckpointSource::Input, -1),
                &one.channel_versions.clone(),
            )
            .await
            .expect("put other");
    });
}

fn db(name: &str) -> (PathBuf, PathBuf, String) {
    let dir = temp_dir(name);
    let path = dir.join("stategraph.db");
    write_db(&path);
    let s = path.to_str().expect("utf-8").to_owned();
    (dir, path, s)
}

/// Replaces the temporary path in output with `DB`.
fn clean(text: &str, db: &str) -> String {
    text.replace(db, "DB")
}

#[test]
fn human_output_of_the_read_commands() {
    let (dir, _, db) = db("human");
    let run = |args: &[&str]| {
        let r = cli(args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        clean(&r.stdout, &db)
    };
    insta::assert_snapshot!("threads", run(&["threads", &db]));
    insta::assert_snapshot!("history", run(&["history", &db, "notes"]));
    insta::assert_snapshot!(
        "history_limit",
        run(&["history", "--limit", "2", &db, "notes"])
    );
    insta::assert_snapshot!("show", run(&["show", &db, "notes", &id(2)]));
    insta::assert_snapshot!(
        "show_channel",
        run(&["show", "--channel", "count", &db, "notes"])
    );
    insta::assert_snapshot!("diff", run(&["diff", &db, "notes", &id(9), &id(11)]));
    insta::assert_snapshot!("stats", run(&["stats", &db, "notes"]));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn history_pages_before_and_limit_like_list() {
    let (dir, _, db) = db("pages");
    let all = cli(&["history", "--json", &db, "notes"]).json();
    let ids: Vec<&str> = all
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["config"]["checkpoint_id"].as_str())
        .collect();
    let mut want: Vec<String> = (0..12).map(id).collect();
    want.push(id(100));
    want.reverse();
    assert_eq!(ids, want, "newest first, the fork included");
    let some = cli(&[
        "history",
        "--json",
        "--before",
        &id(5),
        "--limit",
        "3",
        &db,
        "notes",
    ])
    .json();
    let ids: Vec<&str> = some
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["config"]["checkpoint_id"].as_str())
        .collect();
    assert_eq!(ids, [id(4), id(3), id(2)]);
    let _ = std::fs::remove_dir_all(dir);
}

/// Thread `thread` of `path`: `n` checkpoints in a line, each storing the whole list
/// `items` again with one more item of about `len` bytes (LangChain messages when
/// `messages`).
fn write_growing(path: &Path, thread: &str, n: usize, len: usize, messages: bool) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let saver = SqliteSaver::open(path).expect("open");
        let mut items: Vec<Value> = Vec::new();
        let mut config = CheckpointConfig::thread(thread);
        for i in 0..n {
            let text = format!("item {i}: {}", "y".repeat(len));
            items.push(if messages {
                let mut f = stategraph_checkpoint::Map::new();
                f.insert("content", text.as_str());
                f.insert("id", format!("m{i}").as_str());
                Value::message("HumanMessage", f).expect("a message class")
            } else {
                Value::from(text)
            });
            let mut cp = Checkpoint::empty(id(i), format!("2026-01-01T00:{:02}:00+00:00", i % 60));
            cp.channel_values
                .insert("items".into(), Value::from(items.clone()));
            cp.channel_versions
                .insert("items".into(), ChannelVersion::Int(i as i64 + 1));
            let metadata = CheckpointMetadata::new(CheckpointSource::Loop, i as i64);
            config = saver
                .put(&config, &cp, &metadata, &cp.channel_versions.clone())
                .await
                .expect("put");
        }
    });
}

#[test]
fn stats_warns_about_quadratic_growth_only_past_a_size_that_matters() {
    let (dir, _, db) = db("stats");
    // 13 checkpoints, 19 KiB: growing quadratically, but too small to matter.
    let stats = cli(&["stats", "--json", &db, "notes"]).json();
    let t = &stats[0];
    assert_eq!(t["growth"]["quadratic"], true);
    assert!(t["bytes"].as_u64().is_some_and(|b| b < 64 * 1024), "{t}");
    assert!(t["warning"].is_null(), "{}", t["warning"]);
    assert_eq!(t["channels"][0]["channel"], "notes");
    let other = cli(&["stats", "--json", &db, "other"]).json();
    assert_eq!(other[0]["growth"]["quadratic"], false);
    assert!(other[0]["warning"].is_null());

    // Past 1 MiB the warning names the remedy for what the list holds.
    let big = dir.join("big.db");
    write_growing(&big, "chat", 40, 2000, true);
    write_growing(&big, "log", 40, 2000, false);
    let big = big.to_str().expect("utf-8");
    let stats = cli(&["stats", "--json", big]).json();
    let warning_of = |thread: &str| -> String {
        let t = stats
            .as_array()
            .and_then(|a| a.iter().find(|t| t["thread_id"] == thread))
            .unwrap_or_else(|| panic!("thread {thread}"));
        assert!(t["bytes"].as_u64().is_some_and(|b| b > 1024 * 1024), "{t}");
        t["warning"].as_str().expect("a warning").to_owned()
    };
    let chat = warning_of("chat");
    for needle in [
        "`items`",
        "stategraph::prebuilt::DeltaMessagesState",
        "reducer = add_messages",
        "DeltaChannel(_messages_delta_reducer",
        "prune",
    ] {
        assert!(chat.contains(needle), "{needle}: {chat}");
    }
    let log = warning_of("log");
    assert!(log.contains("reducer = add,"), "{log}");
    assert!(!log.contains("MessagesState"), "{log}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn threads_and_stats_report_one_size() {
    let (dir, _, db) = db("sizes");
    let threads = cli(&["threads", "--json", &db]).json();
    let stats = cli(&["stats", "--json", &db]).json();
    let size = |v: &serde_json::Value, thread: &str| {
        v.as_array()
            .and_then(|a| a.iter().find(|t| t["thread_id"] == thread))
            .map(|t| t["bytes"].clone())
            .unwrap_or_else(|| panic!("thread {thread} in {v}"))
    };
    // `notes` has pending writes: both count them.
    for thread in ["notes", "other"] {
        assert_eq!(size(&threads, thread), size(&stats, thread), "{thread}");
    }
    for command in ["threads", "stats"] {
        let help = cli(&[command, "--help"]);
        assert!(
            help.stdout.contains("every namespace") && help.stdout.contains("pending writes"),
            "{command} --help states the size: {}",
            help.stdout
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn maintenance_commands_with_and_without_dry_run() {
    let (dir, path, db) = db("maintain");
    let before = std::fs::read(&path).expect("read");
    for args in [
        vec!["prune", "--dry-run", "--keep-latest", &db, "notes"],
        vec!["delete-thread", "--dry-run", &db, "notes"],
        vec!["copy-thread", "--dry-run", &db, "notes", "notes-2"],
    ] {
        let r = cli(&args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert!(r.stdout.contains("would"), "{}", r.stdout);
    }
    assert_eq!(
        std::fs::read(&path).expect("read"),
        before,
        "dry runs change nothing"
    );

    let r = cli(&["copy-thread", &db, "notes", "notes-2"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let refused = cli(&["copy-thread", &db, "notes", "notes-2"]);
    assert_ne!(refused.code, 0);
    assert!(
        refused.stderr.contains("already exists"),
        "{}",
        refused.stderr
    );

    let r = cli(&["prune", "--json", "--keep-latest", &db, "notes"]).json();
    assert_eq!(r["threads"][0]["removed"], 12);
    let history = cli(&["history", "--json", &db, "notes"]).json();
    assert_eq!(history.as_array().map(Vec::len), Some(1));

    let r = cli(&["delete-thread", &db, "notes-2"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let threads = cli(&["threads", "--json", &db]).json();
    let names: Vec<&str> = threads
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["thread_id"].as_str())
        .collect();
    assert_eq!(names, ["notes", "other"]);
    let _ = std::fs::remove_dir_all(dir);
}
