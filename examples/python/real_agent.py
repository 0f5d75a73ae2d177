"""The README's agent on a real model: init_chat_model, a tool, the thread in SQLite.
Twin of crates/stategraph/examples/real_agent.rs (both print the same lines).

    OPENAI_BASE_URL=http://127.0.0.1:11434/v1 MODEL=openai:qwen2.5 python examples/python/real_agent.py
"""
import os
import tempfile
import uuid
import warnings

from langchain.chat_models import init_chat_model
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.prebuilt import create_react_agent

warnings.filterwarnings("ignore")  # create_react_agent is deprecated in favour of langchain's


@tool
def get_weather(city: str) -> str:
    """Get the weather in a city."""
    return f"It is sunny in {city}."


model = init_chat_model(os.environ.get("MODEL", "openai:gpt-4o-mini"))
with SqliteSaver.from_conn_string(os.path.join(tempfile.gettempdir(), "real_agent.sqlite")) as saver:
    agent = create_react_agent(model, [get_weather], checkpointer=saver)
    config = {"configurable": {"thread_id": str(uuid.uuid4())}}
    out = agent.invoke({"messages": [("user", "What is the weather in Paris?")]}, config)
    for m in out["messages"]:
        print(f"{m.type}: {m.text}")
