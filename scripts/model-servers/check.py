"""Checks the running model servers of scripts/model-servers.sh over their wires, with the
standard library only: what the tiny model answers and which parts of each API work.

    eval "$(bash scripts/model-servers.sh env)" && python3 scripts/model-servers/check.py

Prints one line per check and exits non-zero if any failed; the known limits (of llama-server
or of the tiny model) are printed as such and not counted.
"""

import json
import os
import sys
import urllib.request

OPENAI = os.environ["STATEGRAPH_OPENAI_BASE_URL"]
ANTHROPIC = os.environ["STATEGRAPH_ANTHROPIC_BASE_URL"]
MODEL = os.environ["STATEGRAPH_OPENAI_MODEL"]
AMODEL = os.environ["STATEGRAPH_ANTHROPIC_MODEL"]
SHOUT = {
    "name": "shout",
    "description": "Shout a word.",
    "parameters": {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]},
}
ADD = {
    "name": "add",
    "description": "Add two integers.",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
}
TOOLS = [{"type": "function", "function": SHOUT}, {"type": "function", "function": ADD}]
ATOOLS = [{"name": t["name"], "description": t["description"], "input_schema": t["parameters"]} for t in (SHOUT, ADD)]
USER = [{"role": "user", "content": "hello"}]
PARALLEL = [{"role": "user", "content": "Add 2 and 3 and shout hi: call both tools in parallel."}]
AFTER_TOOL = USER + [
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "shout", "arguments": '{"word":"hi"}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "HI!"},
]


def post(url, body, headers=None):
    req = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json", **(headers or {})})
    with urllib.request.urlopen(req, timeout=60) as resp:
        if body.get("stream"):
            return [line.decode().strip() for line in resp if line.strip()]
        return json.load(resp)


def chat(**body):
    return post(OPENAI + "/chat/completions", {"model": MODEL, "messages": USER, **body})


def sse(lines):
    return [json.loads(line[6:]) for line in lines if line.startswith("data: ") and line != "data: [DONE]"]


def messages(**body):
    headers = {"x-api-key": "none", "anthropic-version": "2023-06-01"}
    return post(ANTHROPIC + "/v1/messages", {"model": AMODEL, "max_tokens": 64, "messages": USER, **body}, headers)


def checks():
    r = chat(seed=1)
    yield "chat: text, stop, usage", (
        r["choices"][0]["message"]["content"] == "0123456789."
        and r["choices"][0]["finish_reason"] == "stop"
        and r["usage"]["completion_tokens"] == 12 and r["usage"]["prompt_tokens"] > 0)
    r = chat(max_tokens=4)
    yield "chat: max_tokens", r["choices"][0]["message"]["content"] == "0123" and r["choices"][0]["finish_reason"] == "length"
    r = chat(stop=["5"])
    yield "chat: stop", r["choices"][0]["message"]["content"] == "01234" and r["choices"][0]["finish_reason"] == "stop"
    r = chat(temperature=1.0, seed=42)
    yield "chat: temperature 1 + seed, same answer", r["choices"][0]["message"]["content"] == "0123456789."
    chunks = sse(chat(stream=True, stream_options={"include_usage": True}))
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    yield "stream: deltas, include_usage", text == "0123456789." and chunks[-1]["usage"]["completion_tokens"] == 12
    for choice in ("auto", "required"):
        r = chat(tools=TOOLS, tool_choice=choice)
        calls = r["choices"][0]["message"].get("tool_calls") or []
        yield f"tools: tool_choice {choice}: one call", (
            len(calls) == 1 and calls[0]["function"]["name"] in ("shout", "add")
            and isinstance(json.loads(calls[0]["function"]["arguments"]), dict)
            and r["choices"][0]["finish_reason"] == "tool_calls")
    r = chat(tools=[TOOLS[0]], tool_choice="required")
    call = r["choices"][0]["message"]["tool_calls"][0]
    yield "tools: args obey the schema", json.loads(call["function"]["arguments"]) == {"word": "hi"}
    r = chat(tools=TOOLS, tool_choice="required")
    yield "tools: of two tools, the name that sorts first", r["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "add"
    r = chat(tools=TOOLS, tool_choice={"type": "function", "function": {"name": "shout"}})
    yield "LIMIT tools: named tool_choice honoured (llama-server takes it as auto)", (
        r["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "shout")
    r = chat(tools=TOOLS, tool_choice="required", parallel_tool_calls=True)
    yield "tools: one call unless the prompt asks for parallel calls", len(r["choices"][0]["message"]["tool_calls"]) == 1
    r = chat(tools=TOOLS, messages=PARALLEL, parallel_tool_calls=True)
    calls = r["choices"][0]["message"].get("tool_calls") or []
    yield "tools: parallel_tool_calls, \"in parallel\": two calls in one answer", (
        [c["function"]["name"] for c in calls] == ["add", "shout"] and calls[0]["id"] != calls[1]["id"]
        and json.loads(calls[1]["function"]["arguments"]) == {"word": "hi"})
    chunks = sse(chat(tools=TOOLS, messages=PARALLEL, stream=True))
    deltas = [tc for c in chunks if c["choices"] for tc in c["choices"][0]["delta"].get("tool_calls") or []]
    yield "stream: two calls' deltas by index", sorted({d["index"] for d in deltas}) == [0, 1]
    after = PARALLEL + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a":2,"b":3}'}},
            {"id": "c2", "type": "function", "function": {"name": "shout", "arguments": '{"word":"hi"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "5"}, {"role": "tool", "tool_call_id": "c2", "content": "HI"}]
    r = chat(tools=TOOLS, messages=after)
    yield "tools: after two results, text that stops", (
        r["choices"][0]["message"]["content"] == "Done." and r["choices"][0]["finish_reason"] == "stop")
    r = chat(tools=TOOLS, tool_choice="required", parallel_tool_calls=False, messages=PARALLEL)
    yield "LIMIT tools: parallel_tool_calls false gives one call (llama-server's grammar for per-call tags allows several)", (
        len(r["choices"][0]["message"]["tool_calls"]) == 1)
    r = chat(tools=[TOOLS[0]], tool_choice="required")
    yield "tools: named tool_choice narrowed (the tool alone, required) is honoured", (
        r["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "shout")
    r = chat(tools=TOOLS, tool_choice="none")
    yield "LIMIT tools: tool_choice none gives plain text (the tiny model writes <tool_call> as text)", (
        not r["choices"][0]["message"].get("tool_calls") and "<tool_call>" not in r["choices"][0]["message"]["content"])
    chunks = sse(chat(tools=[TOOLS[0]], tool_choice="required", stream=True, stream_options={"include_usage": True}))
    deltas = [tc for c in chunks if c["choices"] for tc in c["choices"][0]["delta"].get("tool_calls") or []]
    args = "".join(d["function"].get("arguments") or "" for d in deltas)
    yield "stream: tool-call argument deltas", len(deltas) > 3 and json.loads(args) == {"word": "hi"} and deltas[0]["function"]["name"] == "shout"
    r = post(OPENAI + "/chat/completions", {"model": MODEL, "messages": AFTER_TOOL, "tools": TOOLS})
    yield "tools: after the result, text that stops", r["choices"][0]["message"]["content"] == "Done." and r["choices"][0]["finish_reason"] == "stop"
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"},
              "tags": {"type": "array", "items": {"type": "string"}}}, "required": ["name", "age", "tags"],
              "additionalProperties": False}
    r = chat(response_format={"type": "json_schema", "json_schema": {"name": "p", "strict": True, "schema": schema}})
    out = json.loads(r["choices"][0]["message"]["content"])
    yield "response_format json_schema", set(out) == {"name", "age", "tags"} and isinstance(out["age"], int)
    r = chat(response_format={"type": "json_object"})
    yield "response_format json_object", isinstance(json.loads(r["choices"][0]["message"]["content"]), dict)

    r = messages()
    yield "anthropic: text, end_turn, usage", (
        r["content"][-1] == {"type": "text", "text": "0123456789."} and r["stop_reason"] == "end_turn"
        and r["usage"]["output_tokens"] == 12)
    for choice in ({"type": "any"}, {"type": "tool", "name": "shout"}, {"type": "auto"}):
        r = messages(tools=ATOOLS[:1], tool_choice=choice)
        uses = [b for b in r["content"] if b["type"] == "tool_use"]
        yield f"anthropic: tool_use with tool_choice {choice['type']}", (
            len(uses) == 1 and uses[0]["input"] == {"word": "hi"} and r["stop_reason"] == "tool_use")
    r = messages(tools=ATOOLS[:1], messages=USER + [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "shout", "input": {"word": "hi"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "HI!"}]}])
    yield "anthropic: after tool_result, text", r["content"][-1]["text"] == "Done." and r["stop_reason"] == "end_turn"
    events = [json.loads(line[6:]) for line in messages(stream=True, tools=ATOOLS[:1], tool_choice={"type": "any"})
              if line.startswith("data: ")]
    kinds = [e["type"] for e in events]
    partial = "".join(e["delta"].get("partial_json", "") for e in events if e["type"] == "content_block_delta")
    yield "anthropic: stream events, input_json_delta", (
        kinds[0] == "message_start" and kinds[-1] == "message_stop" and "content_block_start" in kinds
        and json.loads(partial) == {"word": "hi"})
    events = [json.loads(line[6:]) for line in messages(stream=True) if line.startswith("data: ")]
    text = "".join(e["delta"].get("text", "") for e in events if e["type"] == "content_block_delta")
    yield "anthropic: stream text_delta", text == "0123456789."


def main():
    failed = passed = 0
    for name, ok in checks():
        if name.startswith("LIMIT "):
            # a known limit of the server or the tiny model: reported, not counted
            print(("now ok (a limit no more?) " if ok else "limit ") + name[6:])
            continue
        print(("ok   " if ok else "FAIL ") + name)
        passed += bool(ok)
        failed += not ok
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
