"""S4 with the CPU time per turn: the driver's `chat` graph for N turns on one thread, with
the CPU time of the whole process (Python, tokio and SQLite threads together:
`time.process_time`) per turn, far steadier than wall time on a loaded machine; then S6
`get_state` of the latest checkpoint (median of 20). Prints one JSON line.

    python crates/python/bench/s4_cpu.py KIND TURNS [DRIVER]

KIND is a saver of scripts/bench_io.py: memory, sqlite, postgres (LangGraph's own) or
stategraph-memory, stategraph-sqlite, stategraph-postgres (this package). DRIVER is the
driver's bench_langgraph.py (default: ../shared/bench/ next to the repository), run from a
copy in a scratch directory (its SQLite files go there). Postgres on PG_PORT (default 55432,
as the driver).
"""

import json
import pathlib
import random
import shutil
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "scripts"))
import bench_io  # noqa: E402


def main() -> None:
    kind, turns = sys.argv[1], int(sys.argv[2])
    default = REPO.parent / "shared" / "bench" / "bench_langgraph.py"
    driver = sys.argv[3] if len(sys.argv) > 3 else str(default)
    # The driver keeps its SQLite files next to itself: run a copy in a scratch directory.
    scratch = tempfile.mkdtemp(prefix="s4cpu-")
    bl = bench_io.load_driver(shutil.copy(driver, scratch))
    graphs = bl.build_graphs()
    db = f"s4cpu_{kind}".replace("-", "_")
    dsn = bl.fresh_db(db) if kind.endswith("postgres") else None
    cp = bench_io.make_cp(bl, kind, f"s4cpu_{kind}", dsn)
    try:
        g = graphs["chat"].compile(checkpointer=cp.saver)
        pool = graphs["msg_pool"]
        rnd = random.Random(7)
        users = [
            {"role": "user", "content": pool[rnd.randrange(len(pool))]} for _ in range(turns)
        ]
        c = bl.cfg("chat")
        lat = []
        c0, t0 = time.process_time(), time.perf_counter()
        for t in range(turns):
            a = time.perf_counter()
            g.invoke({"messages": [users[t]]}, c)
            lat.append(time.perf_counter() - a)
        cpu, wall = time.process_time() - c0, time.perf_counter() - t0
        ts = []
        for _ in range(20):
            a = time.perf_counter()
            g.get_state(c)
            ts.append(time.perf_counter() - a)
        print(json.dumps({
            "cp": kind, "turns": turns, "cpu_ms_per_turn": cpu / turns * 1e3, "wall_s": wall,
            "last100_ms": bl.median(lat[-100:]) * 1e3,
            "get_state_latest_ms": bl.median(ts) * 1e3, "rss_mb": bl.rss_mb(),
        }))
    finally:
        cp.close()
        if dsn:
            bl.drop_db(db)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
