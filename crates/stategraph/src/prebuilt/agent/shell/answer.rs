//! The shell tool's answer to one command: Python's content, status and artifact.

use serde_json::{json, Value as Json};

use super::policy::{redact, HostExecutionPolicy, RedactionRule};
use super::session::Execution;

/// The content, whether the call failed, and the artifact.
pub(super) fn format(
    policy: &HostExecutionPolicy,
    rules: &[RedactionRule],
    r: Execution,
) -> (String, bool, Json) {
    if r.timed_out {
        let text = format!(
            "Error: Command timed out after {:.1} seconds.",
            policy.command_timeout
        );
        return (text, true, json!({"timed_out": true, "exit_code": null}));
    }
    let (mut out, matches) = match redact(rules, &r.output) {
        Ok(done) => done,
        Err(blocked) => {
            let text = format!("Output blocked: detected {}.", blocked.pii_type);
            let mut found = serde_json::Map::new();
            found.insert(blocked.pii_type, blocked.matches);
            let artifact = json!({"timed_out": false, "exit_code": r.exit_code, "matches": found});
            return (text, true, artifact);
        }
    };
    if out.is_empty() {
        out = "<no output>".into();
    }
    if r.truncated_by_lines {
        out = format!(
            "{}\n\n... Output truncated at {} lines (observed {}).",
            out.trim_end(),
            policy.max_output_lines,
            r.total_lines
        );
    }
    if let (true, Some(max)) = (r.truncated_by_bytes, policy.max_output_bytes) {
        out = format!(
            "{}\n\n... Output truncated at {max} bytes (observed {}).",
            out.trim_end(),
            r.total_bytes
        );
    }
    let failed = r.exit_code.is_some_and(|c| c != 0);
    if let (true, Some(code)) = (failed, r.exit_code) {
        out = format!("{}\n\nExit code: {code}", out.trim_end());
    }
    let artifact = json!({
        "timed_out": false,
        "exit_code": r.exit_code,
        "truncated_by_lines": r.truncated_by_lines,
        "truncated_by_bytes": r.truncated_by_bytes,
        "total_lines": r.total_lines,
        "total_bytes": r.total_bytes,
        "redaction_matches": matches,
    });
    (out, failed, artifact)
}
