"""The Python side of the store interop tests (run with the pinned LangGraph venv).

usage: store_peer.py sqlite PATH write|read
       store_peer.py postgres URL write|read

`write` puts Python's items under ("py", ...); `read` prints, as JSON, what Python's store
answers about every item (Rust's and its own): gets, filtered searches, semantic searches
(SQLite: the vectors Rust stored, decoded as sqlite_vec.serialize_float32 wrote them and
compared with this file's embedder over LangGraph's get_text_at_path) and namespace
listings.
"""
import json
import sys

DIMS = 64


def hash_embed(texts):
    """stategraph_store::HashEmbedder in Python: FNV-1a 64 of each lower-cased word."""
    out = []
    for text in texts:
        v = [0.0] * DIMS
        words = "".join(c if c.isalnum() else " " for c in text).split()
        for w in words:
            h = 0xCBF29CE484222325
            for b in w.lower().encode("utf-8"):
                h ^= b
                h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
            v[h % DIMS] += 1.0
        n = sum(x * x for x in v) ** 0.5
        out.append([x / n for x in v] if n > 0 else v)
    return out


def open_store(kind, where):
    if kind == "sqlite":
        from langgraph.store.sqlite import SqliteStore

        # No index config: this Python's sqlite3 cannot load extensions (sqlite-vec), which
        # LangGraph's SqliteStore needs for an index; `read` checks Rust's vectors by hand.
        return SqliteStore.from_conn_string(where, ttl={"refresh_on_read": True})
    from langgraph.store.postgres import PostgresStore

    return PostgresStore.from_conn_string(where, ttl={"refresh_on_read": True})


def main():
    kind, where, mode = sys.argv[1:4]
    with open_store(kind, where) as store:
        store.setup()
        if mode == "write":
            store.put(("py", "docs"), "p1", {"text": "python writes the garden notes", "n": 1,
                                             "nested": {"tags": ["a", "b"], "ok": True}})
            store.put(("py", "docs"), "p2", {"text": "rust ownership borrow checker", "n": 2, "f": 2.5})
            store.put(("py", "prefs"), "theme", {"text": "dark theme please", "n": 3}, ttl=60)
            store.put(("py", "docs"), "gone", {"text": "deleted soon", "n": 4})
            store.delete(("py", "docs"), "gone")
            return
        out = {}
        for ns, key in [(("rs", "docs"), "r1"), (("rs", "docs"), "r2"), (("rs", "prefs"), "theme"),
                        (("py", "docs"), "p1"), (("py", "docs"), "p2"), (("py", "prefs"), "theme"),
                        (("py", "docs"), "gone")]:
            item = store.get(ns, key)
            out["get/" + "/".join(ns) + "/" + key] = None if item is None else {
                "value": item.value, "updated_at": item.updated_at.isoformat()}
        out["filter/n>=2"] = sorted(i.key for i in store.search((), filter={"n": {"$gte": 2}}, limit=100))
        # Python's SQLite reads "a.b" as a JSON path; its Postgres reads it as a literal key
        # and (like SQLite) takes any nested object for operators: no nested filter there.
        if kind == "sqlite":
            nested = {"nested.ok": True}
            out["filter/nested"] = sorted(i.key for i in store.search((), filter=nested))
        out["filter/eq"] = sorted(i.key for i in store.search((), filter={"n": 1}))
        if kind == "sqlite":
            import struct
            from langgraph.store.base.embed import get_text_at_path

            vectors = {}
            has_vectors = store.conn.execute(
                "SELECT 1 FROM sqlite_master WHERE name = 'store_vectors'").fetchone()
            rows = store.conn.execute(
                "SELECT prefix, key, field_name, embedding FROM store_vectors"
            ).fetchall() if has_vectors else []
            for prefix, key, field, blob in rows:
                stored = struct.unpack("<%df" % (len(blob) // 4), blob)
                value = store.get(tuple(prefix.split(".")), key).value
                path = field.rsplit(".", 1)[0] if field[-1:].isdigit() and "[" in field else field
                texts = get_text_at_path(value, path)
                i = int(field.rsplit(".", 1)[1]) if path != field else 0
                expected = hash_embed([texts[i]])[0]
                vectors[prefix + "/" + key + "/" + field] = max(
                    abs(a - b) for a, b in zip(stored, expected)) if len(stored) == DIMS else "dims"
            out["vectors"] = vectors
        out["namespaces"] = [list(n) for n in store.list_namespaces()]
        out["namespaces/depth1"] = [list(n) for n in store.list_namespaces(max_depth=1)]
        print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
