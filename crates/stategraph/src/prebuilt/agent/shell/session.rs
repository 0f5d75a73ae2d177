//! A persistent shell process (Python's `ShellSession`): commands are written to its
//! standard input, each followed by a `printf` of a done marker with the exit status,
//! and its output lines are read until the marker (or the timeout).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::time::{timeout_at, Instant};

use super::policy::HostExecutionPolicy;

const DONE_MARKER_PREFIX: &str = "__LC_SHELL_DONE__";

/// A line of output (`None`: the stream ended), and whether it came from stderr.
type Line = (bool, Option<String>);

/// What one command gave (Python's `CommandExecutionResult`).
#[derive(Debug, Clone, Default)]
pub(super) struct Execution {
    pub(super) output: String,
    pub(super) exit_code: Option<i64>,
    pub(super) timed_out: bool,
    pub(super) truncated_by_lines: bool,
    pub(super) truncated_by_bytes: bool,
    pub(super) total_lines: usize,
    pub(super) total_bytes: usize,
}

/// The running shell.
pub(super) struct Session {
    workspace: PathBuf,
    command: Vec<String>,
    env: Vec<(String, String)>,
    policy: HostExecutionPolicy,
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    lines: Option<UnboundedReceiver<Line>>,
}

impl Session {
    /// A session not started yet.
    pub(super) fn new(
        workspace: &Path,
        command: Vec<String>,
        env: Vec<(String, String)>,
        policy: HostExecutionPolicy,
    ) -> Session {
        Session {
            workspace: workspace.to_path_buf(),
            command,
            env,
            policy,
            child: None,
            stdin: None,
            lines: None,
        }
    }

    /// Starts the shell (the environment is exactly the one given, as Python's).
    pub(super) fn start(&mut self) -> std::io::Result<()> {
        let mut cmd = Command::new(&self.command[0]);
        cmd.args(&self.command[1..])
            .current_dir(&self.workspace)
            .env_clear()
            .envs(self.env.iter().cloned())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if self.policy.create_process_group {
            cmd.process_group(0);
        }
        let mut child = cmd.spawn()?;
        let (tx, rx) = unbounded_channel();
        if let Some(out) = child.stdout.take() {
            tokio::spawn(pump(out, false, tx.clone()));
        }
        if let Some(err) = child.stderr.take() {
            tokio::spawn(pump(err, true, tx));
        }
        self.stdin = child.stdin.take();
        self.child = Some(child);
        self.lines = Some(rx);
        Ok(())
    }

    /// Stops the shell (`exit`, then a kill after the termination timeout) and starts
    /// a new one.
    pub(super) async fn restart(&mut self) -> std::io::Result<()> {
        self.stop().await;
        self.start()
    }

    /// Asks the shell to exit, killing it (and its process group) if it does not.
    pub(super) async fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        if let Some(mut stdin) = self.stdin.take() {
            let _ = stdin.write_all(b"exit\n").await;
            let _ = stdin.flush().await;
        }
        let grace = Duration::from_secs_f64(self.policy.termination_timeout);
        if tokio::time::timeout(grace, child.wait()).await.is_err() {
            if let (true, Some(pid)) = (self.policy.create_process_group, child.id()) {
                let _ = Command::new("kill")
                    .args(["-KILL", "--", &format!("-{pid}")])
                    .status()
                    .await;
            }
            let _ = child.kill().await;
        }
        self.lines = None;
    }

    /// Runs `command`, waiting up to `timeout` seconds for its marker; a command that
    /// times out restarts the session (Python's `ShellSession.execute`).
    pub(super) async fn execute(
        &mut self,
        command: &str,
        timeout: f64,
    ) -> Result<Execution, String> {
        let running = match self.child.as_mut() {
            Some(child) => matches!(child.try_wait(), Ok(None)),
            None => false,
        };
        if !running {
            return Err("Shell session is not running.".into());
        }
        let marker = format!("{DONE_MARKER_PREFIX}{}", uuid::Uuid::new_v4().simple());
        let deadline = Instant::now() + Duration::from_secs_f64(timeout);
        if let Some(lines) = self.lines.as_mut() {
            while lines.try_recv().is_ok() {}
        }
        let mut payload = command.to_owned();
        if !payload.ends_with('\n') {
            payload.push('\n');
        }
        payload.push_str(&format!("printf '{marker} %s\\n' $?\n"));
        let written = match self.stdin.as_mut() {
            Some(stdin) => match stdin.write_all(payload.as_bytes()).await {
                Ok(()) => stdin.flush().await.is_ok(),
                Err(_) => false,
            },
            None => false,
        };
        if !written {
            let drain = deadline.min(Instant::now() + Duration::from_millis(100));
            let mut out = self.collect(None, drain).await;
            out.timed_out = false;
            out.exit_code = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
                .and_then(|s| s.code().map(i64::from));
            return Ok(out);
        }
        let out = self.collect(Some(&marker), deadline).await;
        if out.timed_out {
            self.restart().await.map_err(|e| e.to_string())?;
            return Ok(Execution {
                timed_out: true,
                exit_code: None,
                output: String::new(),
                ..out
            });
        }
        Ok(out)
    }

    /// Reads output lines until `marker` (then stderr lines arriving within 50 ms) or
    /// `deadline` (a timeout when a marker was awaited).
    async fn collect(&mut self, marker: Option<&str>, deadline: Instant) -> Execution {
        let mut out = Execution::default();
        let mut kept: Vec<String> = Vec::new();
        let limits = (self.policy.max_output_lines, self.policy.max_output_bytes);
        let Some(lines) = self.lines.as_mut() else {
            out.timed_out = marker.is_some();
            return out;
        };
        loop {
            let next = timeout_at(deadline, lines.recv()).await;
            let (is_err, data) = match next {
                Ok(Some(line)) => line,
                Ok(None) | Err(_) => {
                    out.timed_out = marker.is_some();
                    break;
                }
            };
            let Some(data) = data else { continue };
            if let (false, Some(m)) = (is_err, marker) {
                if data.starts_with(m) {
                    let status = data.split_once(' ').map_or("", |(_, s)| s).trim();
                    out.exit_code = status.parse().ok();
                    let drain = deadline.min(Instant::now() + Duration::from_millis(50));
                    while let Ok(Some((true, Some(line)))) = timeout_at(drain, lines.recv()).await {
                        push_stderr(&mut kept, &line);
                    }
                    break;
                }
            }
            out.total_lines += 1;
            out.total_bytes += data.len();
            if out.total_lines > limits.0 {
                out.truncated_by_lines = true;
                continue;
            }
            if limits.1.is_some_and(|max| out.total_bytes > max) {
                out.truncated_by_bytes = true;
                continue;
            }
            if is_err {
                push_stderr(&mut kept, &data);
            } else {
                kept.push(data);
            }
        }
        out.output = kept.concat();
        out
    }
}

/// A stderr line as Python shows it: `[stderr] ` before it.
fn push_stderr(kept: &mut Vec<String>, line: &str) {
    kept.push(format!("[stderr] {}", line.trim_end_matches('\n')));
    if line.ends_with('\n') {
        kept.push("\n".into());
    }
}

/// Sends each line of `stream` (UTF-8, bad bytes replaced, `\r\n` read as `\n`), then
/// `None` at its end.
async fn pump(stream: impl AsyncRead + Unpin, is_err: bool, tx: UnboundedSender<Line>) {
    let mut reader = BufReader::new(stream);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let line = String::from_utf8_lossy(&buf).replace("\r\n", "\n");
                if tx.send((is_err, Some(line))).is_err() {
                    return;
                }
            }
        }
    }
    let _ = tx.send((is_err, None));
}
