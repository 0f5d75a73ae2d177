#!/usr/bin/env python3
"""Write the Mermaid drawings pinned Python LangGraph makes of `create_react_agent` graphs
into tests/prebuilt/ (or the directory given); crates/stategraph/tests/prebuilt.rs builds
the same agents with stategraph and compares.

    /path/to/langgraph-venv/bin/python scripts/gen_agent_fixtures.py [OUT_DIR]
"""

import sys
import warnings
from pathlib import Path

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.tools import tool
from langgraph.prebuilt import create_react_agent

warnings.filterwarnings("ignore")


class Model(GenericFakeChatModel):
    def bind_tools(self, tools, **kwargs):
        return self


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return "sunny"


def agents():
    model = Model(messages=iter([]))
    return {
        "react_agent": create_react_agent(model, [add]),
        "react_agent_two_tools_interrupt": create_react_agent(
            model, [add, get_weather], interrupt_before=["tools"]),
        "react_agent_no_tools": create_react_agent(model, []),
    }


def main():
    out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else (
        Path(__file__).resolve().parent.parent / "tests" / "prebuilt")
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, agent in agents().items():
        (out_dir / f"{name}.mmd").write_text(agent.get_graph().draw_mermaid())


if __name__ == "__main__":
    main()
