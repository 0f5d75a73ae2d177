//! The scenarios of tests/interop/create_agent_mwc.py: the agents' answers, tools and
//! middleware, as the script has them.

use std::sync::Arc;

use async_trait::async_trait;
use stategraph::checkpoint::CheckpointSaver;
use stategraph::prebuilt::agent::{
    create_agent, Choice, ChoiceAnswer, DecisionModel, LlmToolEmulator, LlmToolSelectorMiddleware,
    Middleware, ModelChoice, ModelRouterMiddleware, OnParsingFailure, TodoListMiddleware,
};
use stategraph::prebuilt::Tool;
use stategraph::{list, map, CompiledGraph, DynState, Message, ToolCall, Value};
use stategraph::{NodeContext, NodeError};

use super::harness::{message_view, Log, Recorder};

fn add_tool() -> Tool {
    Tool::new(
        "add",
        "Add two integers.",
        |a: serde_json::Value| async move {
            Ok::<_, stategraph::prebuilt::ToolError>(
                a["a"].as_i64().unwrap_or(0) + a["b"].as_i64().unwrap_or(0),
            )
        },
    )
    .with_schema(serde_json::json!({
        "description": "Add two integers.",
        "properties": {"a": {"title": "A", "type": "integer"}, "b": {"title": "B", "type": "integer"}},
        "required": ["a", "b"],
        "title": "add",
        "type": "object",
    }))
}

fn int_tool(name: &'static str, description: &'static str, f: fn(i64, i64) -> i64) -> Tool {
    Tool::new(name, description, move |a: serde_json::Value| async move {
        Ok::<_, stategraph::prebuilt::ToolError>(f(
            a["a"].as_i64().unwrap_or(0),
            a["b"].as_i64().unwrap_or(0),
        ))
    })
    .with_schema(serde_json::json!({
        "description": description,
        "properties": {"a": {"title": "A", "type": "integer"}, "b": {"title": "B", "type": "integer"}},
        "required": ["a", "b"],
        "title": name,
        "type": "object",
    }))
}

/// The script's `add`, `mul` and `shout`.
fn three_tools() -> Vec<Tool> {
    let shout = Tool::new(
        "shout",
        "Shout a text.",
        |a: serde_json::Value| async move {
            Ok::<_, stategraph::prebuilt::ToolError>(
                a["text"].as_str().unwrap_or("").to_uppercase(),
            )
        },
    )
    .with_schema(serde_json::json!({
        "description": "Shout a text.",
        "properties": {"text": {"title": "Text", "type": "string"}},
        "required": ["text"],
        "title": "shout",
        "type": "object",
    }));
    vec![
        int_tool("add", "Add two integers.", |a, b| a + b),
        int_tool("mul", "Multiply two integers.", |a, b| a * b),
        shout,
    ]
}

/// A selection model's answer picking `names`.
fn select(names: &[&str]) -> Message {
    let names: Vec<Value> = names.iter().map(|n| Value::from(*n)).collect();
    let call = ToolCall::new(
        "ToolSelectionResponse",
        map! {"tools" => Value::list(names)},
        "sel",
    );
    Message::ai("").with_tool_calls(vec![call])
}

fn todo_call(i: u32, todos: Value) -> ToolCall {
    ToolCall::new("write_todos", map! {"todos" => todos}, format!("todo-{i}"))
}

fn plan() -> Value {
    list![
        map! {"content" => "Add 1 and 2", "status" => "in_progress", "note" => "dropped"},
        map! {"content" => "Answer", "status" => "pending"},
    ]
}

fn done() -> Value {
    list![
        map! {"content" => "Add 1 and 2", "status" => "completed"},
        map! {"status" => "in_progress", "content" => "Answer"},
    ]
}

fn add_call() -> ToolCall {
    ToolCall::new("add", map! {"a" => 1, "b" => 2}, "call-1")
}

/// A scenario of the Python script: the agent's answers, its middleware and prompt, its
/// tools, and the logs of the middleware's models.
struct Scenario {
    answers: Vec<Message>,
    middleware: Vec<Arc<dyn Middleware>>,
    prompt: Option<&'static str>,
    tools: Vec<Tool>,
    logs: Vec<(&'static str, Log)>,
}

/// The agent's answers, the middleware model's, and the agent's prompt.
type Answers = (Vec<Message>, Vec<Message>, Option<&'static str>);

fn answers(name: &str) -> Answers {
    let ai = |text: &str, id: &str, calls: Vec<ToolCall>| {
        Message::ai(text).with_id(id).with_tool_calls(calls)
    };
    let mul = ToolCall::new("mul", map! {"a" => 6, "b" => 7}, "call-2");
    let answer = ai("Done.", "ai-9", vec![]);
    match name {
        "select" => (
            vec![ai("", "ai-1", vec![mul.clone()]), answer],
            vec![
                select(&["mul", "add"]),
                Message::ai("no idea"),
                select(&["add", "mul"]),
            ],
            Some("You compute."),
        ),
        "select_agent_model" => (
            vec![
                select(&["add", "add", "shout"]),
                ai("", "ai-1", vec![add_call()]),
                select(&[]),
                answer,
            ],
            vec![],
            None,
        ),
        "select_fallback" => (vec![answer], vec![Message::ai("?")], None),
        "select_fallback_list" => {
            let other = ToolCall::new("other", map! {}, "x");
            let answers = vec![
                Message::ai("?"),
                Message::ai("").with_tool_calls(vec![other]),
                Message::ai(""),
            ];
            (vec![answer], answers, None)
        }
        "select_malformed" => {
            let bad = ToolCall::new("ToolSelectionResponse", map! {"tools" => "add"}, "x");
            (
                vec![answer],
                vec![Message::ai("?"), Message::ai("").with_tool_calls(vec![bad])],
                None,
            )
        }
        "select_invalid" => {
            let names = list!["add", "nope", 3];
            let call = ToolCall::new("ToolSelectionResponse", map! {"tools" => names}, "sel");
            (
                vec![answer],
                vec![Message::ai("").with_tool_calls(vec![call])],
                None,
            )
        }
        "select_missing" => (vec![answer], vec![], None),
        "emulate" => (
            vec![ai("", "ai-1", vec![add_call(), mul]), answer],
            vec![Message::ai("The product is 42.")],
            None,
        ),
        "emulate_all" => {
            let weather = ToolCall::new(
                "weather",
                map! {"city" => "Paris", "days" => list![1, 2]},
                "call-3",
            );
            let sunny = Message::ai(list![map! {"type" => "text", "text" => "Sunny."}]);
            (
                vec![ai("", "ai-1", vec![weather]), answer],
                vec![sunny],
                None,
            )
        }
        other => panic!("no scenario {other}"),
    }
}

/// The script's `Classifier`: picks `smart`, recording what it is asked.
pub(crate) struct Classifier(pub(crate) Log);

#[async_trait]
impl DecisionModel for Classifier {
    async fn choose(
        &self,
        state: &Message,
        question: &Choice,
        _: &NodeContext,
    ) -> Result<ChoiceAnswer, NodeError> {
        let asked = serde_json::json!({"model_route": question.to_value().to_json()});
        let call = serde_json::json!({"state": message_view(state), "questions": asked});
        self.0.lock().push(call);
        Ok(ChoiceAnswer {
            choice: "smart".into(),
            probabilities: vec![("fast".into(), 0.25), ("smart".into(), 0.75)],
            confidence: 0.75,
        })
    }
}

/// The `route` scenario: `fast` and `smart`, the classifier picking `smart`.
fn route_scenario() -> Scenario {
    let (fast, fast_log) = Recorder::new(vec![]);
    let (smart, smart_log) = Recorder::new(vec![
        Message::ai("")
            .with_id("ai-1")
            .with_tool_calls(vec![add_call()]),
        Message::ai("Done.").with_id("ai-9"),
    ]);
    let classifier_log = Log::default();
    let criteria = map! {"when" => list!["hard", "long"], "cost" => 2};
    let choices = [
        ("fast", ModelChoice::new(fast, "Simple tasks.")),
        ("smart", ModelChoice::new(smart, criteria)),
    ];
    let instructions = "Pick the cheapest model that fits.";
    let router =
        ModelRouterMiddleware::new(choices, instructions, Classifier(classifier_log.clone()))
            .unwrap();
    Scenario {
        answers: vec![],
        middleware: vec![Arc::new(router)],
        prompt: Some("You compute."),
        tools: three_tools(),
        logs: vec![
            ("fast", fast_log),
            ("smart", smart_log),
            ("classifier", classifier_log),
        ],
    }
}

fn scenario(name: &str) -> Scenario {
    if name.starts_with("todo") {
        return todo_scenario(name);
    }
    if name == "route" {
        return route_scenario();
    }
    let (answers, model_answers, prompt) = answers(name);
    let (model, log) = Recorder::new(model_answers);
    let selector = LlmToolSelectorMiddleware::new().model(model.clone());
    let emulator = LlmToolEmulator::new(model);
    let (m, label): (Arc<dyn Middleware>, _) = match name {
        "select" => (
            Arc::new(selector.max_tools(1).always_include(["shout"])),
            "selector",
        ),
        "select_agent_model" => (
            Arc::new(LlmToolSelectorMiddleware::new().system_prompt("Pick tools.")),
            "",
        ),
        "select_fallback" => (
            Arc::new(
                selector
                    .max_tools(1)
                    .max_retries(0)
                    .on_parsing_failure(OnParsingFailure::All),
            ),
            "selector",
        ),
        "select_fallback_list" => {
            let names = OnParsingFailure::Tools(vec!["shout".into(), "add".into()]);
            (
                Arc::new(selector.max_retries(2).on_parsing_failure(names)),
                "selector",
            )
        }
        "select_missing" => (
            Arc::new(selector.always_include(["nope", "add"])),
            "selector",
        ),
        "emulate" => (Arc::new(emulator.tools(["mul"])), "emulator"),
        "emulate_all" => (Arc::new(emulator), "emulator"),
        _ => (Arc::new(selector), "selector"),
    };
    let logs = if label.is_empty() {
        vec![]
    } else {
        vec![(label, log)]
    };
    Scenario {
        answers,
        middleware: vec![m],
        prompt,
        tools: three_tools(),
        logs,
    }
}

fn todo_scenario(name: &str) -> Scenario {
    let ai = |text: &str, id: &str, calls: Vec<ToolCall>| {
        Message::ai(text).with_id(id).with_tool_calls(calls)
    };
    let todo: Arc<dyn Middleware> = Arc::new(TodoListMiddleware::new());
    match name {
        "todo" => Scenario {
            answers: vec![
                ai("", "ai-1", vec![todo_call(1, plan())]),
                ai("Adding.", "ai-2", vec![add_call(), todo_call(2, done())]),
                ai("1 + 2 = 3.", "ai-3", vec![]),
            ],
            middleware: vec![todo],
            prompt: Some("You add numbers."),
            tools: vec![add_tool()],
            logs: vec![],
        },
        "todo_parallel" => Scenario {
            answers: vec![
                ai(
                    "",
                    "ai-1",
                    vec![todo_call(1, plan()), todo_call(2, done()), add_call()],
                ),
                ai("3.", "ai-2", vec![]),
            ],
            middleware: vec![Arc::new(
                TodoListMiddleware::new()
                    .system_prompt("Plan first.")
                    .tool_description("Write the plan."),
            )],
            prompt: None,
            tools: vec![add_tool()],
            logs: vec![],
        },
        "todo_bad" => {
            let bad = list![
                map! {"content" => "x", "status" => "done"},
                map! {"status" => "pending"},
                7
            ];
            let not_list = ToolCall::new("write_todos", map! {"todos" => "x"}, "todo-2");
            Scenario {
                answers: vec![
                    ai("", "ai-1", vec![todo_call(1, bad)]),
                    ai("", "ai-2", vec![not_list]),
                    ai("ok", "ai-3", vec![]),
                ],
                middleware: vec![todo],
                prompt: Some("You add numbers."),
                tools: vec![add_tool()],
                logs: vec![],
            }
        }
        other => panic!("no scenario {other}"),
    }
}

/// The agent of `scenario` on `saver`, with the logs of what each model was sent.
pub(crate) fn agent(
    name: &str,
    saver: Arc<dyn CheckpointSaver>,
) -> (CompiledGraph<DynState>, Vec<(&'static str, Log)>) {
    let s = scenario(name);
    let (model, log) = Recorder::new(s.answers);
    let mut logs = vec![("agent", log)];
    logs.extend(s.logs);
    let mut b = create_agent(model, s.tools).checkpointer(saver);
    if let Some(prompt) = s.prompt {
        b = b.system_prompt(prompt);
    }
    for m in s.middleware {
        b = b.middleware_arc(m);
    }
    (b.compile().unwrap(), logs)
}
