"""The `parameters` LangChain sends for a `@tool` with a pydantic argument model: the
Python twin of the `Weather` arguments in tests/tool_schema.rs (printed as one JSON line)."""

import json
from typing import Literal, Optional

from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, Field


class Address(BaseModel):
    """A postal address."""

    street: str = Field(description="Street and number.")
    city: str


class Weather(BaseModel):
    """Look up the weather."""

    city: str = Field(description="The city to look up.")
    days: int = Field(default=1, description="How many days ahead.")
    unit: Optional[Literal["c", "f"]] = Field(default=None, description="Temperature unit.")
    home: Optional[Address] = None
    tags: list[str] = Field(default_factory=list)


@tool("get_weather", args_schema=Weather)
def get_weather(city: str, days: int = 1, unit=None, home=None, tags=()) -> str:
    """The weather in a city."""
    return "sunny"


print(json.dumps(convert_to_openai_tool(get_weather)["function"]))
