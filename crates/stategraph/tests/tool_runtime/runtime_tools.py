"""The Python twins of tool_node_v2.rs's runtime tools: `greet` takes a state field
(`InjectedState("user")`), the store (`InjectedStore`) and its call id
(`InjectedToolCallId`); `whoami` takes a `ToolRuntime`. Prints one JSON line: the
function each tool sends to the model (`convert_to_openai_tool`, injected arguments left
out), and the tool messages of a `create_react_agent` (v2) run calling both, with
`user` = "ada" in the state and `{"color": "green"}` stored at ("prefs",) / "ada".
"""
import json
import warnings
from typing import Annotated, Any

from langchain.tools import ToolRuntime
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.prebuilt import InjectedState, InjectedStore, create_react_agent
from langgraph.prebuilt.chat_agent_executor import AgentState
from langgraph.store.memory import InMemoryStore

warnings.filterwarnings("ignore")


class Model(GenericFakeChatModel):
    def bind_tools(self, tools, **kwargs):
        return self


class State(AgentState):
    user: str


@tool
def greet(
    greeting: str,
    user: Annotated[str, InjectedState("user")],
    store: Annotated[Any, InjectedStore()],
    tool_call_id: Annotated[str, InjectedToolCallId],
) -> str:
    """Greet the user in their favourite colour."""
    color = store.get(("prefs",), user).value["color"]
    return f"{greeting}, {user} (in {color}); call {tool_call_id}"


@tool
def whoami(runtime: ToolRuntime) -> str:
    """Who is asking, from the tool's runtime."""
    state = runtime.state
    return f"{state['user']} asked in {len(state['messages'])} messages; call {runtime.tool_call_id}"


store = InMemoryStore()
store.put(("prefs",), "ada", {"color": "green"})
model = Model(messages=iter([
    AIMessage("", id="ai-1", tool_calls=[
        {"name": "greet", "args": {"greeting": "Hello"}, "id": "call-1"},
        {"name": "whoami", "args": {}, "id": "call-2"}]),
    AIMessage("Done.", id="ai-2"),
]))
agent = create_react_agent(model, [greet, whoami], state_schema=State, store=store)
out = agent.invoke({"messages": [HumanMessage("hi", id="h-1")], "user": "ada"})
print(json.dumps({
    "functions": [convert_to_openai_tool(t)["function"] for t in (greet, whoami)],
    "tool_messages": [m.content for m in out["messages"] if isinstance(m, ToolMessage)],
}))
