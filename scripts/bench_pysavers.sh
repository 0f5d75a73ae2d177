#!/usr/bin/env bash
# Python LangGraph with its own savers vs with stategraph's (the `stategraph` package of
# crates/python), the graph code unchanged: scenarios S1, S2 and S4 (with S6 on the S4 thread)
# of shared/bench/SCENARIOS.md, LangGraph's saver and ours alternating cell by cell.
#
#   PY=/path/to/venv/bin/python scripts/bench_pysavers.sh
#
# PY must have the pinned LangGraph and the `stategraph` package installed
# (`VIRTUAL_ENV=$venv maturin develop --release` in crates/python). Environment: SHARED_DIR,
# TURNS (S4 turns, default 1000), REPS (default 1), CPS (default memory,sqlite,postgres),
# PG_PORT (default 5432). Output: JSON lines in target/bench-pysavers/results.jsonl and a
# table on stdout.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
shared=${SHARED_DIR:-$(dirname "$repo")/shared}
py=${PY:?set PY to a python with langgraph and stategraph installed}
turns=${TURNS:-1000}
reps=${REPS:-1}
cps=${CPS:-memory,sqlite,postgres}
export PG_PORT=${PG_PORT:-5432}
out=target/bench-pysavers
mkdir -p "$out/data"
cp "$shared/bench/bench_langgraph.py" "$out/bench_langgraph.py"
export STATEGRAPH_BENCH_DATA=$repo/$out/data
results=$out/results.jsonl
: >"$results"
"$py" -c 'import stategraph, langgraph' || { echo "PY lacks stategraph or langgraph" >&2; exit 1; }
echo "== $(git rev-parse --short HEAD); $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC')" >&2
for rep in $(seq 0 $((reps - 1))); do
  for scenario in S1 S2 S4; do
    for cp in ${cps//,/ }; do
      for kind in "$cp" "stategraph-$cp"; do
        echo "-- $scenario $kind rep $rep" >&2
        rm -rf "$out/data"/*
        (cd "$out" && "$py" "$repo/scripts/bench_io.py" worker bench_langgraph.py \
          --scenario "$scenario" --cp "$kind" --turns "$turns" --rep "$rep") | tail -n 1 >>"$results"
      done
    done
  done
done
"$py" - "$results" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def pick(r):
    if r.get("scenario") == "S4" or "s4_last100_ms" in r or "last100_ms" in r:
        keys = [k for k in r if isinstance(r[k], (int, float)) and k not in ("rep", "calib_ms", "turns")]
    else:
        keys = [k for k in r if isinstance(r[k], (int, float)) and k not in ("rep", "calib_ms")]
    return {k: r[k] for k in keys}
for r in rows:
    print(r.get("scenario"), r.get("cp"), json.dumps(pick(r)))
EOF
