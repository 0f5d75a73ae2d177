"""Writes shell.json for crates/stategraph/tests/create_agent_mwd.rs: langchain 1.5.0's
ShellToolMiddleware (HostExecutionPolicy) in a create_agent run with a scripted model
making `CALLS` in one persistent session: the tool's name/description/parameters and the
tool messages stored (content, status, artifact).

    python gen_shell.py > shell.json
"""
import json
import sys
import tempfile
import warnings

from langchain.agents import create_agent
from langchain.agents.middleware import HostExecutionPolicy, RedactionRule, ShellToolMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

warnings.filterwarnings("ignore")

# The Rust test builds the same middleware from these.
CONFIG = {
    "startup_commands": ["export STARTED=yes"],
    "shutdown_commands": ["echo bye"],
    "env": {"GREETING": "hello there", "PATH": "/usr/bin:/bin"},
    "command_timeout": 1.0,
    "max_output_lines": 5,
    "max_output_bytes": 60,
    "rules": [["api_key", "redact", "secret-[0-9]+"], ["password", "block", "hunter2"]],
}
CALLS = [
    {"command": "echo $STARTED $GREETING"},
    {"command": "mkdir -p sub && cd sub && basename \"$(pwd)\""},
    {"command": "basename \"$(pwd)\""},
    {"command": "echo oops 1>&2; false"},
    {"command": "seq 1 8"},
    {"command": "printf 'abcdefghijklmnopqrstuvwxy%.0s\\n' 1 2 3"},
    {"command": "true"},
    {"command": "echo key=secret-123 and secret-9"},
    {"command": "echo my hunter2"},
    {"command": "sleep 5"},
    {"command": "echo after $STARTED"},
    {"restart": True},
    {"command": "echo $STARTED"},
]


class Model(GenericFakeChatModel):
    def bind_tools(self, tools, **kwargs):
        return self


def middleware(workspace):
    policy = HostExecutionPolicy(
        command_timeout=CONFIG["command_timeout"],
        max_output_lines=CONFIG["max_output_lines"],
        max_output_bytes=CONFIG["max_output_bytes"],
    )
    rules = [RedactionRule(pii_type=t, strategy=s, detector=d) for t, s, d in CONFIG["rules"]]
    return ShellToolMiddleware(
        workspace,
        startup_commands=CONFIG["startup_commands"],
        shutdown_commands=CONFIG["shutdown_commands"],
        execution_policy=policy,
        redaction_rules=rules,
        env=CONFIG["env"],
    )


def main():
    mw = middleware(tempfile.mkdtemp())
    out = {"config": CONFIG, "calls": CALLS}
    out["tools"] = [convert_to_openai_tool(t)["function"] for t in mw.tools]
    script = [
        AIMessage("", id=f"ai-{i}", tool_calls=[{"name": "shell", "args": args, "id": f"c{i}"}])
        for i, args in enumerate(CALLS)
    ]
    model = Model(messages=iter(script + [AIMessage("Done.", id="ai-end")]))
    agent = create_agent(model, [], middleware=[mw])
    result = agent.invoke({"messages": [HumanMessage("Use the shell.", id="h1")]})
    out["tool_messages"] = [
        {k: m.model_dump()[k] for k in ("content", "name", "tool_call_id", "status", "artifact")}
        for m in result["messages"]
        if m.type == "tool"
    ]
    out["mermaid"] = agent.get_graph().draw_mermaid()
    json.dump(out, sys.stdout, indent=1)


main()
