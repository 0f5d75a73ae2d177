"""stategraph's Rust checkpoint savers for Python LangGraph.

Each saver is a LangGraph ``BaseCheckpointSaver``; swap it in with one line::

    graph = builder.compile(checkpointer=stategraph.SqliteSaver("checkpoints.db"))

The rows written are those of LangGraph's own savers (``langgraph-checkpoint-sqlite``,
``langgraph-checkpoint-postgres``), so a database can be used by either.
"""

from stategraph._native import ConflictError, StategraphError
from stategraph._saver import MemorySaver, PostgresSaver, SqliteSaver

__all__ = [
    "ConflictError",
    "MemorySaver",
    "PostgresSaver",
    "SqliteSaver",
    "StategraphError",
]
