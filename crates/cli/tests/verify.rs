//! `verify`: objects outside LangGraph's safe types are warnings (errors with `--strict`,
//! accepted with `--allow module.Class`); a damaged SQLite file is an error that names
//! the file, the table and the remedy.

use std::path::Path;

use stategraph_checkpoint::{
    ChannelVersion, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
    CheckpointSource, ObjectCode, Value,
};
use stategraph_checkpoint_sqlite::rusqlite::Connection;
use stategraph_checkpoint_sqlite::SqliteSaver;

use crate::stategraph_db::write_db;
use crate::support::{cli, temp_dir};

/// One checkpoint whose `point` channel holds a `__main__.Point` dataclass (as Python
/// stores one: a keyword-arguments constructor record) and whose `when` holds a datetime
/// method call of the safe kind.
fn write_dataclass_db(path: &Path) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let saver = SqliteSaver::open(path).expect("open");
        let mut kw = stategraph_checkpoint::Map::new();
        kw.insert("x", Value::Int(1));
        kw.insert("y", Value::Int(2));
        let point = Value::object(
            ObjectCode::ConstructorKwArgs,
            "__main__",
            "Point",
            Value::Map(kw),
            None,
        );
        let mut cp = Checkpoint::empty(
            "1ef00000-0000-6000-8000-000000000000",
            "2026-01-01T00:00:00+00:00",
        );
        cp.channel_values.insert("point".into(), point.clone());
        cp.channel_values
            .insert("points".into(), Value::from(vec![point.clone(), point]));
        cp.channel_versions
            .insert("point".into(), ChannelVersion::Int(1));
        cp.channel_versions
            .insert("points".into(), ChannelVersion::Int(1));
        let versions = cp.channel_versions.clone();
        saver
            .put(
                &CheckpointConfig::thread("t"),
                &cp,
                &CheckpointMetadata::new(CheckpointSource::Input, -1),
                &versions,
            )
            .await
            .expect("put");
    });
}

#[test]
fn objects_outside_the_safe_types_warn_unless_strict() {
    let dir = temp_dir("verify-warn");
    let path = dir.join("dataclass.db");
    write_dataclass_db(&path);
    let db = path.to_str().expect("utf-8");

    let r = cli(&["verify", db]);
    assert_eq!(r.code, 0, "warnings only: {}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains(
            "warning: __main__.Point is outside LangGraph's safe types: 3 objects in 1 row"
        ),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("--allow __main__.Point"), "{}", r.stdout);
    let report = cli(&["verify", "--json", db]).json();
    assert_eq!(report["ok"], true);
    assert_eq!(report["errors"], 0);
    assert_eq!(report["warnings"], 3);
    assert!(report["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .all(|p| p["level"] == "warning"));

    let r = cli(&["verify", "--strict", "--json", db]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    let strict: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(strict["errors"], 3);
    assert_eq!(strict["problems"][0]["level"], "error");
    assert_eq!(strict["problems"][0]["path"], "$.channel_values.point");

    let allowed = cli(&["verify", "--json", "--allow", "__main__.Point", db]).json();
    assert_eq!(allowed["warnings"], 0, "{allowed}");
    assert_eq!(allowed["problems"], serde_json::json!([]));
    let r = cli(&["verify", "--strict", "--allow", "__main__.Point", db]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stdout.contains("hold only LangGraph's safe types"),
        "{}",
        r.stdout
    );

    // Another class is still reported; a name without a module is a usage error.
    let other = cli(&["verify", "--json", "--allow", "__main__.Line", db]).json();
    assert_eq!(other["warnings"], 3);
    let r = cli(&["verify", "--allow", "Point", db]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("module.Class"), "{}", r.stderr);
    let _ = std::fs::remove_dir_all(dir);
}

/// Overwrites page `page` (1-based) of the SQLite file at `path` with garbage (page 1
/// after the file header, so that the file is still a SQLite file).
fn overwrite_page(path: &Path, page: i64) {
    let conn = Connection::open(path).expect("open");
    let size: i64 = conn
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .expect("page size");
    drop(conn);
    let mut bytes = std::fs::read(path).expect("read");
    let header = if page == 1 { 100 } else { 0 };
    let start = usize::try_from((page - 1) * size).expect("offset") + header;
    let end = start - header + usize::try_from(size).expect("size");
    assert!(end <= bytes.len(), "page {page} is in the file");
    bytes[start..end].fill(0xab);
    std::fs::write(path, bytes).expect("write");
}

/// The root page of a table or index.
fn root_page(path: &Path, name: &str) -> i64 {
    let conn = Connection::open(path).expect("open");
    conn.query_row(
        "SELECT rootpage FROM sqlite_master WHERE name = ?1",
        [name],
        |r| r.get(0),
    )
    .expect("rootpage")
}

#[test]
fn a_damaged_file_names_the_path_the_table_and_the_remedy() {
    let dir = temp_dir("verify-damaged");
    let path = dir.join("damaged.db");
    write_db(&path);
    let page = root_page(&path, "writes");
    overwrite_page(&path, page);
    let db = path.to_str().expect("utf-8");

    let r = cli(&["verify", db]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    assert!(
        r.stdout
            .contains(&format!("error: {db}: table `writes` is damaged")),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains(&format!("sqlite3 {db} .recover | sqlite3 recovered.db")),
        "{}",
        r.stdout
    );
    let report: serde_json::Value =
        serde_json::from_str(&cli(&["verify", "--json", db]).stdout).expect("json");
    assert_eq!(report["damaged_tables"], serde_json::json!(["writes"]));
    assert!(report["remedy"]
        .as_str()
        .is_some_and(|r| r.contains(".recover")));
    // The checkpoints, on pages of their own, were still read and checked.
    assert_eq!(
        report["values"], 28,
        "14 checkpoints' rows of two values: {report}"
    );

    // Damage in an index (which reading the tables does not touch) is found too.
    let path = dir.join("index.db");
    write_db(&path);
    overwrite_page(&path, root_page(&path, "sqlite_autoindex_checkpoints_1"));
    let db = path.to_str().expect("utf-8");
    let r = cli(&["verify", db]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("index `sqlite_autoindex_checkpoints_1` of table `checkpoints` is damaged"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains(".recover"), "{}", r.stdout);

    // The schema's page: the database does not open; still a named part and the remedy.
    let path = dir.join("schema.db");
    write_db(&path);
    overwrite_page(&path, 1);
    let db = path.to_str().expect("utf-8");
    let r = cli(&["verify", db]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stderr
            .starts_with(&format!("error: {db}: the file is damaged")),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("table `sqlite_master`"), "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!("sqlite3 {db} .recover")),
        "{}",
        r.stderr
    );
    let _ = std::fs::remove_dir_all(dir);
}
