"""langchain-mcp-adapters' ToolMessages for a list of tool calls, for tests/mcp.rs to compare
with its own: argv[1] is a JSON object {"connections": {name: connection dict},
"calls": [{"name", "args", "id"}]}; prints one JSON list of the messages (`model_dump()`),
or {"raised": "TypeName"} for a call that raised."""

import asyncio
import json
import sys

from langchain_mcp_adapters.client import MultiServerMCPClient


async def main() -> None:
    spec = json.loads(sys.argv[1])
    client = MultiServerMCPClient(spec["connections"])
    tools = {t.name: t for t in await client.get_tools()}
    out = []
    for call in spec["calls"]:
        try:
            message = await tools[call["name"]].ainvoke({**call, "type": "tool_call"})
            out.append(message.model_dump())
        except Exception as e:  # noqa: BLE001 - the type is what is compared
            out.append({"raised": type(e).__name__})
    print(json.dumps(out))


asyncio.run(main())
