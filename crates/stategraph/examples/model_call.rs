//! One model call from the command line, for scripts:
//!
//! ```sh
//! cargo run --release -p stategraph --example model_call -- \
//!     --provider openai|anthropic --base-url URL --model M [--stream] [--tools tools.json] "prompt"
//! ```
//!
//! `--base-url` follows each provider's convention: for OpenAI it includes `/v1` (as
//! `OPENAI_BASE_URL`) and the request goes to `{base}/chat/completions`; for Anthropic it
//! is the bare host (as `ANTHROPIC_BASE_URL`) and the request goes to `{base}/v1/messages`.
//! Without it, the environment's base URL (or the provider's own host) is used; keys come
//! from `OPENAI_API_KEY` / `ANTHROPIC_API_KEY` (or `--api-key`). `tools.json` is a JSON
//! list of OpenAI-style function tools. Other flags: `--temperature T`, `--max-tokens N`,
//! `--seed N` (OpenAI), `--timeout SECS`.
//!
//! With `--stream` the text is printed as it arrives. The last line of stdout is the AI
//! message as one compact JSON object: `{"content", "tool_calls": [{"name", "args",
//! "id"}], "usage_metadata", "response_metadata"}`. A failure prints the typed error
//! (HTTP status, the provider's error type and message) on stderr, a JSON
//! `{"error": {...}}` line on stdout, and exits with status 1 (2 for bad arguments).

use std::io::Write;
use std::time::Duration;

use serde_json::json;
use stategraph::models::{ChatAnthropic, ChatOpenAI, ModelError, ToolSpec};
use stategraph::{Message, Value};

/// The parsed command line.
#[derive(Default)]
struct Args {
    provider: String,
    base_url: Option<String>,
    model: String,
    api_key: Option<String>,
    stream: bool,
    tools: Option<String>,
    temperature: Option<f64>,
    max_tokens: Option<u32>,
    seed: Option<i64>,
    timeout: Option<f64>,
    prompt: String,
}

const USAGE: &str = "usage: model_call --provider openai|anthropic [--base-url URL] --model M \
[--stream] [--tools tools.json] [--api-key K] [--temperature T] [--max-tokens N] [--seed N] \
[--timeout SECS] \"prompt\"";

fn parse_args() -> Result<Args, String> {
    let mut args = Args::default();
    let mut it = std::env::args().skip(1);
    let mut prompt: Vec<String> = Vec::new();
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match a.as_str() {
            "--provider" => args.provider = value("--provider")?,
            "--base-url" => args.base_url = Some(value("--base-url")?),
            "--model" => args.model = value("--model")?,
            "--api-key" => args.api_key = Some(value("--api-key")?),
            "--stream" => args.stream = true,
            "--tools" => args.tools = Some(value("--tools")?),
            "--temperature" => args.temperature = Some(number(&value("--temperature")?)?),
            "--max-tokens" => args.max_tokens = Some(number(&value("--max-tokens")?)?),
            "--seed" => args.seed = Some(number(&value("--seed")?)?),
            "--timeout" => args.timeout = Some(number(&value("--timeout")?)?),
            "-h" | "--help" => return Err(String::new()),
            flag if flag.starts_with("--") => return Err(format!("unknown flag {flag}")),
            _ => prompt.push(a),
        }
    }
    if !matches!(args.provider.as_str(), "openai" | "anthropic") {
        return Err("--provider must be openai or anthropic".into());
    }
    if args.model.is_empty() {
        return Err("--model is required".into());
    }
    if prompt.is_empty() {
        return Err("the prompt is missing".into());
    }
    args.prompt = prompt.join(" ");
    Ok(args)
}

fn number<T: std::str::FromStr>(s: &str) -> Result<T, String> {
    s.parse().map_err(|_| format!("not a number: {s}"))
}

fn read_tools(path: &str) -> Result<Vec<ToolSpec>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let list: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{path} is not JSON: {e}"))?;
    let items = list
        .as_array()
        .ok_or_else(|| format!("{path} is not a JSON list"))?;
    items
        .iter()
        .map(|t| ToolSpec::from_openai_json(t).map_err(|e| e.to_string()))
        .collect()
}

/// The printed form of the answer.
fn summary(m: &Message) -> serde_json::Value {
    let calls: Vec<serde_json::Value> = m
        .tool_calls
        .iter()
        .map(|c| json!({"name": c.name, "args": c.args.to_json(), "id": c.id}))
        .collect();
    json!({
        "content": m.content.to_json(),
        "tool_calls": calls,
        "usage_metadata": m.usage_metadata.as_ref().map_or(serde_json::Value::Null, Value::to_json),
        "response_metadata": Value::Map(m.response_metadata.clone()).to_json(),
    })
}

/// Prints each text delta of a streamed answer as it comes.
fn print_chunk(chunk: &Message) {
    let text = chunk.text();
    if !text.is_empty() {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }
}

async fn call(args: &Args, tools: Vec<ToolSpec>) -> Result<Message, ModelError> {
    let messages = [Message::human(args.prompt.as_str())];
    let timeout = args.timeout.map(Duration::from_secs_f64);
    if args.provider == "openai" {
        let mut m = ChatOpenAI::new(&args.model).bind_tool_specs(tools);
        if let Some(u) = &args.base_url {
            m = m.base_url(u);
        }
        if let Some(k) = &args.api_key {
            m = m.api_key(k);
        }
        if let Some(t) = args.temperature {
            m = m.temperature(t);
        }
        if let Some(n) = args.max_tokens {
            m = m.max_tokens(n);
        }
        if let Some(s) = args.seed {
            m = m.seed(s);
        }
        if let Some(t) = timeout {
            m = m.timeout(t);
        }
        if args.stream {
            m.stream_to(&messages, print_chunk).await
        } else {
            m.call(&messages, false).await
        }
    } else {
        let mut m = ChatAnthropic::new(&args.model).bind_tool_specs(tools);
        if let Some(u) = &args.base_url {
            m = m.base_url(u);
        }
        if let Some(k) = &args.api_key {
            m = m.api_key(k);
        }
        if let Some(t) = args.temperature {
            m = m.temperature(t);
        }
        if let Some(n) = args.max_tokens {
            m = m.max_tokens(n);
        }
        if let Some(t) = timeout {
            m = m.timeout(t);
        }
        if args.stream {
            m.stream_to(&messages, print_chunk).await
        } else {
            m.call(&messages, false).await
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(why) => {
            if !why.is_empty() {
                eprintln!("model_call: {why}");
            }
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
    };
    let tools = match args.tools.as_deref().map(read_tools).transpose() {
        Ok(t) => t.unwrap_or_default(),
        Err(why) => {
            eprintln!("model_call: {why}");
            std::process::exit(2);
        }
    };
    match call(&args, tools).await {
        Ok(m) => {
            if args.stream {
                println!();
            }
            println!("{}", summary(&m));
        }
        Err(e) => {
            eprintln!("model_call: error: {e}");
            let error = json!({"error": {
                "kind": format!("{:?}", e.kind), "status": e.status,
                "type": e.error_type, "message": e.message,
            }});
            println!("{error}");
            std::process::exit(1);
        }
    }
}
