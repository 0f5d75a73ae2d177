//! The graphs and inputs of scenarios S4 (chat) and S5 (bigstate) of
//! `shared/bench/SCENARIOS.md`, built as `bench_langgraph.py` builds them. S6 reads the
//! S4 thread; S7 runs the S1 seed graph ([`crate::scenarios::seed`]).

use stategraph::channels::{BinaryOperatorAggregate, Channel, LastValue};
use stategraph::{list, map, reducers, update, DynState, StateGraph, Value, END, START};

use crate::scenarios::Input;

/// The number of nodes of the S5 chain.
pub const BIG_CHAIN_LEN: usize = 200;

/// The size of the S5 payload: 1 MiB.
pub const BIG_LEN: usize = 1 << 20;

/// The number of distinct message texts, as in Python's `msg_pool`.
const POOL_LEN: usize = 4096;

/// The length of a message text, which makes a `{role, content}` map about 200 bytes.
const CONTENT_LEN: usize = 165;

/// A small deterministic generator (64-bit LCG): the texts need a size, not Python's
/// exact letters.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % n as u64) as usize
    }

    fn text(&mut self, alphabet: &[u8], len: usize) -> String {
        (0..len)
            .map(|_| char::from(alphabet[self.below(alphabet.len())]))
            .collect()
    }
}

/// Python's `msg_pool`: 4096 texts of 165 random letters and spaces.
pub fn message_pool() -> Vec<String> {
    let alphabet = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ ";
    let mut rng = Lcg(42);
    (0..POOL_LEN)
        .map(|_| rng.text(alphabet, CONTENT_LEN))
        .collect()
}

/// The user messages of `turns` turns, drawn from the pool as Python draws them.
pub fn user_messages(pool: &[String], turns: usize) -> Vec<Value> {
    let mut rng = Lcg(7);
    (0..turns)
        .map(|_| map! { "role" => "user", "content" => pool[rng.below(pool.len())].as_str() })
        .collect()
}

/// The input of one S4 turn: the user's message appended to `messages`.
pub fn chat_input(message: &Value) -> Input {
    update([("messages", Value::list(vec![message.clone()]))])
}

/// S4 chat: `messages` is a list with an add reducer; `reply` appends the assistant's
/// message (`pool[len(messages) % len(pool)]`); `START -> reply -> END`.
pub fn chat(pool: Vec<String>) -> StateGraph<DynState> {
    let mut g = StateGraph::<DynState>::with_channels(vec![(
        "messages".into(),
        Box::new(BinaryOperatorAggregate::new(reducers::add(), Some(list![]))) as _,
    )]);
    let pool = std::sync::Arc::new(pool);
    g.add_node("reply", move |s: DynState| {
        let pool = pool.clone();
        async move {
            let n = s
                .get("messages")
                .and_then(Value::as_list)
                .map_or(0, <[Value]>::len);
            let content = pool[n % pool.len()].as_str();
            update([(
                "messages",
                list![map! { "role" => "assistant", "content" => content }],
            )])
        }
    });
    g.add_edge(START, "reply").add_edge("reply", END);
    g
}

/// S4′: the chat of [`chat`] with `messages` a DeltaChannel (snapshot every 100 updates,
/// LangGraph's default) as the Python driver's `chat_delta`; its messages use the key
/// `author` instead of `role` (the driver's, so that LangGraph keeps them plain dicts).
pub fn chat_delta(pool: Vec<String>) -> StateGraph<DynState> {
    let mut g = StateGraph::<DynState>::with_channels(vec![(
        "messages".into(),
        Box::new(stategraph::channels::DeltaChannel::from_pairwise(
            reducers::add(),
            100,
        )) as _,
    )]);
    let pool = std::sync::Arc::new(pool);
    g.add_node("reply", move |s: DynState| {
        let pool = pool.clone();
        async move {
            let n = s
                .get("messages")
                .and_then(Value::as_list)
                .map_or(0, <[Value]>::len);
            let content = pool[n % pool.len()].as_str();
            update([(
                "messages",
                list![map! { "author" => "assistant", "content" => content }],
            )])
        }
    });
    g.add_edge(START, "reply").add_edge("reply", END);
    g
}

/// The user messages of S4′: those of [`user_messages`] under the key `author`.
pub fn delta_user_messages(pool: &[String], turns: usize) -> Vec<Value> {
    let mut rng = Lcg(7);
    (0..turns)
        .map(|_| map! { "author" => "user", "content" => pool[rng.below(pool.len())].as_str() })
        .collect()
}

/// The 1 MiB ASCII payload of S5: random letters and digits, which TOAST cannot compress
/// much (as Python's).
pub fn big_string() -> String {
    let alphabet = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    Lcg(1).text(alphabet, BIG_LEN)
}

fn last_value() -> Box<dyn Channel> {
    Box::new(LastValue::new())
}

/// The node of the S5 chain: `counter + 1`.
async fn increment(s: DynState) -> Input {
    let counter = s.get("counter").and_then(Value::as_i64).unwrap_or(0);
    update([("counter", counter + 1)])
}

/// S5 bigstate: state `{big, counter}`, `n` nodes in a line each adding 1 to `counter`;
/// `big` is written by the input only.
pub fn big_chain(n: usize) -> StateGraph<DynState> {
    let mut g = StateGraph::<DynState>::with_channels(vec![
        ("big".into(), last_value()),
        ("counter".into(), last_value()),
    ]);
    let mut prev = START.to_owned();
    for i in 0..n {
        let name = format!("n{i}");
        g.add_node(name.as_str(), increment);
        g.add_edge(prev, name.as_str());
        prev = name;
    }
    g.add_edge(prev, END);
    g
}

/// The input of S5: `big` as the string itself (`str`) or wrapped in a map (`obj`, S5′).
pub fn big_input(big: &str, wrapped: bool) -> Input {
    let value = if wrapped {
        map! { "doc" => big }
    } else {
        Value::from(big)
    };
    update([("big", value), ("counter", Value::from(0))])
}
