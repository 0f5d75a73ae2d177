#!/usr/bin/env bash
# Agent Server load figures (issue 13): runs per second and p50/p99 latency of `runs.wait`
# through the official Python client (langgraph_sdk, a fresh thread per run, graph `seed`)
# at 1, 8 and 32 concurrent clients, each level bounded in time, against
#   (a) stategraph's server (examples/agent_server.rs, release build, Postgres), and
#   (b) Python's in-memory dev server, `langgraph dev` from langgraph-cli[inmem], serving the
#       same graph written in Python (a langgraph.json and module written to a temp dir),
# in the same run, alternating server by server at each level. All traffic on 127.0.0.1.
#
#   scripts/bench_server.sh
#
# Two scenarios (SCENARIOS, default both): `fresh`, a new thread per run (`threads.create`
# then `runs.wait`), and `thread`, a conversation (each client keeps one thread and
# `runs.wait`s on it run after run). Each (scenario, level) is measured REPEATS times (default
# 3), the two servers alternating, and the table gives the medians (with the range of ours).
#
# Environment: SECONDS_PER_LEVEL (default 10), LEVELS (default "1 8 32"), WORKERS (runs at
# once per server: our --workers and langgraph dev's --n-jobs-per-worker; default 32),
# PG_URL (default postgresql://postgres@127.0.0.1:5432/postgres; a database
# sg_bench_server is created there and dropped), SDK_PY (the driver's python, with
# langgraph_sdk; default /work/langgraph-venv/bin/python), LG_VENV (the venv of
# `langgraph dev`; created with the pinned versions below when missing; default
# /work/venv-server), SERVER_BIN (our server's binary; default: the release build of
# examples/agent_server.rs, built first), SIDES (default "stategraph python"; "stategraph"
# alone compares two builds of ours quickly). Output: JSON lines in target/bench-server/results.jsonl and a
# markdown table on stdout, with each server's CPU time per run (ours: its process and its
# Postgres backends; Python's: the `langgraph dev` process and its children), the load
# driver's own CPU time per run (the SDK client shares the machine's cores) and, for ours,
# the Postgres transactions per run (pg_stat_database of its database; Postgres publishes
# these counters with up to a second's delay, so the figure is approximate).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
secs=${SECONDS_PER_LEVEL:-10}
levels=${LEVELS:-1 8 32}
workers=${WORKERS:-32}
pg=${PG_URL:-postgresql://postgres@127.0.0.1:5432/postgres}
sdk_py=${SDK_PY:-/work/langgraph-venv/bin/python}
lg_venv=${LG_VENV:-/work/venv-server}
server_bin=${SERVER_BIN:-}
sides=${SIDES:-stategraph python}
scenarios=${SCENARIOS:-fresh thread}
repeats=${REPEATS:-3}
# The versions `langgraph dev` runs with (the pinned langgraph and SDK of this project).
LG_PINS=("langgraph-cli[inmem]==0.4.40" "langgraph-api==0.16.7" "langgraph-runtime-inmem==0.36.7"
  "langgraph==1.2.24" "langgraph-sdk==0.4.14")
out=target/bench-server
mkdir -p "$out"
results=$out/results.jsonl
: >"$results"

if [ ! -x "$lg_venv/bin/langgraph" ]; then
  python3 -m venv "$lg_venv"
  "$lg_venv/bin/pip" install -q "${LG_PINS[@]}"
fi
"$sdk_py" -c 'import langgraph_sdk' || { echo "SDK_PY lacks langgraph_sdk" >&2; exit 1; }
if [ -z "$server_bin" ]; then
  cargo build --release -q -p stategraph-server --example agent_server
  server_bin=target/release/examples/agent_server
fi

pids=()
tmp=$(mktemp -d)
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  psql -q "$pg" -c "DROP DATABASE IF EXISTS sg_bench_server WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# (a) Ours, on a fresh database.
psql -q "$pg" -c "DROP DATABASE IF EXISTS sg_bench_server WITH (FORCE)" >/dev/null
psql -q "$pg" -c "CREATE DATABASE sg_bench_server" >/dev/null
db_url="${pg%/*}/sg_bench_server"
"$server_bin" --database-url "$db_url" --port 0 --workers "$workers" \
  >"$tmp/ours.out" 2>"$out/ours.log" &
pids+=($!)

# (b) Python's dev server, on the same graph written in Python.
cat >"$tmp/seed_graph.py" <<'EOF'
"""The quickstart graph, as examples/agent_server.rs registers it under `seed`."""
from typing import TypedDict

from langgraph.graph import END, START, StateGraph


class Person(TypedDict, total=False):
    name: str
    address: str


def get_address(state: Person) -> Person:
    return {"name": "pavaneeshwar", "address": "Hyderabad residency"}


builder = StateGraph(Person)
builder.add_node("get_address", get_address)
builder.add_edge(START, "get_address")
builder.add_edge("get_address", END)
graph = builder.compile()
EOF
cat >"$tmp/langgraph.json" <<'EOF'
{"dependencies": ["."], "graphs": {"seed": "./seed_graph.py:graph"}}
EOF
py_port=$("$sdk_py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
(cd "$tmp" && LANGSMITH_TRACING=false LANGGRAPH_CLI_NO_ANALYTICS=1 \
  exec "$lg_venv/bin/langgraph" dev --config langgraph.json --port "$py_port" --no-browser \
  --no-reload --n-jobs-per-worker "$workers" --server-log-level warning \
  >"$repo/$out/python.log" 2>&1) &
pids+=($!)
ours_pid=${pids[0]}
py_pid=${pids[1]}

# CPU seconds (user + system, all threads) of processes and their descendants.
cpu_of() {
  local total=0 p
  for p in "$@"; do
    for q in $p $(pgrep -P "$p" 2>/dev/null); do
      [ -r "/proc/$q/stat" ] && total=$((total + $(awk '{print $14 + $15 + $16 + $17}' "/proc/$q/stat")))
    done
  done
  echo "$total"
}
# The Postgres backends serving our server's database.
pg_backends() {
  psql -At "$pg" -c "SELECT pid FROM pg_stat_activity WHERE datname = 'sg_bench_server'" 2>/dev/null
}

ours=""
for _ in $(seq 1 300); do
  ours=$(sed -n 's/^listening on //p' "$tmp/ours.out")
  [ -n "$ours" ] && break
  sleep 0.2
done
[ -n "$ours" ] || { echo "our server did not start; see $out/ours.log" >&2; exit 1; }
py_url="http://127.0.0.1:$py_port"
for _ in $(seq 1 300); do
  curl -sf "$py_url/ok" >/dev/null 2>&1 && break
  sleep 0.2
done
curl -sf "$py_url/ok" >/dev/null || { echo "langgraph dev did not start; see $out/python.log" >&2; exit 1; }

echo "== $(git rev-parse --short HEAD); $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC'); ${secs}s per level; $workers runs at once per server" >&2
# Warm-up (connections, first compilations), not recorded.
"$sdk_py" scripts/bench_server.py "$ours" 2 2 warmup >/dev/null
"$sdk_py" scripts/bench_server.py "$py_url" 2 2 warmup >/dev/null
# Transactions committed or rolled back in our database so far.
xacts() {
  psql -At "$pg" -c "SELECT pg_stat_clear_snapshot(); SELECT xact_commit + xact_rollback \
    FROM pg_stat_database WHERE datname = 'sg_bench_server'" 2>/dev/null | tail -1
}
for scenario in $scenarios; do
for n in $levels; do
for rep in $(seq 1 "$repeats"); do
  for side in $sides; do
    url=$ours
    [ "$side" = python ] && url=$py_url
    echo "-- $scenario, $side, $n clients, run $rep" >&2
    if [ "$side" = python ]; then watched=("$py_pid"); else watched=("$ours_pid" $(pg_backends)); fi
    before=$(cpu_of "${watched[@]}")
    xacts_before=$(xacts)
    line=$("$sdk_py" scripts/bench_server.py "$url" "$n" "$secs" "$side" "$scenario")
    after=$(cpu_of "${watched[@]}")
    # Let the backends publish their counters (at most once a second while busy).
    sleep 1.5
    xacts_after=$(xacts)
    # Server CPU per run (ours: the server process and its Postgres backends), in ms: a
    # figure a loaded machine disturbs less than wall-clock rates.
    line=$("$sdk_py" -c 'import json,sys; r=json.loads(sys.argv[1]); t=int(sys.argv[2])*10
r["server_cpu_ms_per_run"]=round(t/r["runs"],2) if r["runs"] else None
if r["server"] == "stategraph" and r["runs"]:
    r["pg_xacts_per_run"]=round(int(sys.argv[3])/r["runs"],1)
print(json.dumps(r))' "$line" "$((after - before))" "$((xacts_after - xacts_before))")
    echo "$line" | tee -a "$results" >&2
  done
done
done
done

"$sdk_py" - "$results" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def med(rs, k):
    xs = [r[k] for r in rs if r.get(k) is not None]
    return round(statistics.median(xs), 1) if xs else "–"
print("| scenario | clients | stategraph runs/s (median; range) | p50 ms | p99 ms | server CPU ms/run | Postgres xacts/run | `langgraph dev` runs/s | p50 ms | p99 ms | server CPU ms/run | driver CPU ms/run (ours / Python's) | throughput ratio |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
keys = []
for r in rows:
    if (r.get("scenario", "fresh"), r["clients"]) not in keys:
        keys.append((r.get("scenario", "fresh"), r["clients"]))
for sc, n in keys:
    a = [r for r in rows if r["server"] == "stategraph" and r.get("scenario", "fresh") == sc and r["clients"] == n]
    b = [r for r in rows if r["server"] == "python" and r.get("scenario", "fresh") == sc and r["clients"] == n]
    if not a:
        continue
    ar = med(a, "runs_per_s")
    rng = f"{min(r['runs_per_s'] for r in a)}–{max(r['runs_per_s'] for r in a)}"
    br = med(b, "runs_per_s") if b else "–"
    ratio = f"{ar / br:.1f}×" if b and br else "–"
    errs = sum(r["errors"] for r in a + b)
    print(f"| {sc} | {n} | {ar} ({rng}) | {med(a, 'p50_ms')} | {med(a, 'p99_ms')} | "
          f"{med(a, 'server_cpu_ms_per_run')} | {med(a, 'pg_xacts_per_run')} | "
          f"{br} | {med(b, 'p50_ms') if b else '–'} | {med(b, 'p99_ms') if b else '–'} | "
          f"{med(b, 'server_cpu_ms_per_run') if b else '–'} | "
          f"{med(a, 'driver_cpu_ms_per_run')} / {med(b, 'driver_cpu_ms_per_run') if b else '–'} | "
          f"{ratio}{f' (errors: {errs})' if errs else ''} |")
EOF
