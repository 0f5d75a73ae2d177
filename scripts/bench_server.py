"""Load driver of scripts/bench_server.sh: runs of graph `seed` through `langgraph_sdk`.

    python bench_server.py URL CLIENTS SECONDS LABEL [SCENARIO]

CLIENTS concurrent clients (split over up to 4 processes, each an asyncio loop, so that the
driver is not one Python thread) each repeat, until SECONDS have passed, one of two
scenarios (input `{}` in both):

- `fresh` (the default): create a thread, then `runs.wait` a `seed` run on it;
- `thread`: a conversation: the client creates one thread first and then `runs.wait`s run
  after run on it (how a chat client uses a server).

Prints one JSON line: completed runs, runs per second over the window, p50/p99 latency of
`runs.wait` (ms), errors, and the driver's own CPU time per run (ms, all its processes, from
their first request to their last): on a small machine the client competes with the server
for the cores. A run counts when its
`runs.wait` returned the final state (`name` and `address` set).
"""

import asyncio
import json
import multiprocessing as mp
import sys
import time

from langgraph_sdk import get_client

EXPECTED = {"name": "pavaneeshwar", "address": "Hyderabad residency"}


async def clients(
    url: str, n: int, deadline: float, scenario: str
) -> tuple[list[float], int]:
    client = get_client(url=url)
    latencies: list[float] = []
    errors = 0

    async def one_client() -> None:
        nonlocal errors
        thread = None
        while time.monotonic() < deadline:
            try:
                if thread is None or scenario == "fresh":
                    thread = await client.threads.create()
                t0 = time.perf_counter()
                out = await client.runs.wait(thread["thread_id"], "seed", input={})
                dt = time.perf_counter() - t0
            except Exception as e:  # noqa: BLE001 - any failure is one error
                errors += 1
                if errors <= 3:
                    print("error:", repr(e)[:300], file=sys.stderr, flush=True)
                await asyncio.sleep(0.05)
                continue
            if isinstance(out, dict) and all(out.get(k) == v for k, v in EXPECTED.items()):
                latencies.append(dt)
            else:
                errors += 1

    await asyncio.gather(*(one_client() for _ in range(n)))
    return latencies, errors


def worker(url: str, n: int, deadline: float, scenario: str, out: "mp.Queue") -> None:
    # CPU time of the load itself, not of starting the process and importing the SDK.
    cpu0 = time.process_time()
    latencies, errors = asyncio.run(clients(url, n, deadline, scenario))
    out.put((latencies, errors, time.process_time() - cpu0))


def percentile(xs: list[float], p: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main() -> None:
    url, n, seconds, label = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    scenario = sys.argv[5] if len(sys.argv) > 5 else "fresh"
    if scenario not in ("fresh", "thread"):
        sys.exit(f"unknown scenario {scenario!r}: fresh or thread")
    procs = min(n, 4)
    shares = [n // procs + (1 if i < n % procs else 0) for i in range(procs)]
    q: "mp.Queue" = mp.Queue()
    start = time.monotonic()
    deadline = start + seconds
    ps = [mp.Process(target=worker, args=(url, k, deadline, scenario, q)) for k in shares]
    for p in ps:
        p.start()
    results = [q.get() for _ in ps]
    for p in ps:
        p.join()
    elapsed = time.monotonic() - start
    driver_cpu = sum(r[2] for r in results)
    lat = [x for r in results for x in r[0]]
    errors = sum(r[1] for r in results)
    print(
        json.dumps(
            {
                "server": label,
                "scenario": scenario,
                "clients": n,
                "seconds": round(elapsed, 2),
                "runs": len(lat),
                "runs_per_s": round(len(lat) / elapsed, 1),
                "p50_ms": round(percentile(lat, 50) * 1000, 2),
                "p99_ms": round(percentile(lat, 99) * 1000, 2),
                "errors": errors,
                "driver_cpu_ms_per_run": round(driver_cpu * 1000 / len(lat), 2) if lat else None,
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
