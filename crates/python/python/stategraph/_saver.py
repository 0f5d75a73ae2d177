"""The savers: LangGraph's ``BaseCheckpointSaver`` over one native Rust saver.

What happens here: configs, tuples and async wrappers (Python objects), and the encoding and
decoding of checkpoints and writes with ``self.serde``, split as each of Python's own savers
splits them (so Python objects are stored exactly as Python's own savers store them). What
happens in Rust (``stategraph._native``): the rows, the queries and the fence, with the GIL
released; the encoded values are stored and returned as they are.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.serde.types import _DeltaSnapshot

from stategraph._native import NativeSaver

# Plain data (metadata, filters, config keys) is encoded with a default serializer: it holds
# no Python objects, so the user's serializer (and its allowlist) is not needed for it.
_PLAIN = JsonPlusSerializer()
_ADDRESS_KEYS = ("thread_id", "checkpoint_ns", "checkpoint_id")
_I64_MIN, _U64_MAX = -(2**63), 2**64 - 1


def _plain(value: Any) -> bytes:
    tag, data = _PLAIN.dumps_typed(value)
    if tag != "msgpack":
        raise TypeError(f"expected a mapping or list, got {type(value).__name__}")
    return data


def _scalar(value: Any) -> bool:
    if isinstance(value, bool) or isinstance(value, (str, float)):
        return True
    return isinstance(value, int) and _I64_MIN <= value <= _U64_MAX


def _scalars(keys: Mapping[str, Any] | None) -> dict[str, Any]:
    """The keys a put may copy into metadata (LangGraph copies scalars only)."""
    return {
        k: v
        for k, v in (keys or {}).items()
        if isinstance(k, str) and k not in _ADDRESS_KEYS and _scalar(v)
    }


def _address(config: RunnableConfig, *, ns_default: str | None = "") -> tuple:
    conf = config.get("configurable") or {}
    if "thread_id" not in conf:
        raise ValueError("config['configurable'] has no 'thread_id'")
    ns = conf.get("checkpoint_ns", ns_default)
    checkpoint_id = conf.get("checkpoint_id")
    return (
        str(conf["thread_id"]),
        None if ns is None else str(ns),
        None if checkpoint_id is None else str(checkpoint_id),
    )


def _before(config: RunnableConfig) -> tuple:
    """The bound of `list(before=...)`: only its checkpoint id counts (LangGraph passes
    ``{"configurable": {"checkpoint_id": ...}}`` alone when replaying subgraphs)."""
    conf = config.get("configurable") or {}
    checkpoint_id = conf.get("checkpoint_id")
    return (
        str(conf.get("thread_id", "")),
        None,
        None if checkpoint_id is None else str(checkpoint_id),
    )


def _config_bytes(config: RunnableConfig) -> bytes:
    thread_id, ns, checkpoint_id = _address(config)
    conf = config.get("configurable") or {}
    return _plain(
        [thread_id, ns, checkpoint_id, _scalars(conf), _scalars(config.get("metadata"))]
    )


def _config(thread_id: str, ns: str, checkpoint_id: str) -> RunnableConfig:
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": ns,
            "checkpoint_id": checkpoint_id,
        }
    }


def _inline(value: Any) -> bool:
    """A channel value Python's ``PostgresSaver`` keeps inline in the checkpoint JSON."""
    return value is None or isinstance(value, (str, int, float, bool))


class _RustSaver(BaseCheckpointSaver[str]):
    """A ``BaseCheckpointSaver`` whose storage is a stategraph Rust saver.

    Values are encoded by ``self.serde`` (any serializer) and stored as it encodes them;
    what is read is decoded by ``self.serde``, as Python's own savers do. Every method has
    an ``a``-prefixed async twin that runs it in the default executor (the native call
    releases the GIL).
    """

    _native: NativeSaver
    # How the native saver stores a checkpoint, hence what `put` sends and what reads
    # return (see `NativeSaver.get_tuple_raw`): "whole" (one pair, SQLite), "split" (the
    # checkpoint without its values plus one pair per new channel version, memory) or
    # "json" (the checkpoint with its primitive values inline plus one pair per other new
    # channel version, Postgres).
    _layout: str

    def __init__(self, native: NativeSaver, *, serde: SerializerProtocol | None = None):
        super().__init__(serde=serde)
        self._native = native

    # -- decoding what Rust returns -------------------------------------------------

    def _loads(self, data: bytes) -> Any:
        return self.serde.loads_typed(("msgpack", data))

    def _raw_tuple(self, row: tuple, config: RunnableConfig | None = None) -> CheckpointTuple:
        """A tuple from the stored parts (see ``NativeSaver.get_tuple_raw``), decoded as
        Python's own saver of the same layout decodes them."""
        thread_id, ns, checkpoint_id, parent, stored, values, metadata, writes = row
        loads = self.serde.loads_typed
        if self._layout == "json":
            checkpoint = json.loads(stored)
            if checkpoint.get("v", 4) < 4 and parent:
                # Format 3 or older: the trait's read migrates the parent's sends in.
                return self._decoded_tuple(thread_id, ns, checkpoint_id, config)
            inline = checkpoint.get("channel_values") or {}
            checkpoint["channel_values"] = {
                **inline,
                **{ch: loads((tag, data)) for ch, tag, data in values},
            }
        else:
            checkpoint = loads(stored)
            if values is None and self._layout == "split":
                # Rust could not read the checkpoint's versions (a serializer of our own).
                values = self._native.blobs_raw(
                    thread_id, ns, _plain(dict(checkpoint["channel_versions"]))
                )
            if values is not None:
                checkpoint = {
                    **checkpoint,
                    "channel_values": {ch: loads((tag, data)) for ch, tag, data in values},
                }
        if metadata is None:
            metadata = {}
        elif isinstance(metadata, bytes):
            metadata = json.loads(metadata)
        else:
            # Metadata is plain data, encoded in Rust with LangGraph's default serializer.
            metadata = _PLAIN.loads_typed(metadata)
        return CheckpointTuple(
            config if config is not None else _config(thread_id, ns, checkpoint_id),
            checkpoint,
            metadata,
            _config(thread_id, ns, parent) if parent else None,
            [(task, ch, loads((tag, data))) for task, ch, tag, data in writes],
        )

    def _decoded_tuple(
        self, thread_id: str, ns: str, checkpoint_id: str, config: RunnableConfig | None
    ) -> CheckpointTuple:
        """A tuple read through the Rust saver's decoding `get_tuple` (old formats)."""
        data = self._native.get_tuple(thread_id, ns, checkpoint_id)
        thread_id, ns, checkpoint_id, checkpoint, metadata, parent, writes = self._loads(data)
        return CheckpointTuple(
            config if config is not None else _config(thread_id, ns, checkpoint_id),
            checkpoint,
            metadata,
            _config(thread_id, ns, parent) if parent else None,
            [tuple(w) for w in writes],
        )

    # -- the protocol ---------------------------------------------------------------

    def setup(self) -> None:
        """Creates or migrates the tables (SQLite and memory need nothing: done on open)."""
        self._native.setup()

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        thread_id, ns, checkpoint_id = _address(config)
        row = self._native.get_tuple_raw(thread_id, ns, checkpoint_id)
        if row is None:
            return None
        return self._raw_tuple(row, config if checkpoint_id else None)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        address = None
        if config is not None and "thread_id" in (config.get("configurable") or {}):
            address = _address(config, ns_default=None)
        rows = self._native.list_raw(
            address,
            _plain(filter) if filter else None,
            _before(before) if before is not None else None,
            limit,
        )
        for row in rows:
            yield self._raw_tuple(row)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        dumps = self.serde.dumps_typed
        if self._layout == "whole":
            stored = self._native.put_raw(
                _config_bytes(config),
                str(checkpoint["id"]),
                tuple(dumps(checkpoint)),
                _plain(dict(metadata)),
            )
            return _config(*stored)
        plain = checkpoint.copy()
        if self._layout == "split":
            # As InMemorySaver: the checkpoint without its values, a blob per new version.
            values = plain.pop("channel_values")
            encoded = tuple(dumps(plain))
        else:
            # As Python's PostgresSaver: primitives inline, the others as blobs.
            inline = dict(plain["channel_values"])
            values = {}
            for k, v in checkpoint["channel_values"].items():
                if isinstance(v, _DeltaSnapshot):
                    values[k] = inline.pop(k)
                    inline[k] = True
                elif not _inline(v):
                    values[k] = inline.pop(k)
            plain["channel_values"] = inline
            encoded = ("msgpack", _plain(plain))
        stored = self._native.put_raw(
            _config_bytes(config),
            str(checkpoint["id"]),
            encoded,
            _plain(dict(metadata)),
            (
                _plain(dict(new_versions)),
                [(k, *dumps(values[k])) for k in new_versions if k in values],
            ),
        )
        return _config(*stored)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        encoded = [(channel, *self.serde.dumps_typed(value)) for channel, value in writes]
        self._native.put_writes(_config_bytes(config), encoded, str(task_id), task_path)

    def delete_thread(self, thread_id: str) -> None:
        self._native.delete_thread(str(thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self._native.delete_for_runs([str(r) for r in run_ids])

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self._native.copy_thread(str(source_thread_id), str(target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self._native.prune([str(t) for t in thread_ids], strategy)

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        if not channels:
            return {}
        thread_id, ns, checkpoint_id = _address(config)
        data = self._native.get_delta_channel_history(
            thread_id, ns, checkpoint_id, list(channels)
        )
        out: dict[str, DeltaChannelHistory] = {}
        for channel, (has_seed, seed, writes) in self._loads(data).items():
            entry: DeltaChannelHistory = {"writes": [tuple(w) for w in writes]}
            if has_seed:
                entry["seed"] = seed
            out[channel] = entry
        return out

    def get_next_version(self, current: str | int | None, channel: None = None) -> str:
        return self._native.get_next_version(current)

    # -- async twins ----------------------------------------------------------------

    async def _run(self, fn, /, *args, **kwargs):
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, functools.partial(fn, *args, **kwargs))

    async def asetup(self) -> None:
        await self._run(self.setup)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self._run(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        tuples = await self._run(
            lambda: list(self.list(config, filter=filter, before=before, limit=limit))
        )
        for t in tuples:
            yield t

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await self._run(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await self._run(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await self._run(self.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await self._run(self.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self._run(self.copy_thread, source_thread_id, target_thread_id)

    async def aprune(
        self, thread_ids: Sequence[str], *, strategy: str = "keep_latest"
    ) -> None:
        await self._run(self.prune, thread_ids, strategy=strategy)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        return await self._run(
            self.get_delta_channel_history, config=config, channels=channels
        )


class SqliteSaver(_RustSaver):
    """LangGraph's SQLite saver, in Rust: the same file, the same rows.

    The checkpoint and the writes are stored as ``self.serde`` encodes them, and read back
    as stored; Rust never decodes them.

    ``path`` is a file (created with its tables if missing) or ``":memory:"``. With
    ``fencing=True``, a write behind the thread's head raises ``ConflictError`` instead of
    forking the thread (off by default: LangGraph's replays write behind the head).
    """

    _layout = "whole"

    def __init__(
        self,
        path: str | os.PathLike[str] = ":memory:",
        *,
        serde: SerializerProtocol | None = None,
        fencing: bool = False,
    ) -> None:
        super().__init__(NativeSaver.sqlite(os.fspath(path), fencing), serde=serde)

    @classmethod
    @contextmanager
    def from_conn_string(cls, conn_string: str, **kwargs: Any) -> Iterator[SqliteSaver]:
        """A saver on ``conn_string`` (a path or ``":memory:"``), as a context manager."""
        yield cls(conn_string, **kwargs)


class PostgresSaver(_RustSaver):
    """LangGraph's Postgres saver, in Rust: the same tables, the same rows.

    ``url`` is a ``postgresql://`` connection string; call ``setup()`` once per database.
    ``fencing`` as for ``SqliteSaver``. Primitive channel values go inline in the
    checkpoint's JSON, the others and the writes are stored as ``self.serde`` encodes them
    and read back as stored.
    """

    _layout = "json"

    def __init__(
        self,
        url: str,
        *,
        serde: SerializerProtocol | None = None,
        fencing: bool = False,
    ) -> None:
        super().__init__(NativeSaver.postgres(url, fencing), serde=serde)

    @classmethod
    @contextmanager
    def from_conn_string(cls, conn_string: str, **kwargs: Any) -> Iterator[PostgresSaver]:
        """A saver connected to ``conn_string``, as a context manager."""
        yield cls(conn_string, **kwargs)


class MemorySaver(_RustSaver):
    """LangGraph's ``InMemorySaver``, in Rust (nothing outlives the process).

    The checkpoint (without its values), each new channel version and the writes are stored
    as ``self.serde`` encodes them, and read back as stored; Rust decodes only the
    checkpoint's ``channel_versions``, to find its values.
    """

    _layout = "split"

    def __init__(
        self, *, serde: SerializerProtocol | None = None, fencing: bool = False
    ) -> None:
        super().__init__(NativeSaver.memory(fencing), serde=serde)
