//! The control-flow values nodes and callers use: `Send`, `Command`, `Interrupt`.

use stategraph_checkpoint::{Ext, Map, ObjectCode, Value};

/// Runs `node` in the next super-step with `arg` as its input (map-reduce fan-out).
#[derive(Clone, Debug, PartialEq)]
pub struct Send {
    /// The node to run.
    pub node: String,
    /// Its input (not the graph state).
    pub arg: Value,
}

impl Send {
    /// A packet for `node` with input `arg`.
    pub fn new(node: impl Into<String>, arg: impl Into<Value>) -> Send {
        Send {
            node: node.into(),
            arg: arg.into(),
        }
    }

    /// The stored form: `langgraph.types.Send` as msgpack extension 1
    /// (docs/format.md#value-encoding).
    pub fn to_value(&self) -> Value {
        Value::from(Ext::object(
            ObjectCode::ConstructorPosArgs,
            "langgraph.types",
            "Send",
            Value::list(vec![Value::from(self.node.as_str()), self.arg.clone()]),
            None,
        ))
    }

    /// Reads a stored `Send`.
    pub fn from_value(v: &Value) -> Option<Send> {
        let o = v.as_ext()?.as_object()?;
        if o.class != "Send" {
            return None;
        }
        let args = o.data.as_list()?;
        Some(Send {
            node: args.first()?.as_str()?.to_owned(),
            arg: args.get(1).cloned().unwrap_or_default(),
        })
    }
}

/// Where a [`Command`] sends control.
#[derive(Clone, Debug, PartialEq)]
pub enum Goto {
    /// A node by name (`END` = `"__end__"` goes nowhere).
    Node(String),
    /// A [`Send`] packet.
    Send(Send),
}

impl From<&str> for Goto {
    fn from(s: &str) -> Goto {
        Goto::Node(s.to_owned())
    }
}

impl From<String> for Goto {
    fn from(s: String) -> Goto {
        Goto::Node(s)
    }
}

impl From<Send> for Goto {
    fn from(s: Send) -> Goto {
        Goto::Send(s)
    }
}

/// The answer to pending interrupts.
#[derive(Clone, Debug, PartialEq)]
pub enum Resume {
    /// One value: answers the only pending interrupt.
    Value(Value),
    /// Interrupt id to value.
    ById(Vec<(String, Value)>),
}

/// Update the state and choose where to go, from a node or as input
/// (docs/runtime.md#command-and-send).
#[derive(Clone, Debug, PartialEq)]
pub struct Command<U = Vec<(String, Value)>> {
    /// `Some("__parent__")` sends the command to the parent graph.
    pub graph: Option<String>,
    /// The state update.
    pub update: Option<U>,
    /// The answer to pending interrupts (input only).
    pub resume: Option<Resume>,
    /// Where to go next.
    pub goto: Vec<Goto>,
}

impl<U> Default for Command<U> {
    fn default() -> Self {
        Command {
            graph: None,
            update: None,
            resume: None,
            goto: Vec::new(),
        }
    }
}

impl<U> Command<U> {
    /// A command that updates the state.
    pub fn update(update: U) -> Self {
        Command {
            update: Some(update),
            ..Default::default()
        }
    }

    /// A command that goes to `target`.
    pub fn goto(target: impl Into<Goto>) -> Self {
        Command {
            goto: vec![target.into()],
            ..Default::default()
        }
    }

    /// Sets the answer to the pending interrupt (builder style): with
    /// [`Command::update`] it resumes and updates the state in one input.
    pub fn with_resume(mut self, value: impl Into<Value>) -> Self {
        self.resume = Some(Resume::Value(value.into()));
        self
    }

    /// Sets the answers to several pending interrupts by interrupt id (builder style).
    pub fn with_resume_by_id<I, K, V>(mut self, answers: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<Value>,
    {
        self.resume = Some(Resume::ById(
            answers
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        ));
        self
    }

    /// Adds a goto target (builder style).
    pub fn and_goto(mut self, target: impl Into<Goto>) -> Self {
        self.goto.push(target.into());
        self
    }

    /// Sets the update (builder style).
    pub fn with_update(mut self, update: U) -> Self {
        self.update = Some(update);
        self
    }

    /// Addresses the parent graph (builder style).
    pub fn to_parent(mut self) -> Self {
        self.graph = Some(PARENT.to_owned());
        self
    }
}

impl Command<Vec<(String, Value)>> {
    /// A command that answers the pending interrupt with `value` (LangGraph's
    /// `Command(resume=value)`). Needs no type annotation: the update type is the untyped
    /// list of writes; to resume and update a typed state at once, write
    /// `Command::update(u).with_resume(value)`.
    ///
    /// ```
    /// let input = stategraph::Command::resume("yes");
    /// # let _ = input;
    /// ```
    pub fn resume(value: impl Into<Value>) -> Self {
        Command {
            resume: Some(Resume::Value(value.into())),
            ..Default::default()
        }
    }

    /// A command that answers several pending interrupts, each by its id.
    pub fn resume_by_id<I, K, V>(answers: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<Value>,
    {
        Command::default().with_resume_by_id(answers)
    }

    /// The stored form: `langgraph.types.Command`, a dataclass (msgpack extension 2) with
    /// fields `graph, update, resume, goto`. A single goto target is stored bare, several
    /// as a list, as a Python caller usually writes them.
    pub fn to_value(&self) -> Value {
        let mut m = Map::with_capacity(4);
        m.insert(
            "graph",
            self.graph.as_deref().map(Value::from).unwrap_or_default(),
        );
        m.insert(
            "update",
            match &self.update {
                Some(u) => Value::Map(u.iter().map(|(k, v)| (Value::from(k), v.clone())).collect()),
                None => Value::Nil,
            },
        );
        m.insert(
            "resume",
            match &self.resume {
                None => Value::Nil,
                Some(Resume::Value(v)) => v.clone(),
                Some(Resume::ById(map)) => Value::Map(
                    map.iter()
                        .map(|(k, v)| (Value::from(k), v.clone()))
                        .collect(),
                ),
            },
        );
        let goto_value = |g: &Goto| match g {
            Goto::Node(n) => Value::from(n.as_str()),
            Goto::Send(s) => s.to_value(),
        };
        m.insert(
            "goto",
            match self.goto.as_slice() {
                [one] => goto_value(one),
                many => Value::List(many.iter().map(goto_value).collect()),
            },
        );
        Value::from(Ext::object(
            ObjectCode::ConstructorKwArgs,
            "langgraph.types",
            "Command",
            Value::Map(m),
            None,
        ))
    }

    /// Reads a stored `Command` (graph, update, goto; a stored resume is kept as a value).
    pub fn from_value(v: &Value) -> Option<Self> {
        let o = v.as_ext()?.as_object()?;
        if o.class != "Command" || o.module != "langgraph.types" {
            return None;
        }
        let update = match o.data.get("update") {
            Some(Value::Map(m)) => Some(
                m.iter()
                    .filter_map(|(k, v)| Some((k.as_str()?.to_owned(), v.clone())))
                    .collect(),
            ),
            _ => None,
        };
        let goto_of = |g: &Value| -> Option<Goto> {
            match g {
                Value::Str(s) => Some(Goto::Node(s.to_string())),
                other => Send::from_value(other).map(Goto::Send),
            }
        };
        let goto = match o.data.get("goto") {
            Some(Value::List(items)) => items.iter().filter_map(goto_of).collect(),
            Some(Value::Nil) | None => Vec::new(),
            Some(one) => goto_of(one).into_iter().collect(),
        };
        Some(Command {
            graph: o
                .data
                .get("graph")
                .and_then(Value::as_str)
                .map(str::to_owned),
            update,
            resume: o
                .data
                .get("resume")
                .filter(|r| !r.is_nil())
                .map(|r| Resume::Value(r.clone())),
            goto,
        })
    }
}

/// `Command.PARENT`.
pub const PARENT: &str = "__parent__";

/// A pause requested by a node: the value shown to the human, the interrupt id, and the
/// schema of the answer the node expects, if it gave one (LangGraph 1.2's
/// `Interrupt.response_schema`).
#[derive(Clone, Debug, PartialEq)]
pub struct Interrupt {
    /// What the node asked.
    pub value: Value,
    /// The id to resume it by (32 hex characters).
    pub id: String,
    /// The JSON Schema of the expected resume value, as given to
    /// [`NodeContext::interrupt_with`](crate::NodeContext::interrupt_with) (Python's
    /// `interrupt(value, response_schema=...)`); `None` when the node gave none. It is
    /// stored and shown as is; the resume value is not checked against it (as Python
    /// does for a schema given as a dict).
    pub response_schema: Option<Value>,
}

impl Interrupt {
    /// An interrupt asking `value`, resumed by `id`, without a response schema.
    pub fn new(value: impl Into<Value>, id: impl Into<String>) -> Interrupt {
        Interrupt {
            value: value.into(),
            id: id.into(),
            response_schema: None,
        }
    }

    /// Sets the JSON Schema of the expected answer (builder style).
    pub fn with_response_schema(mut self, schema: impl Into<Value>) -> Interrupt {
        self.response_schema = Some(schema.into());
        self
    }

    /// The stored form: `langgraph.types.Interrupt` as msgpack extension 2.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("value", self.value.clone());
        m.insert("id", self.id.as_str());
        m.insert(
            "response_schema",
            self.response_schema.clone().unwrap_or_default(),
        );
        Value::from(Ext::object(
            ObjectCode::ConstructorKwArgs,
            "langgraph.types",
            "Interrupt",
            Value::Map(m),
            None,
        ))
    }

    /// Reads a stored `Interrupt`.
    pub fn from_value(v: &Value) -> Option<Interrupt> {
        let o = v.as_ext()?.as_object()?;
        if o.class != "Interrupt" {
            return None;
        }
        Some(Interrupt {
            value: o.data.get("value").cloned().unwrap_or_default(),
            id: o.data.get("id")?.as_str()?.to_owned(),
            response_schema: o
                .data
                .get("response_schema")
                .filter(|s| !s.is_nil())
                .cloned(),
        })
    }
}
