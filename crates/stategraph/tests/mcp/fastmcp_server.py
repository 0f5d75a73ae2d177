"""A small FastMCP server (PyPI `mcp`) for crates/stategraph/tests/mcp*.rs.

Usage: python fastmcp_server.py stdio
       python fastmcp_server.py http PORT      (streamable HTTP on 127.0.0.1:PORT/mcp)

Five tools: `add` (a plain int: text plus FastMCP's wrapped structured content),
`forecast` (a typed result: structured content), `fail` (raises: an isError result),
`crash` (the process exits under the call: a lost connection, over stdio) and `hang`
(never answers: a request timeout).
"""

import asyncio
import os
import sys

from pydantic import BaseModel, Field
from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError


class Forecast(BaseModel):
    """A day's forecast."""

    city: str
    temperature_c: float = Field(description="Temperature in degrees Celsius.")
    conditions: str


def build(port: int) -> FastMCP:
    server = FastMCP("stategraph-test", host="127.0.0.1", port=port, log_level="WARNING")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def forecast(city: str, days: int = 1) -> Forecast:
        """The forecast for a city, `days` days ahead."""
        return Forecast(city=city, temperature_c=20.5 + days, conditions="sunny")

    @server.tool()
    def fail(reason: str) -> str:
        """Always fails, with the reason given."""
        raise ToolError(f"refused: {reason}")

    @server.tool()
    def crash() -> str:
        """Exits the server process at once."""
        os._exit(3)

    @server.tool()
    async def hang() -> str:
        """Never answers."""
        await asyncio.Event().wait()
        return "unreachable"

    return server


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        build(0).run("stdio")
    elif mode == "http":
        build(int(sys.argv[2])).run("streamable-http")
    else:
        sys.exit(f"unknown mode {mode!r}: stdio or http PORT")
