//! Measures how a run's stream events travel from a worker process to an API process:
//! what the server does today (a `run_events` row inserted and `NOTIFY` sent in one
//! statement, the reader woken by `LISTEN` and reading the rows) against Redis, either
//! `PUBLISH` to a subscribed connection (no replay) or `XADD` to a stream read with
//! `XREAD BLOCK` (replayable, like the table); and the table with `synchronous_commit = off`
//! on the publisher's connection, the cheap change within Postgres. Issue 13 asks to measure
//! and choose.
//!
//! ```text
//! cargo run --release -p stategraph-server --example pubsub_bench -- --runs 3
//! ```
//!
//! For each transport and payload size the bench starts two OS processes (itself, with
//! `--role sub` and `--role pub`): the subscriber connects and says `ready`, then the
//! publisher sends events one after the other, each awaited as a worker does. Two phases:
//! a *burst* (as fast as one publisher goes, for `--burst-secs` or `--max-events`) gives
//! events per second and the CPU per event of the publisher, the subscriber and the broker
//! (the Postgres backends of both connections, or the whole `redis-server`); a *paced*
//! phase (`--paced` events at `--rate` per second) gives the publish-to-receive latency.
//! Every payload carries its send time (the wall clock, shared by processes on one
//! machine). CPU is read from `/proc/<pid>/task/*/schedstat` (nanoseconds).
//!
//! Postgres tables live in a schema of their own, dropped at the end; Redis keys and
//! channels are named after the bench's process id and deleted after each case.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::StreamExt;
use serde_json::{json, Value as Json};
use tokio_postgres::{AsyncMessage, NoTls};
use uuid::Uuid;

type Error = Box<dyn std::error::Error + Send + Sync>;
type Res<T> = Result<T, Error>;

const HELP: &str = "\
pubsub_bench: stream events between two processes, Postgres NOTIFY against Redis

USAGE: pubsub_bench [--runs N] [--sizes 200,20000] [--burst-secs S] [--max-events N]
                    [--paced N] [--rate R] [--database-url URL] [--redis-url URL]

  --runs N          repetitions of every case; the table shows medians (default 3)
  --sizes LIST      payload sizes in bytes (default 200,20000)
  --burst-secs S    length of the burst phase (default 1.5)
  --max-events N    cap of the burst phase (default 10000)
  --paced N         events of the latency phase (default 1000)
  --rate R          events per second of the latency phase (default 500)
  --database-url    Postgres (default $DATABASE_URL, else postgresql://postgres@127.0.0.1:5432/postgres)
  --redis-url       Redis (default $REDIS_URL, else redis://127.0.0.1:6379/)
  --transports LIST notify,notify-async,publish,stream (default all four)
";

/// How events travel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Transport {
    /// The server today: `INSERT INTO run_events` + `pg_notify`, `LISTEN` + `SELECT`.
    Notify,
    /// The same with `synchronous_commit = off` on the publisher's connection: the commit
    /// does not wait for the WAL flush (a Postgres crash can lose the last events).
    NotifyAsync,
    /// Redis `PUBLISH` / `SUBSCRIBE`: nothing kept.
    Publish,
    /// Redis `XADD` / `XREAD BLOCK`: kept, replayable from any id.
    Stream,
}

impl Transport {
    fn name(self) -> &'static str {
        match self {
            Transport::Notify => "notify",
            Transport::NotifyAsync => "notify-async",
            Transport::Publish => "publish",
            Transport::Stream => "stream",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Transport::Notify => "Postgres row + NOTIFY (today)",
            Transport::NotifyAsync => "Postgres row + NOTIFY, `synchronous_commit = off`",
            Transport::Publish => "Redis PUBLISH",
            Transport::Stream => "Redis XADD + XREAD BLOCK",
        }
    }

    fn parse(s: &str) -> Res<Self> {
        match s {
            "notify" => Ok(Transport::Notify),
            "notify-async" => Ok(Transport::NotifyAsync),
            "publish" => Ok(Transport::Publish),
            "stream" => Ok(Transport::Stream),
            other => Err(format!("unknown transport {other}").into()),
        }
    }
}

/// The bench's settings (the orchestrator's flags, passed on to the children).
#[derive(Clone, Debug)]
struct Opts {
    runs: usize,
    sizes: Vec<usize>,
    burst_secs: f64,
    max_events: usize,
    paced: usize,
    rate: u64,
    database_url: String,
    redis_url: String,
    transports: Vec<Transport>,
    // Child-only settings.
    role: Option<String>,
    transport: Transport,
    size: usize,
    burst: bool,
    schema: String,
    key: String,
    run_id: Uuid,
}

fn parse_args() -> Res<Option<Opts>> {
    let mut o = Opts {
        runs: 3,
        sizes: vec![200, 20_000],
        burst_secs: 1.5,
        max_events: 10_000,
        paced: 1000,
        rate: 500,
        database_url: std::env::var("DATABASE_URL")
            .unwrap_or_else(|_| "postgresql://postgres@127.0.0.1:5432/postgres".into()),
        redis_url: std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".into()),
        transports: vec![
            Transport::Notify,
            Transport::NotifyAsync,
            Transport::Publish,
            Transport::Stream,
        ],
        role: None,
        transport: Transport::Notify,
        size: 200,
        burst: true,
        schema: String::new(),
        key: String::new(),
        run_id: Uuid::nil(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--help" || flag == "-h" {
            return Ok(None);
        }
        let v = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{flag}: {e}");
        match flag.as_str() {
            "--runs" => o.runs = v.parse().map_err(|e| bad(&e))?,
            "--sizes" => {
                o.sizes = v
                    .split(',')
                    .map(|s| s.trim().parse::<usize>())
                    .collect::<Result<_, _>>()
                    .map_err(|e| bad(&e))?
            }
            "--burst-secs" => o.burst_secs = v.parse().map_err(|e| bad(&e))?,
            "--max-events" => o.max_events = v.parse().map_err(|e| bad(&e))?,
            "--paced" => o.paced = v.parse().map_err(|e| bad(&e))?,
            "--rate" => o.rate = v.parse().map_err(|e| bad(&e))?,
            "--database-url" => o.database_url = v,
            "--redis-url" => o.redis_url = v,
            "--transports" => {
                o.transports = v
                    .split(',')
                    .map(|s| Transport::parse(s.trim()))
                    .collect::<Res<_>>()?
            }
            "--role" => o.role = Some(v),
            "--transport" => o.transport = Transport::parse(&v)?,
            "--size" => o.size = v.parse().map_err(|e| bad(&e))?,
            "--phase" => o.burst = v == "burst",
            "--schema" => o.schema = v,
            "--key" => o.key = v,
            "--run-id" => o.run_id = v.parse().map_err(|e| bad(&e))?,
            other => return Err(format!("unknown flag {other} (see --help)").into()),
        }
    }
    if o.rate == 0 || o.runs == 0 || o.sizes.iter().any(|&s| s < 64) {
        return Err("--rate and --runs must be positive, sizes at least 64 bytes".into());
    }
    Ok(Some(o))
}

fn main() -> ExitCode {
    let opts = match parse_args() {
        Ok(Some(o)) => o,
        Ok(None) => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("pubsub_bench: {e}");
            return ExitCode::from(2);
        }
    };
    let result = match opts.role.as_deref() {
        None => orchestrate(&opts),
        Some(role) => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(Error::from)
            .and_then(|rt| {
                rt.block_on(async {
                    match role {
                        "sub" => subscriber(&opts).await,
                        "pub" => publisher(&opts).await,
                        other => Err(format!("unknown role {other}").into()),
                    }
                })
            }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pubsub_bench: {e}");
            ExitCode::FAILURE
        }
    }
}

// ---- measuring -------------------------------------------------------------------------

/// Nanoseconds since the Unix epoch (the clock both processes share).
fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// CPU time used so far by every thread of process `pid` ("self" for this one), in ns.
fn cpu_ns(pid: &str) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .filter_map(|t| t.ok())
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// The CPU seconds `redis-server` reports in `INFO cpu` (user + system, all its threads).
async fn redis_cpu_ns(con: &mut redis::aio::MultiplexedConnection) -> Res<u64> {
    let info: String = redis::cmd("INFO").arg("cpu").query_async(con).await?;
    let mut secs = 0.0;
    for line in info.lines() {
        for key in ["used_cpu_sys:", "used_cpu_user:"] {
            if let Some(v) = line.strip_prefix(key) {
                secs += v.trim().parse::<f64>().unwrap_or(0.0);
            }
        }
    }
    Ok((secs * 1e9) as u64)
}

/// An event's bytes: `{"t":<send time ns>,"seq":<n>,"pad":"<hex>"}`, `size` bytes long
/// (or the header alone if it is longer). `t` = 0 marks the last event.
fn payload(t: u64, seq: u64, pad: &str, size: usize) -> String {
    let mut s = format!("{{\"t\":{t},\"seq\":{seq},\"pad\":\"");
    let room = size.saturating_sub(s.len() + 2).min(pad.len());
    s.push_str(&pad[..room]);
    s.push_str("\"}");
    s
}

/// Hex noise (so that neither side can compress the payload to nothing).
fn noise(size: usize) -> String {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..size)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            char::from(b"0123456789abcdef"[(x & 15) as usize])
        })
        .collect()
}

/// The send time in a payload (`None` when it is not one of ours).
fn sent_at(data: &[u8]) -> Option<u64> {
    let rest = data.strip_prefix(b"{\"t\":")?;
    let end = rest.iter().position(|b| !b.is_ascii_digit())?;
    std::str::from_utf8(&rest[..end]).ok()?.parse().ok()
}

/// What the subscriber saw.
#[derive(Default)]
struct Received {
    latencies: Vec<u64>,
    last_ns: u64,
    done: bool,
}

impl Received {
    /// Records one event read at `now`; marks the end on the last one.
    fn record(&mut self, data: &[u8], now: u64) -> Res<()> {
        match sent_at(data) {
            Some(0) => self.done = true,
            Some(t) => {
                self.latencies.push(now.saturating_sub(t));
                self.last_ns = now;
            }
            None => return Err("an event without a send time".into()),
        }
        Ok(())
    }
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

// ---- the subscriber (an API process) ----------------------------------------------------

fn chan(o: &Opts) -> String {
    format!("{}_events", o.key)
}

async fn pg_connect(url: &str) -> Res<(tokio_postgres::Client, u32)> {
    let (client, conn) = tokio_postgres::connect(url, NoTls).await?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let pid: i32 = client
        .query_one("SELECT pg_backend_pid()", &[])
        .await?
        .get(0);
    Ok((client, pid as u32))
}

async fn subscriber(o: &Opts) -> Res<()> {
    let limit = Duration::from_secs(120);
    let (cpu0, broker0, rec, broker1, cpu1) = match o.transport {
        Transport::Notify | Transport::NotifyAsync => {
            // The LISTEN connection forwards notifications; a second connection reads rows,
            // as the server's pool does.
            let (listen, mut conn) = tokio_postgres::connect(&o.database_url, NoTls).await?;
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
            tokio::spawn(async move {
                while let Some(msg) = futures::future::poll_fn(|cx| conn.poll_message(cx)).await {
                    match msg {
                        Ok(AsyncMessage::Notification(_)) => {
                            if tx.send(()).is_err() {
                                break;
                            }
                        }
                        Ok(_) => {}
                        Err(_) => break,
                    }
                }
            });
            let listen_pid: i32 = listen
                .query_one("SELECT pg_backend_pid()", &[])
                .await?
                .get(0);
            listen.batch_execute(&format!("LISTEN {}", chan(o))).await?;
            let (client, read_pid) = pg_connect(&o.database_url).await?;
            let read = client
                .prepare(&format!(
                    "SELECT seq, data FROM {}.run_events WHERE run_id = $1 AND seq > $2
                     ORDER BY seq LIMIT 1000",
                    o.schema
                ))
                .await?;
            let backends = [listen_pid.to_string(), read_pid.to_string()];
            let broker = || backends.iter().map(|p| cpu_ns(p)).sum::<u64>();
            let (cpu0, broker0) = (cpu_ns("self"), broker());
            ready()?;
            let mut rec = Received::default();
            let mut last = 0i64;
            tokio::time::timeout(limit, async {
                while !rec.done {
                    if rx.recv().await.is_none() {
                        return Err::<(), Error>("the LISTEN connection closed".into());
                    }
                    while rx.try_recv().is_ok() {}
                    loop {
                        let rows = client.query(&read, &[&o.run_id, &last]).await?;
                        let now = now_ns();
                        for r in &rows {
                            last = r.get(0);
                            rec.record(r.get::<_, &str>(1).as_bytes(), now)?;
                        }
                        if rows.len() < 1000 {
                            break;
                        }
                    }
                }
                Ok(())
            })
            .await??;
            let (broker1, cpu1) = (broker(), cpu_ns("self"));
            client
                .execute(
                    format!("DELETE FROM {}.runs WHERE run_id = $1", o.schema).as_str(),
                    &[&o.run_id],
                )
                .await?;
            (cpu0, broker0, rec, broker1, cpu1)
        }
        Transport::Publish | Transport::Stream => {
            let client = redis::Client::open(o.redis_url.as_str())?;
            let mut info = client.get_multiplexed_async_connection().await?;
            let mut rec = Received::default();
            if o.transport == Transport::Publish {
                let mut ps = client.get_async_pubsub().await?;
                ps.subscribe(chan(o)).await?;
                let (cpu0, broker0) = (cpu_ns("self"), redis_cpu_ns(&mut info).await?);
                ready()?;
                let mut msgs = std::pin::pin!(ps.on_message());
                tokio::time::timeout(limit, async {
                    while !rec.done {
                        let Some(m) = msgs.next().await else {
                            return Err::<(), Error>("the subscription closed".into());
                        };
                        rec.record(m.get_payload_bytes(), now_ns())?;
                    }
                    Ok(())
                })
                .await??;
                let (broker1, cpu1) = (redis_cpu_ns(&mut info).await?, cpu_ns("self"));
                (cpu0, broker0, rec, broker1, cpu1)
            } else {
                let config = redis::AsyncConnectionConfig::new().set_response_timeout(None);
                let mut con = client
                    .get_multiplexed_async_connection_with_config(&config)
                    .await?;
                let (cpu0, broker0) = (cpu_ns("self"), redis_cpu_ns(&mut info).await?);
                ready()?;
                let mut last = "0-0".to_string();
                tokio::time::timeout(limit, async {
                    while !rec.done {
                        let reply: redis::Value = redis::cmd("XREAD")
                            .arg("COUNT")
                            .arg(1000)
                            .arg("BLOCK")
                            .arg(1000)
                            .arg("STREAMS")
                            .arg(o.key.as_str())
                            .arg(last.as_str())
                            .query_async(&mut con)
                            .await?;
                        let now = now_ns();
                        for (id, data) in stream_entries(reply)? {
                            last = id;
                            rec.record(&data, now)?;
                        }
                    }
                    Ok::<(), Error>(())
                })
                .await??;
                let (broker1, cpu1) = (redis_cpu_ns(&mut info).await?, cpu_ns("self"));
                redis::cmd("DEL")
                    .arg(o.key.as_str())
                    .query_async::<redis::Value>(&mut info)
                    .await?;
                (cpu0, broker0, rec, broker1, cpu1)
            }
        }
    };
    let mut lat = rec.latencies;
    lat.sort_unstable();
    let out = json!({
        "received": lat.len(),
        "last_ns": rec.last_ns,
        "cpu_ns": cpu1.saturating_sub(cpu0),
        "broker_ns": broker1.saturating_sub(broker0),
        "p50_ns": percentile(&lat, 0.5),
        "p99_ns": percentile(&lat, 0.99),
    });
    println!("{out}");
    Ok(())
}

fn ready() -> Res<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "ready")?;
    out.flush()?;
    Ok(())
}

/// The `(id, d field)` pairs of an `XREAD` reply (RESP2 arrays or RESP3 maps; nil when the
/// block timed out).
fn stream_entries(reply: redis::Value) -> Res<Vec<(String, Vec<u8>)>> {
    use redis::Value as V;
    let streams: Vec<V> = match reply {
        V::Nil => return Ok(Vec::new()),
        V::Array(streams) => streams
            .into_iter()
            .filter_map(|s| match s {
                V::Array(mut kv) if kv.len() == 2 => kv.pop(),
                _ => None,
            })
            .collect(),
        V::Map(pairs) => pairs.into_iter().map(|(_, v)| v).collect(),
        other => return Err(format!("unexpected XREAD reply {other:?}").into()),
    };
    let mut out = Vec::new();
    for entries in streams {
        let V::Array(entries) = entries else {
            return Err("unexpected XREAD entries".into());
        };
        for entry in entries {
            let V::Array(mut parts) = entry else {
                return Err("unexpected XREAD entry".into());
            };
            let (Some(V::Array(fields)), Some(V::BulkString(id))) = (parts.pop(), parts.pop())
            else {
                return Err("unexpected XREAD entry shape".into());
            };
            let mut data = None;
            let mut it = fields.into_iter();
            while let (Some(k), Some(v)) = (it.next(), it.next()) {
                if let (V::BulkString(k), V::BulkString(v)) = (k, v) {
                    if k == b"d" {
                        data = Some(v);
                    }
                }
            }
            let data = data.ok_or("an XREAD entry without its d field")?;
            out.push((String::from_utf8(id)?, data));
        }
    }
    Ok(out)
}

// ---- the publisher (a worker) -----------------------------------------------------------

/// One way of sending an event, awaited like the worker awaits its `append_event`.
enum Sender {
    Pg(tokio_postgres::Client, tokio_postgres::Statement, u32),
    Redis(redis::aio::MultiplexedConnection),
}

impl Sender {
    async fn send(&mut self, o: &Opts, seq: i64, data: &str) -> Res<()> {
        match self {
            Sender::Pg(client, stmt, _) => {
                client
                    .execute(stmt, &[&o.run_id, &seq, &"values", &data, &chan(o)])
                    .await?;
            }
            Sender::Redis(con) => {
                let cmd = if o.transport == Transport::Publish {
                    let mut c = redis::cmd("PUBLISH");
                    c.arg(chan(o)).arg(data.as_bytes());
                    c
                } else {
                    let mut c = redis::cmd("XADD");
                    c.arg(o.key.as_str())
                        .arg("*")
                        .arg("e")
                        .arg("values")
                        .arg("d")
                        .arg(data.as_bytes());
                    c
                };
                cmd.query_async::<redis::Value>(con).await?;
            }
        }
        Ok(())
    }
}

async fn publisher(o: &Opts) -> Res<()> {
    let mut sender = match o.transport {
        Transport::Notify | Transport::NotifyAsync => {
            let (client, pid) = pg_connect(&o.database_url).await?;
            if o.transport == Transport::NotifyAsync {
                client.batch_execute("SET synchronous_commit = off").await?;
            }
            client
                .execute(
                    format!("INSERT INTO {}.runs (run_id) VALUES ($1)", o.schema).as_str(),
                    &[&o.run_id],
                )
                .await?;
            // The statement of `db::append_event`.
            let stmt = client
                .prepare(&format!(
                    "WITH ins AS (INSERT INTO {}.run_events (run_id, seq, event, data)
                     VALUES ($1, $2, $3, $4)) SELECT pg_notify($5, $1::text)",
                    o.schema
                ))
                .await?;
            Sender::Pg(client, stmt, pid)
        }
        Transport::Publish | Transport::Stream => Sender::Redis(
            redis::Client::open(o.redis_url.as_str())?
                .get_multiplexed_async_connection()
                .await?,
        ),
    };
    let backend = match &sender {
        Sender::Pg(_, _, pid) => Some(pid.to_string()),
        Sender::Redis(_) => None,
    };
    let broker = || backend.as_deref().map_or(0, cpu_ns);
    let pad = noise(o.size);
    let (cpu0, broker0) = (cpu_ns("self"), broker());
    let start = now_ns();
    let mut seq: i64 = 0;
    if o.burst {
        let until = Instant::now() + Duration::from_secs_f64(o.burst_secs);
        while (seq as usize) < o.max_events && Instant::now() < until {
            seq += 1;
            sender
                .send(o, seq, &payload(now_ns(), seq as u64, &pad, o.size))
                .await?;
        }
    } else {
        let mut tick = tokio::time::interval(Duration::from_nanos(1_000_000_000 / o.rate));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        while (seq as usize) < o.paced {
            tick.tick().await;
            seq += 1;
            sender
                .send(o, seq, &payload(now_ns(), seq as u64, &pad, o.size))
                .await?;
        }
    }
    sender
        .send(o, seq + 1, &payload(0, 0, &pad, o.size))
        .await?;
    let (cpu1, broker1) = (cpu_ns("self"), broker());
    let out = json!({
        "sent": seq,
        "start_ns": start,
        "cpu_ns": cpu1.saturating_sub(cpu0),
        "broker_ns": broker1.saturating_sub(broker0),
    });
    println!("{out}");
    Ok(())
}

// ---- the orchestrator ---------------------------------------------------------------------

/// One case's figures.
#[derive(Clone, Copy, Debug, Default)]
struct Sample {
    events_per_s: f64,
    pub_us: f64,
    sub_us: f64,
    broker_us: f64,
    p50_ms: f64,
    p99_ms: f64,
}

fn child_args(
    o: &Opts,
    role: &str,
    t: Transport,
    size: usize,
    burst: bool,
    key: &str,
    run: Uuid,
) -> Vec<String> {
    [
        ("--role", role.to_string()),
        ("--transport", t.name().to_string()),
        ("--size", size.to_string()),
        ("--phase", if burst { "burst" } else { "paced" }.to_string()),
        ("--burst-secs", o.burst_secs.to_string()),
        ("--max-events", o.max_events.to_string()),
        ("--paced", o.paced.to_string()),
        ("--rate", o.rate.to_string()),
        ("--database-url", o.database_url.clone()),
        ("--redis-url", o.redis_url.clone()),
        ("--schema", o.schema.clone()),
        ("--key", key.to_string()),
        ("--run-id", run.to_string()),
    ]
    .into_iter()
    .flat_map(|(k, v)| [k.to_string(), v])
    .collect()
}

fn field(j: &Json, k: &str) -> Res<f64> {
    j.get(k)
        .and_then(Json::as_f64)
        .ok_or_else(|| format!("a child's report lacks {k}: {j}").into())
}

/// Runs one phase of one case in two processes; returns (publisher, subscriber) reports.
fn run_case(o: &Opts, t: Transport, size: usize, burst: bool, n: usize) -> Res<(Json, Json)> {
    let exe = std::env::current_exe()?;
    let key = format!("pubsub_bench_{}_{n}", std::process::id());
    let run = Uuid::new_v4();
    let mut sub = Command::new(&exe)
        .args(child_args(o, "sub", t, size, burst, &key, run))
        .stdout(Stdio::piped())
        .spawn()?;
    let mut lines = BufReader::new(sub.stdout.take().ok_or("no stdout")?).lines();
    let first = lines.next().transpose()?;
    if first.as_deref() != Some("ready") {
        let _ = sub.wait();
        return Err(format!("the subscriber did not start ({first:?})").into());
    }
    let publ = Command::new(&exe)
        .args(child_args(o, "pub", t, size, burst, &key, run))
        .stderr(Stdio::inherit())
        .output()?;
    let sub_line = lines.next().transpose()?;
    let status = sub.wait()?;
    if !publ.status.success() || !status.success() {
        return Err(format!(
            "a child failed (publisher {}, subscriber {status})",
            publ.status
        )
        .into());
    }
    let p: Json = serde_json::from_slice(&publ.stdout)?;
    let s: Json = serde_json::from_str(&sub_line.ok_or("no subscriber report")?)?;
    if field(&p, "sent")? != field(&s, "received")? {
        return Err(format!("sent {p} but received {s}").into());
    }
    Ok((p, s))
}

fn setup_schema(o: &Opts, create: bool) -> Res<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let (client, _) = pg_connect(&o.database_url).await?;
        let s = &o.schema;
        let sql = if create {
            // The shape of the server's tables (crate::db), the runs table cut down to its key.
            format!(
                "CREATE SCHEMA {s};
                 CREATE TABLE {s}.runs (run_id uuid PRIMARY KEY);
                 CREATE TABLE {s}.run_events (
                     run_id uuid NOT NULL REFERENCES {s}.runs (run_id) ON DELETE CASCADE,
                     seq bigint NOT NULL, event text NOT NULL, data text NOT NULL,
                     PRIMARY KEY (run_id, seq));"
            )
        } else {
            format!("DROP SCHEMA IF EXISTS {s} CASCADE")
        };
        client.batch_execute(&sql).await?;
        Ok::<(), Error>(())
    })
}

fn orchestrate(o: &Opts) -> Res<()> {
    let mut o = o.clone();
    o.schema = format!("pubsub_bench_{}", std::process::id());
    let uses_pg = o
        .transports
        .iter()
        .any(|t| matches!(t, Transport::Notify | Transport::NotifyAsync));
    if uses_pg {
        setup_schema(&o, true)?;
    }
    let result = measure(&o);
    if uses_pg {
        setup_schema(&o, false)?;
    }
    let samples = result?;
    println!();
    println!("| transport | payload | events/s, 1 publisher | p50 ms | p99 ms | publisher CPU µs/event | subscriber CPU µs/event | broker CPU µs/event | failed runs |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for ((t, size), (runs, failed)) in &samples {
        if runs.is_empty() {
            println!("| {} | {size} B | | | | | | | {failed} |", t.label());
            continue;
        }
        let med = |f: fn(&Sample) -> f64| {
            let mut v: Vec<f64> = runs.iter().map(f).collect();
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        println!(
            "| {} | {size} B | {:.0} | {:.2} | {:.2} | {:.0} | {:.0} | {:.0} | {failed} |",
            t.label(),
            med(|s| s.events_per_s),
            med(|s| s.p50_ms),
            med(|s| s.p99_ms),
            med(|s| s.pub_us),
            med(|s| s.sub_us),
            med(|s| s.broker_us),
        );
    }
    println!("\n(medians of {} runs)", o.runs);
    Ok(())
}

/// Per case: the figures of the runs that completed, and how many runs failed.
type Samples = BTreeMap<(Transport, usize), (Vec<Sample>, usize)>;

fn measure(o: &Opts) -> Res<Samples> {
    let mut samples = Samples::new();
    let mut n = 0;
    for run in 1..=o.runs {
        for &t in &o.transports {
            for &size in &o.sizes {
                n += 2;
                let entry = samples.entry((t, size)).or_default();
                match one_case(o, t, size, n) {
                    Ok(sample) => {
                        eprintln!(
                            "run {run} {} {size} B: {:.0} events/s, p50 {:.2} ms, p99 {:.2} ms, CPU µs/event pub {:.1} sub {:.1} broker {:.1}",
                            t.name(),
                            sample.events_per_s,
                            sample.p50_ms,
                            sample.p99_ms,
                            sample.pub_us,
                            sample.sub_us,
                            sample.broker_us
                        );
                        entry.0.push(sample);
                    }
                    // A case that fails (a Redis subscriber dropped for falling behind, say)
                    // is counted, and the bench goes on.
                    Err(e) => {
                        eprintln!("run {run} {} {size} B: failed: {e}", t.name());
                        entry.1 += 1;
                    }
                }
            }
        }
    }
    Ok(samples)
}

/// Both phases of one case: the burst's throughput and CPU, the paced phase's latency.
fn one_case(o: &Opts, t: Transport, size: usize, n: usize) -> Res<Sample> {
    let (p, s) = run_case(o, t, size, true, n)?;
    let sent = field(&p, "sent")?.max(1.0);
    let secs = (field(&s, "last_ns")? - field(&p, "start_ns")?) / 1e9;
    let per = |ns: f64| ns / sent / 1e3;
    let broker = if matches!(t, Transport::Notify | Transport::NotifyAsync) {
        field(&p, "broker_ns")? + field(&s, "broker_ns")?
    } else {
        field(&s, "broker_ns")?
    };
    let (_, paced) = run_case(o, t, size, false, n + 1)?;
    Ok(Sample {
        events_per_s: sent / secs.max(1e-9),
        pub_us: per(field(&p, "cpu_ns")?),
        sub_us: per(field(&s, "cpu_ns")?),
        broker_us: per(broker),
        p50_ms: field(&paced, "p50_ns")? / 1e6,
        p99_ms: field(&paced, "p99_ns")? / 1e6,
    })
}
