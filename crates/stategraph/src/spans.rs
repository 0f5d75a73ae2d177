//! The `tracing` spans of a run: one per run, per task, per model call and per tool call,
//! named and attributed after OpenTelemetry's GenAI semantic conventions (the README's
//! "Traces (OpenTelemetry)" lists them).
//!
//! Always compiled. With no `tracing` subscriber, or one that takes no `INFO` spans of this
//! crate, each span below is a level check (one atomic load) and nothing is built: the
//! macros evaluate their field values only for an enabled span, and every helper returns
//! early on a disabled one. The `otel` feature's `stategraph::otel` exports the spans over
//! OTLP; any other `tracing-opentelemetry` set-up exports them as well.
//!
//! Conventions used (`gen_ai.*`, OpenTelemetry semantic conventions, GenAI, development
//! status): `invoke_agent {name}` / `invoke_workflow {name}` for a run, `chat {model}` for a
//! model call, `execute_tool {tool}` for a tool call, and `task {node}` (this crate's own
//! `stategraph.*` attributes) for a task; the thread id is `gen_ai.conversation.id` on
//! each. Errors set the span's status to `ERROR` and `error.type`. Message content
//! (`gen_ai.input.messages`, `gen_ai.output.messages`, tool arguments and results) is
//! recorded only when opted in: [`set_capture_content`] or the environment variable
//! `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`, the switch of OpenTelemetry's
//! Python GenAI instrumentations.

use std::fmt::Display;
use std::future::Future;
use std::sync::atomic::{AtomicU8, Ordering};

use stategraph_checkpoint::Value;
use tracing::field::{display, Empty};
use tracing::{Instrument, Span};

use crate::config::RunConfig;
use crate::messages::{Message, Role};
use crate::pregel::node_error::{NodeError, NodeErrorKind};

/// Content capture: 0 not decided yet (read the environment), 1 off, 2 on.
static CAPTURE: AtomicU8 = AtomicU8::new(0);

/// The environment variable that turns content capture on (`true`), as in OpenTelemetry's
/// GenAI instrumentations.
pub const CAPTURE_CONTENT_ENV: &str = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";

/// Records message content on the spans (`gen_ai.input.messages`,
/// `gen_ai.output.messages`, `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`) when
/// `on`; off by default (then the environment variable [`CAPTURE_CONTENT_ENV`] decides).
/// Content may hold personal data: turn it on only where the traces may keep it.
pub fn set_capture_content(on: bool) {
    CAPTURE.store(if on { 2 } else { 1 }, Ordering::Relaxed);
}

/// Whether content is recorded (see [`set_capture_content`]).
pub fn captures_content() -> bool {
    match CAPTURE.load(Ordering::Relaxed) {
        0 => {
            let on = std::env::var(CAPTURE_CONTENT_ENV)
                .is_ok_and(|v| v.trim().eq_ignore_ascii_case("true"));
            // A concurrent `set_capture_content` wins over the environment.
            let _ = CAPTURE.compare_exchange(
                0,
                if on { 2 } else { 1 },
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
            CAPTURE.load(Ordering::Relaxed) == 2
        }
        v => v == 2,
    }
}

/// What a run's span names: an agent (`invoke_agent`) or a graph (`invoke_workflow`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum RunName {
    /// A plain graph, named by its `graph_id` (the Agent Server's) or `LangGraph`.
    #[default]
    Workflow,
    /// A graph with its own name (`CompiledGraph::with_name`).
    Named(std::sync::Arc<str>),
    /// An agent (`create_react_agent`), with its name if it was given one.
    Agent(Option<std::sync::Arc<str>>),
}

/// A run's span: `invoke_agent {name}` for an agent, `invoke_workflow {name}` for a graph;
/// the thread id as `gen_ai.conversation.id`, the run id ([`RunConfig::run_id`], else the
/// config's `run_id` metadata) as `stategraph.run.id`, the run's tags
/// ([`RunConfig::with_tags`]) as `stategraph.run.tags` (comma-separated).
fn run_span(name: &RunName, config: &RunConfig, ns: &str) -> Span {
    if !enabled() {
        return Span::none();
    }
    let thread = config.thread_id.as_deref();
    let config_run_id = config.run_id.map(|id| id.to_string());
    let run_id = config_run_id
        .as_deref()
        .or_else(|| config.metadata.get("run_id").and_then(Value::as_str));
    let tags = (!config.tags.is_empty()).then(|| config.tags.join(","));
    let ns = (!ns.is_empty()).then_some(ns);
    // The span of one kind of run: `$op {name}`, the name also under `$field`, then the
    // fields every run has. A macro: a span's field names are written in the code.
    macro_rules! span {
        ($op:literal, $($field:ident).+ = $name:expr) => {
            tracing::info_span!(
                $op,
                otel.name = %format_args!("{} {}", $op, $name),
                otel.kind = "internal",
                gen_ai.operation.name = $op,
                $($field).+ = $name,
                gen_ai.conversation.id = thread,
                stategraph.run.id = run_id,
                stategraph.run.tags = tags.as_deref(),
                stategraph.checkpoint.ns = ns,
                otel.status_code = Empty,
                otel.status_description = Empty,
                error.type = Empty,
            )
        };
    }
    match name {
        RunName::Agent(agent) => {
            let agent = agent.as_deref().unwrap_or("agent");
            span!("invoke_agent", gen_ai.agent.name = agent)
        }
        RunName::Workflow | RunName::Named(_) => {
            let graph = match name {
                RunName::Named(n) => n,
                _ => config
                    .configurable
                    .get("graph_id")
                    .and_then(Value::as_str)
                    .unwrap_or("LangGraph"),
            };
            span!("invoke_workflow", gen_ai.workflow.name = graph)
        }
    }
}

/// Runs a graph's run (the root's or a subgraph's) inside its span ([`run_span`]), the
/// span marked failed when the run fails. The one place a run's span is opened and
/// recorded. Untraced, the future `run` makes is awaited as is: wrapping it in
/// `instrument` would move its (large) future.
pub(crate) async fn traced_run<T, F>(
    name: &RunName,
    config: &RunConfig,
    ns: &str,
    run: impl FnOnce() -> F,
) -> crate::Result<T>
where
    F: Future<Output = crate::Result<T>>,
{
    let span = run_span(name, config, ns);
    if span.is_disabled() {
        return run().await;
    }
    let result = run().instrument(span.clone()).await;
    if let Err(e) = &result {
        let debug = format!("{e:?}");
        let kind = debug
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .next()
            .unwrap_or("Error");
        record_error(&span, kind, e);
    }
    result
}

/// A task's span, `task {node}`: node, step, task id, the checkpoint the task was planned
/// from; the attempt is recorded by [`task_attempt`]. The parent is the current span (the
/// run's, when the step runs inside it).
pub(crate) fn task_span(
    node: &str,
    step: i64,
    task_id: &str,
    checkpoint_id: &str,
    thread: Option<&str>,
) -> Span {
    tracing::info_span!(
        "task",
        otel.name = %format_args!("task {node}"),
        otel.kind = "internal",
        stategraph.node = node,
        stategraph.step = step,
        stategraph.task.id = task_id,
        stategraph.checkpoint.id = checkpoint_id,
        gen_ai.conversation.id = thread,
        stategraph.attempt = Empty,
        otel.status_code = Empty,
        otel.status_description = Empty,
        error.type = Empty,
    )
}

/// Whether any `INFO` span can be enabled (one atomic load): `false` with no subscriber.
pub(crate) fn enabled() -> bool {
    tracing::level_enabled!(tracing::Level::INFO)
}

/// The current span, or a disabled one at once when no `INFO` span can be enabled.
pub(crate) fn current() -> Span {
    if enabled() {
        Span::current()
    } else {
        Span::none()
    }
}

/// Records the attempt a task is at (1 for the first).
pub(crate) fn task_attempt(span: &Span, attempt: usize) {
    span.record(
        "stategraph.attempt",
        i64::try_from(attempt).unwrap_or(i64::MAX),
    );
}

/// Marks `span` failed when `result` is a failure (an interrupt or a command for the
/// parent graph is no failure).
pub(crate) fn task_result<T>(span: &Span, result: &Result<T, NodeError>) {
    if let Err(e) = result {
        node_error(span, e);
    }
}

/// Marks `span` failed with a node's failure.
fn node_error(span: &Span, e: &NodeError) {
    if span.is_disabled() {
        return;
    }
    if let NodeErrorKind::Failed { repr } = &e.kind {
        let kind = repr.split('(').next().unwrap_or("NodeError");
        record_error(span, kind, repr);
    }
}

/// Sets the span's status to `ERROR`, its `error.type` and its status description.
fn record_error(span: &Span, kind: &str, message: &dyn Display) {
    span.record("otel.status_code", "ERROR");
    span.record("error.type", kind);
    span.record("otel.status_description", display(message));
}

/// Runs a model call inside a `chat {model}` span. The model, provider, token usage and
/// finish reason are read from the answer (`response_metadata`'s `model_name` or `model`,
/// `model_provider` or `ls_provider`, `finish_reason` or `stop_reason`;
/// `usage_metadata`'s `input_tokens` and `output_tokens`), so any chat model is traced.
pub(crate) async fn chat(
    thread: Option<&str>,
    input: &[Message],
    call: impl Future<Output = Result<Message, NodeError>>,
) -> Result<Message, NodeError> {
    let span = tracing::info_span!(
        "chat",
        otel.name = "chat",
        otel.kind = "client",
        gen_ai.operation.name = "chat",
        gen_ai.conversation.id = thread,
        gen_ai.provider.name = Empty,
        gen_ai.request.model = Empty,
        gen_ai.response.model = Empty,
        gen_ai.response.id = Empty,
        gen_ai.response.finish_reasons = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.input.messages = Empty,
        gen_ai.output.messages = Empty,
        otel.status_code = Empty,
        otel.status_description = Empty,
        error.type = Empty,
    );
    if span.is_disabled() {
        return call.await;
    }
    let capture = captures_content();
    if capture {
        span.record("gen_ai.input.messages", otel_messages(input).as_str());
    }
    let result = call.instrument(span.clone()).await;
    match &result {
        Ok(answer) => record_answer(&span, answer, capture),
        Err(e) => node_error(&span, e),
    }
    result
}

/// Records what the answer of a model call says about the call.
fn record_answer(span: &Span, answer: &Message, capture: bool) {
    let meta = &answer.response_metadata;
    let text = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| meta.get(k).and_then(Value::as_str))
    };
    if let Some(model) = text(&["model_name", "model"]) {
        rename(span, format!("chat {model}"));
        span.record("gen_ai.request.model", model);
        span.record("gen_ai.response.model", model);
    }
    span.record(
        "gen_ai.provider.name",
        text(&["model_provider", "ls_provider"]).unwrap_or("_OTHER"),
    );
    if let Some(id) = text(&["id"]).or(answer.id.as_deref()) {
        span.record("gen_ai.response.id", id);
    }
    if let Some(reason) = text(&["finish_reason", "stop_reason"]) {
        finish_reasons(span, reason);
    }
    if let Some(usage) = &answer.usage_metadata {
        if let Some(n) = usage.get("input_tokens").and_then(Value::as_i64) {
            span.record("gen_ai.usage.input_tokens", n);
        }
        if let Some(n) = usage.get("output_tokens").and_then(Value::as_i64) {
            span.record("gen_ai.usage.output_tokens", n);
        }
    }
    if capture {
        let out = otel_messages(std::slice::from_ref(answer));
        span.record("gen_ai.output.messages", out.as_str());
    }
}

/// Names `span` `name`: on the OpenTelemetry span itself with the `otel` feature (the
/// bridge takes `otel.name` only before the span starts), else as the `otel.name` field.
fn rename(span: &Span, name: String) {
    #[cfg(feature = "otel")]
    {
        use opentelemetry::trace::TraceContextExt;
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        span.context().span().update_name(name);
    }
    #[cfg(not(feature = "otel"))]
    span.record("otel.name", name.as_str());
}

/// `gen_ai.response.finish_reasons`, a string array: as one with the `otel` feature (set on
/// the OpenTelemetry span directly, `tracing` fields have no arrays), else the reason alone.
fn finish_reasons(span: &Span, reason: &str) {
    #[cfg(feature = "otel")]
    {
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        let reasons = opentelemetry::Array::String(vec![reason.to_owned().into()]);
        span.set_attribute(
            "gen_ai.response.finish_reasons",
            opentelemetry::Value::Array(reasons),
        );
    }
    #[cfg(not(feature = "otel"))]
    span.record("gen_ai.response.finish_reasons", reason);
}

/// A tool call's span, `execute_tool {tool}`: `gen_ai.tool.name`, `gen_ai.tool.call.id`;
/// with content capture, the arguments (`gen_ai.tool.call.arguments`).
pub(crate) fn tool_span(
    name: &str,
    description: &str,
    call_id: Option<&str>,
    thread: Option<&str>,
    args: &Value,
) -> Span {
    let span = tracing::info_span!(
        "execute_tool",
        otel.name = %format_args!("execute_tool {name}"),
        otel.kind = "internal",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = name,
        gen_ai.tool.type = "function",
        gen_ai.tool.description = (!description.is_empty()).then_some(description),
        gen_ai.tool.call.id = call_id,
        gen_ai.conversation.id = thread,
        gen_ai.tool.call.arguments = Empty,
        gen_ai.tool.call.result = Empty,
        otel.status_code = Empty,
        otel.status_description = Empty,
        error.type = Empty,
    );
    if !span.is_disabled() && captures_content() {
        let args = crate::prebuilt::python_text::json_dumps(args);
        span.record("gen_ai.tool.call.arguments", args.as_str());
    }
    span
}

/// Records a tool call's outcome on its span: the failure, an error message returned to
/// the model (`error.type` is `error_kind`), or (with content capture) the result.
pub(crate) fn tool_result(
    span: &Span,
    result: &Result<Message, NodeError>,
    error_kind: Option<&str>,
) {
    if span.is_disabled() {
        return;
    }
    match result {
        Ok(message) => {
            if let Some(kind) = error_kind {
                record_error(span, kind, &display_content(&message.content));
            }
            if captures_content() {
                span.record(
                    "gen_ai.tool.call.result",
                    display_content(&message.content).as_str(),
                );
            }
        }
        Err(e) => node_error(span, e),
    }
}

/// Message content as text: a string as is, anything else as JSON.
fn display_content(content: &Value) -> String {
    match content {
        Value::Str(s) => s.to_string(),
        other => crate::prebuilt::python_text::json_dumps(other),
    }
}

/// Messages in the semantic conventions' JSON form: `[{"role", "parts": [...]}]`, parts
/// of type `text`, `tool_call` (`id`, `name`, `arguments`) and `tool_call_response` (`id`,
/// `response`).
fn otel_messages(messages: &[Message]) -> String {
    let list: Vec<serde_json::Value> = messages.iter().map(otel_message).collect();
    serde_json::Value::Array(list).to_string()
}

fn otel_message(m: &Message) -> serde_json::Value {
    use serde_json::json;
    let text = display_content(&m.content);
    let mut parts = Vec::new();
    match m.role {
        Role::Tool => parts.push(json!({
            "type": "tool_call_response",
            "id": m.tool_call_id,
            "response": text,
        })),
        _ if !text.is_empty() => parts.push(json!({"type": "text", "content": text})),
        _ => {}
    }
    for call in &m.tool_calls {
        let args = crate::prebuilt::python_text::json_dumps(&call.args);
        let args: serde_json::Value = serde_json::from_str(&args).unwrap_or(args.into());
        parts.push(json!({
            "type": "tool_call",
            "id": call.id,
            "name": call.name,
            "arguments": args,
        }));
    }
    let role = match &m.role {
        Role::Human => "user",
        Role::Ai => "assistant",
        Role::System => "system",
        Role::Tool | Role::Function => "tool",
        Role::Chat(role) => role.as_str(),
        Role::Remove => "remove",
    };
    json!({"role": role, "parts": parts})
}
