"""A capture server for tests/create_agent_pts.rs, and Python's run against it.

`capture.py serve PROVIDER`: serves one model request on 127.0.0.1 (a free port, printed
first), answering the provider's canned reply (OpenAI's in the API of the path) (text, no tool calls), then prints the
captured request (path, `anthropic-beta` header, JSON body) as one JSON line and exits.

`capture.py python PROVIDER SEARCHABLE`: runs langchain 1.5.0's `create_agent` with
`ProviderToolSearchMiddleware(searchable_tools=SEARCHABLE.split(","))` and
langchain-anthropic's / langchain-openai's client pointed at such a server; prints the
captured request, or `{"error": [type, message]}` when the agent raises.
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

MODEL = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-4o-mini"}

REPLY = {
    "anthropic": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "done"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 1},
    },
    "openai": {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": "completed",
        "model": "gpt-4o-mini",
        "output": [
            {
                "type": "message",
                "id": "msg_1",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "done", "annotations": []}],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {"input_tokens": 3, "output_tokens": 1, "total_tokens": 4},
    },
    "chat_completions": {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o-mini",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "done"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    },
}


def start(provider):
    """Starts the server in a thread: (base URL, list the captures go to, server)."""
    captured = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            captured.append(
                {
                    "path": self.path,
                    "anthropic_beta": self.headers.get("anthropic-beta"),
                    "body": json.loads(body),
                }
            )
            chat = self.path.endswith("/chat/completions")
            out = json.dumps(REPLY["chat_completions" if chat else provider]).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}", captured, server


def serve(provider):
    url, captured, server = start(provider)
    print(url, flush=True)
    sys.stdin.readline()  # the Rust side says when its run is over
    server.shutdown()
    print(json.dumps(captured[0] if captured else None), flush=True)


def python(provider, searchable):
    from langchain.agents import create_agent
    from langchain.agents.middleware import ProviderToolSearchMiddleware
    from langchain_core.tools import tool

    @tool
    def get_weather(city: str) -> str:
        """Gets the weather for a city."""
        return f"sunny in {city}"

    @tool
    def lookup_order(order_id: str) -> str:
        """Looks an order up by its id."""
        return f"order {order_id}"

    url, captured, server = start(provider)
    if provider == "anthropic":
        from langchain_anthropic import ChatAnthropic

        model = ChatAnthropic(model=MODEL[provider], base_url=url, api_key="none", max_tokens=1024)
    else:
        from langchain_openai import ChatOpenAI

        model = ChatOpenAI(model=MODEL[provider], base_url=url + "/v1", api_key="none")
    agent = create_agent(
        model,
        tools=[get_weather, lookup_order],
        system_prompt="You help.",
        middleware=[
            ProviderToolSearchMiddleware(searchable_tools=[s for s in searchable.split(",") if s])
        ],
    )
    try:
        agent.invoke({"messages": [{"role": "user", "content": "Where is order 7?"}]})
    except Exception as e:  # noqa: BLE001 - the test compares the error
        print(json.dumps({"error": [type(e).__name__, str(e)]}))
        return
    finally:
        server.shutdown()
    print(json.dumps(captured[0]))


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2])
    else:
        python(sys.argv[2], sys.argv[3])
