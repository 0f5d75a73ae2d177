"""The Python side of scenarios S4-S7 (scripts/bench_io.sh): LangGraph's figures with the
graphs, savers and storage measurement of shared/bench/bench_langgraph.py, imported from
the path given, so that the scenarios are exactly the driver's.

  bench_io.py worker BENCH_PY --scenario S4 --cp sqlite [--turns N] [--rep R]
  bench_io.py worker BENCH_PY --scenario S5 --cp postgres --variant str|obj [--invokes K] ...
  bench_io.py s7 BENCH_PY --workers N [--duration S] [--rep R]
  bench_io.py worker BENCH_PY --scenario S1|S2|S4 --cp stategraph-sqlite ...

`--cp stategraph-memory|stategraph-sqlite|stategraph-postgres` runs the same Python graph
code with stategraph's Rust savers (the `stategraph` package of crates/python, which must be
installed in this interpreter: `maturin develop --release` in crates/python) instead of
LangGraph's, for the "Python LangGraph, its savers vs ours" figures; S1 and S2 call the
driver's s1_seed and s2_chain. The plain kinds (memory, sqlite, postgres) are LangGraph's.

S5 and S7 call the driver's own functions (s5_big with k=K, run_s7 with the duration).
S4 runs the driver's chat graph and S6 reads its thread as s4_chat_s6_history does, with
the number of turns as a parameter (the driver's function is fixed at 1 000) and storage
sampled four times as the thread grows. Postgres runs create a database on the driver's
server (PG_PORT) and drop it. Each call prints one JSON line.
"""

import argparse
import importlib.util
import json
import random
import sys
import time


def load_driver(path):
    spec = importlib.util.spec_from_file_location("bench_langgraph", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reset_peak_rss():
    """Resets the peak RSS (VmHWM) to the current RSS (Linux clear_refs 5); False if not."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def chat_and_history(bl, G, cp, turns, variant="-"):
    """S4 for `turns` turns on one thread, then S6 on it (figures named as io_bench's);
    variant `delta` is S4', the driver's chat on a DeltaChannel (`chat_delta`)."""
    g = G["chat_delta" if variant == "delta" else "chat"].compile(checkpointer=cp.saver)
    pool = G["msg_pool"]
    rnd = random.Random(7)
    key = "author" if variant == "delta" else "role"  # as the driver's s4_chat_s6_history
    users = [{key: "user", "content": pool[rnd.randrange(len(pool))]} for _ in range(turns)]
    rss0 = bl.rss_mb()
    c = bl.cfg("chat")
    lat, growth = [], []
    every = max(1, turns // 4)
    for t in range(turns):
        a = time.perf_counter()
        out = g.invoke({"messages": [users[t]]}, c)
        lat.append(time.perf_counter() - a)
        if (t + 1) % every == 0 or t + 1 == turns:
            st, n = cp.storage()["total"], cp.n_checkpoints()
            growth.append({"turn": t + 1, "storage_bytes": st, "n_checkpoints": n,
                           "bytes_per_ckpt": st / max(n, 1)})
    assert len(out["messages"]) == 2 * turns, len(out["messages"])
    head = min(100, turns)
    first, last = bl.median(lat[:head]) * 1e3, bl.median(lat[-head:]) * 1e3
    st, n = cp.storage()["total"], cp.n_checkpoints()
    res = {
        "scenario": "S4", "variant": variant, "cp": cp.kind, "turns": turns,
        "total_s": sum(lat), "turn_first100_ms": first, "turn_last100_ms": last,
        "growth_x": last / first, "rss_before_mb": rss0, "rss_after_s4_mb": bl.rss_mb(),
        "storage_bytes": st, "n_checkpoints": n, "bytes_per_ckpt": st / max(n, 1),
        "growth": growth,
    }
    # S6, as the driver does it: the history's configs only, then 20 get_state each. The
    # listing's own memory: the peak RSS while it runs (reset first) above the RSS before.
    reset = reset_peak_rss()
    rss_before = bl.rss_mb()
    a = time.perf_counter()
    hist = [snap.config for snap in g.get_state_history(c)]
    history_s = time.perf_counter() - a
    history_peak = bl.peak_rss_mb() - rss_before if reset else float("nan")
    mid = hist[len(hist) // 2]

    def timed(config):
        ts = []
        for _ in range(20):
            a = time.perf_counter()
            snap = g.get_state(config)
            ts.append(time.perf_counter() - a)
            assert snap.values["messages"]
        return bl.median(ts) * 1e3

    res.update({
        "s6_history_s": history_s, "s6_history_n": len(hist),
        "s6_history_us_per_ckpt": history_s / len(hist) * 1e6,
        "s6_history_peak_mb": history_peak,
        "s6_get_state_mid_ms": timed(mid), "s6_get_state_latest_ms": timed(c),
        "peak_rss_after_s6_mb": bl.peak_rss_mb(),
    })
    return res


class StategraphCP:
    """The driver's `CP` (saver plus storage measurement) over a stategraph Rust saver."""

    def __init__(self, bl, kind, tag, dsn=None):
        import os
        import sqlite3

        import stategraph

        self.kind = kind
        self.path = None
        self.conn = None
        if kind == "stategraph-memory":
            self.saver = stategraph.MemorySaver()
        elif kind == "stategraph-sqlite":
            os.makedirs(bl.DATA, exist_ok=True)
            self.path = os.path.join(bl.DATA, f"sg_{tag}.sqlite")
            self._remove_files()
            self.saver = stategraph.SqliteSaver(self.path)
            # A second connection, for the storage figures only.
            self.conn = sqlite3.connect(self.path, check_same_thread=False)
        elif kind == "stategraph-postgres":
            from psycopg import Connection
            from psycopg.rows import dict_row

            self.saver = stategraph.PostgresSaver(dsn)
            self.saver.setup()
            self.conn = Connection.connect(dsn, autocommit=True, row_factory=dict_row)
        else:
            raise ValueError(kind)

    def _remove_files(self):
        import os

        for suf in ("", "-wal", "-shm"):
            if os.path.exists(self.path + suf):
                os.remove(self.path + suf)

    def n_checkpoints(self):
        if self.kind == "stategraph-memory":
            return sum(1 for _ in self.saver.list(None))
        row = self.conn.execute("select count(*) as c from checkpoints").fetchone()
        return row["c"] if isinstance(row, dict) else row[0]

    def storage(self):
        import os

        if self.kind == "stategraph-sqlite":
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            main = os.path.getsize(self.path)
            wal = os.path.getsize(self.path + "-wal") if os.path.exists(self.path + "-wal") else 0
            return {"total": main + wal, "file": main, "wal": wal}
        if self.kind == "stategraph-postgres":
            out = {}
            for t in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
                out[t] = self.conn.execute(
                    "select pg_total_relation_size(%s) as s", (t,)
                ).fetchone()["s"]
            out["total"] = sum(out.values())
            return out
        return {"total": float("nan")}  # the Rust memory saver's bytes are not visible here

    def close(self):
        if self.conn is not None:
            self.conn.close()
        if self.path:
            self._remove_files()


def make_cp(bl, kind, tag, dsn):
    if kind.startswith("stategraph-"):
        return StategraphCP(bl, kind, tag, dsn)
    return bl.CP(kind, tag, dsn)


def cmd_worker(bl, a):
    G = bl.build_graphs()
    db = f"py_io_{a.scenario}_{a.variant}_{a.rep}".lower().replace("-", "x")
    dsn = bl.fresh_db(db) if a.cp.endswith("postgres") else None
    cp = make_cp(bl, a.cp, f"io_{a.scenario}_{a.variant}_{a.rep}", dsn)
    try:
        if a.scenario == "S4":
            res = chat_and_history(bl, G, cp, a.turns, a.variant)
        elif a.scenario in ("S1", "S2"):
            run = bl.s1_seed if a.scenario == "S1" else bl.s2_chain
            variant = a.variant if a.variant != "-" else ("new" if a.scenario == "S1" else "-")
            res = run(G, cp, variant)
            res.update({"scenario": a.scenario, "variant": variant, "cp": a.cp})
        else:
            res = bl.s5_big(G, cp, a.variant, k=a.invokes)
            res.update({"scenario": "S5", "variant": a.variant, "cp": a.cp,
                        "invokes": a.invokes})
    finally:
        cp.close()
        if dsn:
            bl.drop_db(db)
    res.update({"rep": a.rep, "calib_ms": bl.calib_ms()})
    print(json.dumps(res))


def cmd_s7(bl, a):
    from langgraph.checkpoint.postgres import PostgresSaver

    db = f"py_io_s7_{a.workers}_{a.rep}"
    dsn = bl.fresh_db(db)
    try:
        with PostgresSaver.from_conn_string(dsn) as s:
            s.setup()
        res = bl.run_s7(a.workers, a.rep, dsn, duration=a.duration)
    finally:
        bl.drop_db(db)
    print(json.dumps(res))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("worker")
    w.add_argument("bench")
    w.add_argument("--scenario", required=True, choices=["S1", "S2", "S4", "S5"])
    w.add_argument("--cp", required=True)
    w.add_argument("--variant", default="-")
    w.add_argument("--turns", type=int, default=1000)
    w.add_argument("--invokes", type=int, default=3)
    w.add_argument("--rep", type=int, default=0)
    s = sub.add_parser("s7")
    s.add_argument("bench")
    s.add_argument("--workers", type=int, required=True)
    s.add_argument("--duration", type=float, default=10.0)
    s.add_argument("--rep", type=int, default=0)
    a = ap.parse_args()
    bl = load_driver(a.bench)
    {"worker": cmd_worker, "s7": cmd_s7}[a.cmd](bl, a)


if __name__ == "__main__":
    sys.exit(main())
