//! The calls of `interop/interop_graphs.py` (`write` and `continue`) made by stategraph, and
//! what a thread must hold after `continue`, whichever side made it.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Value as J};
use stategraph::checkpoint::CheckpointSaver;
use stategraph::{
    list, map, update, Command, CompiledGraph, DynState, Map, Message, NoInput, Outcome, RunConfig,
    ToolCall, Value,
};

use super::graphs::compiled;
use super::render;

type Input = Vec<(String, Value)>;

/// The `PROFILE` of the Python script: every kind of data the serializer writes.
pub(crate) fn profile() -> Value {
    let mut m = Map::new();
    m.insert(
        "nested",
        map! { "deep" => map! {
            "list" => list![1, -2, 2.5, 1e-7, Value::Nil, true, "x"],
            "empty" => map! {},
            "none" => Value::Nil,
        }},
    );
    m.insert("raw", Value::bytes(vec![0x00, 0x01, 0xfe, 0xff]));
    m.insert("pair", list![1, "one"]);
    m.insert(
        "when",
        Value::datetime_iso("2025-03-04T05:06:07.890123+00:00"),
    );
    m.insert("naive", Value::datetime_iso("2024-02-29T23:59:59"));
    m.insert("offset", Value::datetime_iso("2025-01-01T12:00:00+05:30"));
    m.insert("day", Value::date(2025, 1, 31));
    m.insert("span", Value::timedelta(1, 5, 7));
    let uid = uuid::Uuid::parse_str("12345678-1234-5678-1234-567812345678").expect("uuid");
    m.insert("uid", Value::uuid(&uid));
    m.insert("tags", Value::set(vec!["alpha".into(), "beta".into()]));
    m.insert(
        "int_keys",
        Map::from_pairs(vec![
            (Value::Int(1), "one".into()),
            (Value::Int(2), "two".into()),
        ]),
    );
    m.insert("big", Value::UInt(u64::MAX));
    m.insert("neg", Value::Int(i64::MIN));
    m.insert("text", "héllo ✓ 😀");
    m.insert("empty", "");
    Value::Map(m)
}

/// The `FIRST_MESSAGES` of the Python script.
fn first_messages() -> Vec<Message> {
    let blocks = list![
        map! { "type" => "text", "text" => "see" },
        map! { "type" => "image_url", "image_url" => map! { "url" => "http://x/y.png" } },
    ];
    let mut call = Message::ai("")
        .with_id("ai-0")
        .with_tool_calls(vec![ToolCall::new(
            "lookup",
            map! { "q" => "x", "n" => 2 },
            "call-1",
        )]);
    call.response_metadata.insert("model_name", "fake");
    call.usage_metadata = Some(map! {
        "input_tokens" => 1, "output_tokens" => 2, "total_tokens" => 3,
    });
    vec![
        Message::system("be brief").with_id("sys-1"),
        Message::human(blocks).with_id("h-0"),
        call,
        Message::tool("42", "call-1").with_id("tool-1"),
        Message::human("hello").with_id("h-1").with_name("ada"),
    ]
}

fn cfg(thread: &str) -> RunConfig {
    RunConfig::thread(thread)
}

fn msgs(list: Vec<Message>) -> Value {
    Value::List(list.iter().map(Message::to_value).collect())
}

/// An output as the script renders `invoke`'s: the values, and `__interrupt__` if any.
fn output(out: &Outcome<DynState>) -> J {
    let mut j = render::value(&Value::Map(
        out.values
            .iter()
            .map(|(k, v)| (Value::from(k.as_str()), v.clone()))
            .collect(),
    ));
    if !out.interrupts.is_empty() {
        j["__interrupt__"] = out
            .interrupts
            .iter()
            .map(|i| render::value(&i.to_value()))
            .collect();
    }
    render::normalize(&j)
}

async fn run(g: &CompiledGraph<DynState>, input: Input, thread: &str) -> J {
    output(&g.invoke(input, &cfg(thread)).await.expect("runs"))
}

async fn resume(g: &CompiledGraph<DynState>, answer: &str, thread: &str) -> J {
    let cmd = Command::resume(answer);
    output(&g.invoke(cmd, &cfg(thread)).await.expect("resumes"))
}

async fn proceed(g: &CompiledGraph<DynState>, config: &RunConfig) -> J {
    output(&g.invoke(NoInput, config).await.expect("continues"))
}

/// The script's `write`: the first calls on every thread, leaving int-1, int-2 and sub-2
/// interrupted. Returns the last output of each thread.
pub(crate) async fn write(saver: &Arc<dyn CheckpointSaver>) -> BTreeMap<&'static str, J> {
    let mut out = BTreeMap::new();
    let g = compiled("chain", saver);
    run(
        &g,
        update([("value", Value::from("")), ("trail", list![])]),
        "chain",
    )
    .await;
    run(&g, update([("value", "x")]), "chain").await;
    let patch = update([("value", Value::from("patched")), ("trail", list!["u"])]);
    g.update_state(&cfg("chain"), patch, Some("b"))
        .await
        .expect("update_state");
    out.insert("chain", proceed(&g, &cfg("chain")).await);

    let g = compiled("cond", saver);
    run(
        &g,
        update([("n", Value::from(0)), ("done", false.into())]),
        "cond",
    )
    .await;
    let history = g
        .get_state_history(&cfg("cond"), &Default::default())
        .await
        .expect("history");
    let step1 = history
        .iter()
        .find(|s| s.metadata.as_ref().and_then(|m| m.step) == Some(1))
        .and_then(|s| s.config.as_ref())
        .and_then(|c| c.checkpoint_id.clone())
        .expect("a step-1 checkpoint");
    out.insert("cond", proceed(&g, &cfg("cond").at_checkpoint(step1)).await);

    let g = compiled("int-1", saver);
    out.insert(
        "int-1",
        run(&g, update([("question", "name?")]), "int-1").await,
    );
    let before = cfg("int-2").interrupt_before(["ask"]);
    let first = g
        .invoke(update([("question", "colour?")]), &before)
        .await
        .expect("static interrupt");
    out.insert("int-2", output(&first));

    let g = compiled("sub-1", saver);
    let input = |ask: bool| update([("text", Value::from("start")), ("ask", ask.into())]);
    out.insert("sub-1", run(&g, input(false), "sub-1").await);
    out.insert("sub-2", run(&g, input(true), "sub-2").await);

    let g = compiled("fan", saver);
    let input = update([("topics", list!["x", "y", "z"]), ("results", list![])]);
    out.insert("fan", run(&g, input, "fan").await);
    let g = compiled("join", saver);
    out.insert("join", run(&g, update([("log", list![])]), "join").await);

    let g = compiled("chat", saver);
    let input = update([
        ("messages", msgs(first_messages())),
        ("profile", profile()),
        ("turns", Value::from(0)),
        ("score", Value::from(1.0)),
    ]);
    run(&g, input, "chat").await;
    let again = msgs(vec![Message::human("again").with_id("h-2")]);
    out.insert("chat", run(&g, update([("messages", again)]), "chat").await);
    let remove = update([("messages", msgs(vec![Message::remove("sys-1")]))]);
    g.update_state(&cfg("chat"), remove, Some("bot"))
        .await
        .expect("update_state");
    out
}

/// The script's `continue`: one more call on every thread. Returns each call's output.
pub(crate) async fn take_further(saver: &Arc<dyn CheckpointSaver>) -> BTreeMap<&'static str, J> {
    let mut out = BTreeMap::new();
    let g = compiled("chain", saver);
    let patch = update([("value", Value::from("more")), ("trail", list!["u2"])]);
    g.update_state(&cfg("chain"), patch, Some("b"))
        .await
        .expect("update_state");
    out.insert("chain", proceed(&g, &cfg("chain")).await);
    let g = compiled("cond", saver);
    let input = update([("n", Value::from(1)), ("done", false.into())]);
    out.insert("cond", run(&g, input, "cond").await);
    let g = compiled("int-1", saver);
    out.insert("int-1", resume(&g, "Grace", "int-1").await);
    out.insert("int-2", proceed(&g, &cfg("int-2")).await);
    let g = compiled("sub-1", saver);
    let input = update([("text", Value::from("again")), ("ask", false.into())]);
    out.insert("sub-1", run(&g, input, "sub-1").await);
    out.insert("sub-2", resume(&g, "yes", "sub-2").await);
    let g = compiled("fan", saver);
    let input = update([("topics", list!["q"]), ("results", list![])]);
    out.insert("fan", run(&g, input, "fan").await);
    let g = compiled("join", saver);
    out.insert(
        "join",
        run(&g, update([("log", list!["again"])]), "join").await,
    );
    let g = compiled("chat", saver);
    let more = msgs(vec![Message::human("one more").with_id("h-3")]);
    out.insert("chat", run(&g, update([("messages", more)]), "chat").await);
    out
}

/// How many checkpoints `continue` adds to each thread's root history (int-2 stops on
/// the dynamic interrupt of the step it was already at: no new checkpoint, a new write).
pub(crate) fn growth(thread: &str) -> usize {
    match thread {
        "chain" | "int-1" | "sub-2" => 2,
        "chat" => 3,
        "cond" | "fan" | "join" => 4,
        "sub-1" => 5,
        "int-2" => 0,
        other => panic!("no thread {other}"),
    }
}

/// Asserts the outputs of `continue` (made by either side) are what the graphs compute from
/// the state `write` left: the values that prove the continuation read that state.
pub(crate) fn assert_continued(out: &BTreeMap<&'static str, J>) {
    assert_eq!(out["chain"]["value"], "morec");
    let trail = json!(["a", "b", "c", "a", "b", "c", "u", "c", "u2", "c"]);
    assert_eq!(out["chain"]["trail"], trail);
    assert_eq!(out["cond"], json!({"n": 2, "done": true}));
    assert_eq!(out["int-1"]["greeting"], "Hello Grace");
    assert_eq!(out["int-2"]["question"], "colour?");
    assert_eq!(
        out["int-2"]["__interrupt__"][0]["value"],
        json!({"question": "colour?"})
    );
    assert_eq!(out["sub-1"]["text"], "again|pre|inner1|inner2|post");
    assert_eq!(out["sub-2"]["text"], "start|pre|inner1|inner2(yes)|post");
    assert_eq!(out["fan"]["summary"], "X,Y,Z,Q");
    let log = json!(["left", "right", "join", "again", "left", "right", "join"]);
    assert_eq!(out["join"]["log"], log);
    let chat = &out["chat"];
    assert_eq!(chat["turns"], 3);
    assert_eq!(chat["score"], json!(2.5));
    let mut profile = render::normalize(&render::value(&profile()));
    profile["turns"] = J::from(3);
    assert_eq!(chat["profile"], profile);
    let messages = chat["messages"].as_array().expect("messages");
    let seen: Vec<(&str, &str)> = messages
        .iter()
        .skip(3)
        .map(|m| {
            (
                m["type"].as_str().expect("type"),
                m["content"].as_str().expect("content"),
            )
        })
        .collect();
    let ids: Vec<&str> = messages
        .iter()
        .map(|m| m["id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids[..4], ["h-0", "ai-0", "tool-1", "h-1"], "sys-1 removed");
    assert_eq!(
        messages[1]["tool_calls"][0]["args"],
        json!({"q": "x", "n": 2})
    );
    assert_eq!(
        seen,
        [
            ("human", "hello"),
            ("ai", "echo: hello"),
            ("human", "again"),
            ("ai", "echo: again"),
            ("human", "one more"),
            ("ai", "echo: one more"),
        ],
        "three turns"
    );
}
