"""Writes a long-term store with LangGraph's own SqliteStore / PostgresStore and prints
what LangGraph's read API answers for it (the `stategraph store` tests compare).

Usage: store.py sqlite PATH | store.py postgres URL
"""

import json
import sys


def fill(store):
    store.put(("users", "42"), "prefs", {"theme": "dark", "lang": "fr", "size": 3})
    store.put(("users", "42"), "profile", {"name": "Ada", "tags": ["a", "b"], "age": 36})
    store.put(("users", "7"), "prefs", {"theme": "light", "lang": "en", "size": 1})
    store.put(("docs",), "readme", {"text": "héllo wörld", "nested": {"k": [1, 2.5, None, True]}})
    store.put(("docs", "old"), "gone", {"text": "deleted"})
    store.delete(("docs", "old"), "gone")


def item(i):
    if i is None:
        return None
    d = i.dict()
    return {"namespace": list(d["namespace"]), "key": d["key"], "value": d["value"]}


def answers(store):
    return {
        "namespaces": [list(ns) for ns in store.list_namespaces()],
        "namespaces_users_depth1": [
            list(ns) for ns in store.list_namespaces(prefix=("users",), max_depth=1)
        ],
        "get": item(store.get(("users", "42"), "profile")),
        "get_docs": item(store.get(("docs",), "readme")),
        "search_users_dark": sorted(
            (item(i) for i in store.search(("users",), filter={"theme": "dark"})),
            key=lambda x: (x["namespace"], x["key"]),
        ),
        "search_all": sorted(
            (item(i) for i in store.search((), limit=100)),
            key=lambda x: (x["namespace"], x["key"]),
        ),
    }


def main():
    backend, target = sys.argv[1], sys.argv[2]
    if backend == "sqlite":
        from langgraph.store.sqlite import SqliteStore

        with SqliteStore.from_conn_string(target) as store:
            store.setup()
            fill(store)
            out = answers(store)
    else:
        from langgraph.store.postgres import PostgresStore

        with PostgresStore.from_conn_string(target) as store:
            store.setup()
            fill(store)
            out = answers(store)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
