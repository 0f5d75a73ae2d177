"""Python's column of store_bench.rs: the same phases on LangGraph's stores.

usage: store_bench.py N SQLITE_PATH [POSTGRES_URL]; prints JSON rows
[name, [put, get, filtered, vector]] (µs per op; null = not measurable here: this
Python's sqlite3 cannot load sqlite-vec and the server has no pgvector).
"""
import json
import sys
import time

GETS = 2000
SEARCHES = 50
DIMS = 64
WORDS = ["rust", "python", "garden", "music", "tea", "travel", "code", "books"]


def hash_embed(texts):
    out = []
    for text in texts:
        v = [0.0] * DIMS
        for w in "".join(c if c.isalnum() else " " for c in text).split():
            h = 0xCBF29CE484222325
            for b in w.lower().encode("utf-8"):
                h ^= b
                h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
            v[h % DIMS] += 1.0
        n = sum(x * x for x in v) ** 0.5
        out.append([x / n for x in v] if n > 0 else v)
    return out


def value(i):
    text = f"{WORDS[i % 8]} {WORDS[(i // 8) % 8]} note {i}"
    return {"text": text, "n": i, "group": i % 10, "nested": {"k": i % 100}}


def run(store, n, vectors):
    t = time.perf_counter()
    for i in range(n):
        store.put(("bench", f"g{i % 10}"), f"k{i}", value(i))
    put = (time.perf_counter() - t) * 1e6 / n
    t = time.perf_counter()
    for j in range(GETS):
        i = (j * 7919) % n
        assert store.get(("bench", f"g{i % 10}"), f"k{i}") is not None
    get = (time.perf_counter() - t) * 1e6 / GETS
    t = time.perf_counter()
    for j in range(SEARCHES):
        hits = store.search(("bench",), filter={"n": {"$gte": n - 10 - j}, "group": (n - 1 - j) % 10}, limit=10)
        assert hits
    filtered = (time.perf_counter() - t) * 1e6 / SEARCHES
    vector = None
    if vectors:
        t = time.perf_counter()
        for j in range(SEARCHES):
            q = ["rust garden", "python music", "tea travel", "books code"][j % 4]
            hits = store.search(("bench",), query=q, limit=10)
            assert hits[0].score is not None
        vector = (time.perf_counter() - t) * 1e6 / SEARCHES
    return [put, get, filtered, vector]


def main():
    n = int(sys.argv[1])
    rows = []
    from langgraph.store.memory import InMemoryStore

    mem = InMemoryStore(index={"dims": DIMS, "embed": hash_embed, "fields": ["text"]})
    rows.append(["python memory", run(mem, n, True)])
    from langgraph.store.sqlite import SqliteStore

    with SqliteStore.from_conn_string(sys.argv[2]) as s:
        s.setup()
        rows.append(["python sqlite", run(s, n, False)])
    if len(sys.argv) > 3:
        from langgraph.store.postgres import PostgresStore

        with PostgresStore.from_conn_string(sys.argv[3]) as s:
            s.setup()
            s.conn.execute("TRUNCATE store")
            rows.append(["python postgres", run(s, n, False)])
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
