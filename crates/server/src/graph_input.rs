//! A run's input as the API receives it: values, a `Command`, or nothing (resume).

use indexmap::IndexMap;
use serde_json::Value as Json;
use stategraph::{Command, Goto, Resume, Value};

use crate::error::{Result, ServerError};
use crate::json::{to_value, to_writes};

/// The `Command` a run's input gives: updates as a map of channel values.
pub(crate) type InputCommand = Command<IndexMap<String, Value>>;

/// The input of a run.
#[derive(Debug)]
pub enum GraphInput {
    /// An update of the state's channels (`input: {...}`).
    Values(IndexMap<String, Value>),
    /// `command: {resume, update, goto}`.
    Command(InputCommand),
    /// No input: continue the thread from its checkpoint.
    None,
}

impl GraphInput {
    /// Reads `input` and `command` from a run body; both given is an error (422).
    pub fn from_body(input: Option<&Json>, command: Option<&Json>) -> Result<GraphInput> {
        match (
            input.filter(|j| !j.is_null()),
            command.filter(|j| !j.is_null()),
        ) {
            (Some(_), Some(_)) => Err(ServerError::Invalid(
                "give either input or command, not both".into(),
            )),
            (Some(i), None) => to_writes(i)
                .map(GraphInput::Values)
                .ok_or_else(|| ServerError::Invalid("input must be an object".into())),
            (None, Some(c)) => command_from(c).map(GraphInput::Command),
            (None, None) => Ok(GraphInput::None),
        }
    }
}

fn command_from(c: &Json) -> Result<InputCommand> {
    let obj = c
        .as_object()
        .ok_or_else(|| ServerError::Invalid("command must be an object".into()))?;
    let mut cmd = InputCommand::default();
    if let Some(u) = obj.get("update").filter(|u| !u.is_null()) {
        cmd.update = Some(
            to_writes(u)
                .ok_or_else(|| ServerError::Invalid("command.update must be an object".into()))?,
        );
    }
    if let Some(r) = obj.get("resume") {
        cmd.resume = Some(Resume::Value(to_value(r)));
    }
    match obj.get("goto") {
        None | Some(Json::Null) => {}
        Some(Json::String(s)) => cmd.goto.push(Goto::Node(s.clone())),
        Some(Json::Array(items)) => {
            for item in items {
                let node = item
                    .as_str()
                    .ok_or_else(|| ServerError::Invalid("command.goto takes node names".into()))?;
                cmd.goto.push(Goto::Node(node.to_owned()));
            }
        }
        Some(_) => {
            return Err(ServerError::Invalid(
                "command.goto takes a node name or a list of them".into(),
            ))
        }
    }
    Ok(cmd)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn input_and_command_together_are_rejected() {
        let r = GraphInput::from_body(Some(&json!({})), Some(&json!({"resume": 1})));
        assert!(matches!(r, Err(ServerError::Invalid(_))));
    }

    #[test]
    fn command_reads_resume_update_and_goto() {
        let c = json!({"resume": "yes", "update": {"a": 1}, "goto": ["n"]});
        match GraphInput::from_body(None, Some(&c)) {
            Ok(GraphInput::Command(cmd)) => {
                assert_eq!(cmd.resume, Some(Resume::Value(Value::from("yes"))));
                assert_eq!(cmd.goto, vec![Goto::Node("n".into())]);
                assert_eq!(cmd.update.map(|u| u.len()), Some(1));
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn non_object_input_is_invalid() {
        assert!(matches!(
            GraphInput::from_body(Some(&json!(3)), None),
            Err(ServerError::Invalid(_))
        ));
    }
}
