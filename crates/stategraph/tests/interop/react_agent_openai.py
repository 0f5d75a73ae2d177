"""Runs Python's create_react_agent (version="v1") with langchain-openai's ChatOpenAI on the
local OpenAI-compatible server of scripts/model-servers.sh (STATEGRAPH_OPENAI_BASE_URL,
STATEGRAPH_OPENAI_MODEL) and one tool, on thread "agent" of the SQLite file given, then
prints the final messages as JSON lines (type, content, tool calls) for a Rust test to
compare with stategraph's agent on the same server and to read the thread back.

The tiny model there calls the tool once (args from the server's grammar: {"word": "hi"})
and, given the result, answers "Done.".

    python react_agent_openai.py FILE.sqlite
"""
import json
import os
import sys
import warnings

from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.prebuilt import create_react_agent

warnings.filterwarnings("ignore")


@tool
def shout(word: str) -> str:
    """Shout a word."""
    return word.upper() + "!"


model = ChatOpenAI(
    base_url=os.environ["STATEGRAPH_OPENAI_BASE_URL"],
    model=os.environ["STATEGRAPH_OPENAI_MODEL"],
    api_key="none",
    temperature=0,
    seed=7,
)
with SqliteSaver.from_conn_string(sys.argv[1]) as saver:
    agent = create_react_agent(model, [shout], prompt="You shout words.", checkpointer=saver, version="v1")
    out = agent.invoke({"messages": [HumanMessage("Shout hi.")]}, {"configurable": {"thread_id": "agent"}})
for m in out["messages"]:
    calls = [{"name": c["name"], "args": c["args"]} for c in getattr(m, "tool_calls", []) or []]
    print(json.dumps({"type": m.type, "content": m.content, "tool_calls": calls}))
