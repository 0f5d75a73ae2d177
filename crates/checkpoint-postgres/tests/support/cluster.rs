//! A private Postgres cluster for fault tests: `initdb` + `pg_ctl` in a temporary
//! directory, on a free port, never the shared server. Tests restart it, and freeze it
//! (SIGSTOP) to play a server that stops answering. Dropping the [`Cluster`] thaws and
//! stops it and removes its directory, also when the test failed.
//!
//! The binaries are found in `$STATEGRAPH_PG_BIN`, else `pg_config --bindir`, else the
//! newest `/usr/lib/postgresql/*/bin`. Postgres refuses to run as root, so as root every
//! server command runs as the `postgres` user (`runuser`), which owns the directory.
//! Without the binaries a test prints a note and returns, unless
//! `STATEGRAPH_REQUIRE_POSTGRES` is set.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::required;

/// A running private cluster (trust authentication, user `postgres`).
pub(crate) struct Cluster {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
    as_postgres: bool,
}

impl Cluster {
    /// Creates and starts a cluster, or `None` (after a note) when the Postgres binaries
    /// are missing and not required.
    pub(crate) fn start() -> Option<Cluster> {
        let Some(bin) = bin_dir() else {
            assert!(
                !required(),
                "STATEGRAPH_REQUIRE_POSTGRES is set but no Postgres binaries (initdb, pg_ctl) \
                 were found; set STATEGRAPH_PG_BIN"
            );
            println!("note: no Postgres binaries (initdb, pg_ctl); test not run");
            return None;
        };
        let as_postgres = is_root();
        let dir = std::env::temp_dir().join(format!("sg-pg-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir(&dir).expect("cluster directory");
        let mut cluster = Cluster {
            bin,
            dir,
            port: 0,
            as_postgres,
        };
        if as_postgres {
            run(Command::new("chown").arg("postgres:").arg(&cluster.dir));
        }
        let data = cluster.data();
        cluster.server(
            "initdb",
            &[
                "-D",
                path(&data),
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "-N",
            ],
        );
        // A free port can be taken by someone else before the server binds it: retry.
        for attempt in 0..5 {
            cluster.port = free_port();
            if cluster.pg_ctl(&["start"]) {
                return Some(cluster);
            }
            eprintln!(
                "private cluster did not start on port {} (try {attempt})",
                cluster.port
            );
        }
        panic!(
            "the private cluster did not start; see {}",
            cluster.dir.join("log").display()
        );
    }

    /// The URL of the cluster's `postgres` database over TCP.
    pub(crate) fn url(&self) -> String {
        format!("postgresql://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// `127.0.0.1:<port>`, as error messages name the server.
    pub(crate) fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Restarts the server: every session ends.
    ///
    /// Immediate mode: every backend exits at once without committing. In fast mode the
    /// backends are terminated one by one, so a call waiting on a lock held by another backend
    /// could be granted the lock and commit before its own termination (seen once under load).
    pub(crate) fn restart(&self) {
        assert!(
            self.pg_ctl(&["restart", "-m", "immediate"]),
            "restart failed"
        );
    }

    /// Stops the postmaster and every process it started (SIGSTOP) until the returned
    /// guard is dropped (SIGCONT).
    pub(crate) fn freeze(&self) -> Frozen {
        let postmaster = self.postmaster();
        let mut pids = vec![postmaster];
        pids.extend(children(postmaster));
        signal("STOP", &pids);
        Frozen { pids }
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn postmaster(&self) -> u32 {
        let pidfile =
            std::fs::read_to_string(self.data().join("postmaster.pid")).expect("postmaster.pid");
        pidfile
            .lines()
            .next()
            .and_then(|l| l.trim().parse().ok())
            .expect("the postmaster's pid")
    }

    /// `pg_ctl <action>` with this cluster's settings; whether it succeeded.
    fn pg_ctl(&self, action: &[&str]) -> bool {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=40 -c shared_buffers=16MB",
            self.port,
            path(&self.dir)
        );
        let data = self.data();
        let log = self.dir.join("log");
        let mut args = vec!["-D", path(&data), "-l", path(&log), "-w", "-t", "60"];
        args.extend(["-o", options.as_str()]);
        args.extend(action);
        self.server_status("pg_ctl", &args)
    }

    fn server(&self, program: &str, args: &[&str]) {
        assert!(
            self.server_status(program, args),
            "{program} {args:?} failed"
        );
    }

    fn server_status(&self, program: &str, args: &[&str]) -> bool {
        let exe = self.bin.join(program);
        let mut command = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(exe);
            c
        } else {
            Command::new(exe)
        };
        command
            .args(args)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Ok(postmaster) = std::fs::read_to_string(self.data().join("postmaster.pid")) {
            if let Some(pid) = postmaster
                .lines()
                .next()
                .and_then(|l| l.trim().parse().ok())
            {
                let mut pids = vec![pid];
                pids.extend(children(pid));
                signal("CONT", &pids);
            }
        }
        let _ = self.pg_ctl(&["stop", "-m", "immediate"]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A frozen cluster; thawed when dropped.
pub(crate) struct Frozen {
    pids: Vec<u32>,
}

impl Drop for Frozen {
    fn drop(&mut self) {
        signal("CONT", &self.pids);
    }
}

fn bin_dir() -> Option<PathBuf> {
    let has_tools = |dir: &Path| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file();
    if let Ok(dir) = std::env::var("STATEGRAPH_PG_BIN") {
        return Some(PathBuf::from(dir)).filter(|d| has_tools(d));
    }
    let from_pg_config = Command::new("pg_config")
        .arg("--bindir")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    if let Some(dir) = from_pg_config.filter(|d| has_tools(d)) {
        return Some(dir);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let version = e.file_name().to_str()?.parse().ok()?;
            Some((version, e.path().join("bin")))
        })
        .filter(|(_, d)| has_tools(d))
        .collect();
    versions.sort();
    versions.pop().map(|(_, d)| d)
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// The processes whose parent is `parent` (from `/proc`).
fn children(parent: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| {
            let pid: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
            let after = &stat[stat.rfind(')')? + 1..];
            let ppid: u32 = after.split_whitespace().nth(1)?.parse().ok()?;
            (ppid == parent).then_some(pid)
        })
        .collect()
}

/// Sends `SIG<name>` to the cluster's own processes (by their ids).
fn signal(name: &str, pids: &[u32]) {
    if pids.is_empty() {
        return;
    }
    let _ = Command::new("kill")
        .arg(format!("-{name}"))
        .args(pids.iter().map(u32::to_string))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

fn run(command: &mut Command) {
    let status = command.status().expect("run a command");
    assert!(status.success(), "{command:?} failed");
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}
