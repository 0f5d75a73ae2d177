//! Seeded random scripts of saver operations: SQLite (in memory and on a file) and, when
//! `STATEGRAPH_TEST_POSTGRES_URL` is set, Postgres must answer every call as MemorySaver
//! does (the cargo-fuzz target `saver_ops` runs the same scripts from fuzzer bytes).
//!
//! A mismatch fails with the seed, the step and the whole script. To replay one seed:
//! `STATEGRAPH_FUZZ_SEED=<seed> cargo test -p stategraph-saver-fuzz --test differential`;
//! `STATEGRAPH_FUZZ_SCRIPTS=<n>` runs more (or fewer) scripts; `STATEGRAPH_FUZZ_SWEEP=1`
//! compares every thread's listing after each op (the failure then names the op that
//! made the difference).

use stategraph_checkpoint::{CheckpointSaver, MemorySaver};
use stategraph_checkpoint_postgres::PostgresSaver;
use stategraph_checkpoint_sqlite::SqliteSaver;
use stategraph_saver_fuzz::op::{BatchOp, Op};
use stategraph_saver_fuzz::{clear, run_script_with, seeded, Mismatch, Script, Shape, Subject};

/// Operations per script.
const OPS: usize = 50;
/// The first seed; script `i` uses `FIRST_SEED + i`.
const FIRST_SEED: u64 = 0x5eed_0000;

/// The seeds to run: the one of `STATEGRAPH_FUZZ_SEED`, else `default` scripts (or
/// `STATEGRAPH_FUZZ_SCRIPTS`) from [`FIRST_SEED`].
fn seeds(default: u64) -> Vec<u64> {
    if let Some(seed) = std::env::var("STATEGRAPH_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        return vec![seed];
    }
    let n = std::env::var("STATEGRAPH_FUZZ_SCRIPTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default);
    (0..n).map(|i| FIRST_SEED + i).collect()
}

/// `STATEGRAPH_FUZZ_SWEEP=1`: compare every thread's listing after each op, so that a
/// replayed failure names the op that made the difference.
fn sweep_each() -> bool {
    std::env::var("STATEGRAPH_FUZZ_SWEEP").is_ok_and(|v| v == "1")
}

fn report(seed: u64, script: &Script, mismatch: &Mismatch) -> String {
    let ops: Vec<String> = script
        .ops
        .iter()
        .enumerate()
        .map(|(i, op)| format!("  {i:>2}: {op:?}"))
        .collect();
    format!(
        "seed {seed} (replay: STATEGRAPH_FUZZ_SEED={seed}), fenced: {}\n{mismatch}\nscript:\n{}",
        script.fenced,
        ops.join("\n")
    )
}

fn reference(script: &Script) -> MemorySaver {
    MemorySaver::new()
        .with_fencing(script.fenced)
        .with_list_page(2)
}

/// A SQLite file shared by the scripts (cleared between them), so that its read cache and
/// stamps meet deleted and re-created threads; one saver per fencing mode on it.
struct SharedFile {
    path: std::path::PathBuf,
    fenced: SqliteSaver,
    unfenced: SqliteSaver,
}

impl SharedFile {
    fn new() -> SharedFile {
        let path = std::env::temp_dir().join(format!(
            "stategraph-saver-fuzz-{}.sqlite",
            uuid::Uuid::new_v4()
        ));
        let open = |fencing| {
            SqliteSaver::open(&path)
                .expect("open the SQLite file")
                .with_fencing(fencing)
                .with_list_page(3)
        };
        SharedFile {
            fenced: open(true),
            unfenced: open(false),
            path,
        }
    }

    fn saver(&self, fenced: bool) -> &SqliteSaver {
        if fenced {
            &self.fenced
        } else {
            &self.unfenced
        }
    }
}

impl Drop for SharedFile {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut name = self.path.clone().into_os_string();
            name.push(suffix);
            let _ = std::fs::remove_file(name);
        }
    }
}

#[tokio::test]
async fn sqlite_answers_as_memory_does() {
    let file = SharedFile::new();
    for seed in seeds(300) {
        let script = seeded::script(seed, OPS);
        let in_memory = SqliteSaver::in_memory()
            .expect("open in memory")
            .with_fencing(script.fenced)
            .with_list_page(2);
        let on_file = file.saver(script.fenced);
        let subjects = [
            Subject {
                name: "sqlite (in memory)",
                saver: &in_memory,
                shape: Shape::default(),
            },
            Subject {
                name: "sqlite (file)",
                saver: on_file,
                shape: Shape::default(),
            },
        ];
        if let Err(m) = run_script_with(&script, &reference(&script), &subjects, sweep_each()).await
        {
            panic!("{}", report(seed, &script, &m));
        }
        clear(on_file).await.expect("clear the shared file");
    }
}

/// A fresh schema on the server of `STATEGRAPH_TEST_POSTGRES_URL`, dropped at the end.
struct Schema {
    base: String,
    name: String,
}

impl Schema {
    async fn create(base: &str) -> (Schema, String) {
        let name = format!("sg_fuzz_{}", uuid::Uuid::new_v4().simple());
        admin(base)
            .await
            .batch_execute(&format!("CREATE SCHEMA {name}"))
            .await
            .expect("create schema");
        let sep = if base.contains('?') { '&' } else { '?' };
        let url = format!("{base}{sep}options=-csearch_path%3D{name}&application_name={name}");
        (
            Schema {
                base: base.to_owned(),
                name,
            },
            url,
        )
    }

    async fn drop_it(self) {
        let sql = format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name = '{0}' AND pid <> pg_backend_pid(); DROP SCHEMA {0} CASCADE",
            self.name
        );
        admin(&self.base)
            .await
            .batch_execute(&sql)
            .await
            .expect("drop schema");
    }
}

async fn admin(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(connection);
    client
}

/// `script` without the two calls where Postgres follows Python's `PostgresSaver` on
/// purpose and MemorySaver does not. Left out rather than normalized: each changes what
/// is stored, so every later answer would differ.
/// * `prune(KeepLatest)` becomes `prune(Delete)`: Postgres' `KeepLatest` is Python's
///   (crates/checkpoint-postgres/src/prune.rs): it also removes a subgraph call's
///   namespace (one with `:`) whose root checkpoint is saved and not kept, and unlinks
///   every kept checkpoint whose parent is not kept (a parent that never existed too),
///   where MemorySaver and SQLite keep those namespaces' latest checkpoints and unlink only
///   a parent the prune removed.
/// * A re-put of a stored id mints a new id instead: Postgres' upsert is Python's
///   (`ON CONFLICT DO UPDATE SET checkpoint, metadata`, crates/checkpoint-postgres/src/sql.rs)
///   and keeps the first put's parent, where MemorySaver and SQLite replace it too.
fn as_python_postgres(mut script: Script) -> Script {
    let put = |p: &mut stategraph_saver_fuzz::op::PutOp| p.reuse = None;
    for op in &mut script.ops {
        match op {
            Op::Prune { delete, .. } => *delete = true,
            Op::Put(p) => put(p),
            Op::Batch(ops) => ops.iter_mut().for_each(|o| {
                if let BatchOp::Put(p) = o {
                    put(p)
                }
            }),
            _ => {}
        }
    }
    script
}

#[tokio::test]
async fn postgres_answers_as_memory_does() {
    let Ok(base) = std::env::var("STATEGRAPH_TEST_POSTGRES_URL") else {
        println!("note: STATEGRAPH_TEST_POSTGRES_URL is not set; test not run");
        return;
    };
    let (schema, url) = Schema::create(&base).await;
    let connect = |fencing| {
        let url = url.clone();
        async move {
            PostgresSaver::connect(&url)
                .await
                .expect("connect")
                .with_fencing(fencing)
                .with_list_page(3)
        }
    };
    let (fenced, unfenced) = (connect(true).await, connect(false).await);
    fenced.setup().await.expect("set up the tables");
    // JSONB orders map keys itself (docs/format.md, "What a put stores").
    let shape = Shape { sort_maps: true };
    let mut failure = None;
    for seed in seeds(200) {
        let script = as_python_postgres(seeded::script(seed, OPS));
        let saver: &dyn CheckpointSaver = if script.fenced { &fenced } else { &unfenced };
        let subjects = [Subject {
            name: "postgres",
            saver,
            shape,
        }];
        if let Err(m) = run_script_with(&script, &reference(&script), &subjects, sweep_each()).await
        {
            failure = Some(report(seed, &script, &m));
            break;
        }
        clear(saver).await.expect("clear the schema");
    }
    drop((fenced, unfenced));
    schema.drop_it().await;
    if let Some(failure) = failure {
        panic!("{failure}");
    }
}
