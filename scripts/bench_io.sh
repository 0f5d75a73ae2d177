#!/usr/bin/env bash
# Scenarios S4-S7 (chat, bigstate, history, concurrency) of shared/bench/SCENARIOS.md on
# the in-memory, SQLite and Postgres savers, stategraph and Python LangGraph alternating in
# one run, then the tables (see BENCHMARKS.md, "S4-S7: SQLite and Postgres").
#
#   scripts/bench_io.sh
#
# Environment:
#   SHARED_DIR          the shared/ folder (default: beside the repo)
#   STATEGRAPH_BENCH_PG Postgres admin URL (default postgresql://postgres@127.0.0.1:5432/postgres);
#                       every run creates a database there and drops it
#   REPS                runs per cell and side (default 3)
#   TURNS               S4 turns on the one chat thread (default 500; 1000 takes the run to ~11 min)
#   S5_INVOKES          S5 invokes (200-step threads) per run (default 2)
#   S7_WORKERS          S7 workers per process (default 1,2,4,8); 2 processes each
#   S7_DURATION         S7 seconds per run (default 5)
#   CPS                 savers for S4-S6 (default memory,sqlite,postgres)
#   SCENARIOS           which of S4 (with S6), S5, S7 to run (default S4,S5,S7)
#   S4_VARIANTS         S4 variants: - (operator.add) and delta (S4′, DeltaChannel)
#                       (default -,delta)
# Output: target/bench-io/{rust.jsonl,python.jsonl,table.md,run.log}.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
shared=${SHARED_DIR:-$(dirname "$repo")/shared}
reps=${REPS:-3}
turns=${TURNS:-500}
s5_invokes=${S5_INVOKES:-2}
s7_workers=${S7_WORKERS:-1,2,4,8}
s7_duration=${S7_DURATION:-5}
cps=${CPS:-memory,sqlite,postgres}
scenarios=",${SCENARIOS:-S4,S5,S7},"
s4_variants=${S4_VARIANTS:--,delta}
pg=${STATEGRAPH_BENCH_PG:-postgresql://postgres@127.0.0.1:5432/postgres}
export STATEGRAPH_BENCH_PG=$pg
# bench_langgraph.py reaches Postgres on 127.0.0.1:$PG_PORT as user postgres.
pg_port=$(sed -E 's#.*:([0-9]+)/[^/]*$#\1#' <<<"$pg")
[[ $pg_port =~ ^[0-9]+$ ]] || pg_port=5432
export PG_PORT=$pg_port
out=target/bench-io
target_dir=${CARGO_TARGET_DIR:-target}
mkdir -p "$out/data"
exec 2> >(tee "$out/run.log" >&2)
export CARGO_TERM_COLOR=never
# Both sides keep their SQLite files in the same folder (bench_langgraph.py's data/).
export STATEGRAPH_BENCH_DATA=$repo/$out/data

if [[ ! -f $shared/bench/bench_langgraph.py ]]; then
  echo "bench_langgraph.py not found under $shared/bench (set SHARED_DIR)" >&2
  exit 1
fi
cp "$shared/bench/bench_langgraph.py" "$out/bench_langgraph.py"
echo "== Python venv" >&2
py=$(bash "$repo/scripts/setup-langgraph.sh" target/langgraph-venv | tail -n 1)
"$py" -c 'import langgraph.checkpoint.postgres' >/dev/null

echo "== tree: $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- crates 2>/dev/null || echo ' + uncommitted changes under crates/'); $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC')" >&2
echo "== build" >&2
cargo build -p stategraph-benches --profile bench --bin io_bench --quiet
rust_bin=$target_dir/release/io_bench

rust=$out/rust.jsonl
python=$out/python.jsonl
rm -f "$rust" "$python"
load() { echo "   (load average: $(cut -d' ' -f1-3 /proc/loadavg))" >&2; }
py_run() { "$py" scripts/bench_io.py "$@" >>"$python"; }
rs_run() { "$rust_bin" "$@" >>"$rust"; }
# One cell: Python then Rust on even reps, Rust then Python on odd ones.
both() { # rep python-args -- rust-args
  local rep=$1; shift
  local pa=() ra=()
  while [[ $1 != -- ]]; do pa+=("$1"); shift; done
  shift
  ra=("$@")
  if (( rep % 2 == 0 )); then py_run "${pa[@]}"; rs_run "${ra[@]}"
  else rs_run "${ra[@]}"; py_run "${pa[@]}"; fi
}

start=$SECONDS
for (( rep = 0; rep < reps; rep++ )); do
  IFS=, read -ra cp_list <<<"$cps"
  for cp in "${cp_list[@]}"; do
    if [[ $scenarios == *,S4,* ]]; then
      IFS=, read -ra s4_list <<<"$s4_variants"
      for s4 in "${s4_list[@]}"; do
        echo "== rep $rep: S4+S6 variant $s4 ($turns turns), $cp" >&2
        both "$rep" worker "$out/bench_langgraph.py" --scenario S4 --cp "$cp" --variant "$s4" \
          --turns "$turns" --rep "$rep" \
          -- run --scenario S4 --cp "$cp" --variant "$s4" --turns "$turns" --rep "$rep"
      done
    fi
    [[ $scenarios == *,S5,* ]] || continue
    for variant in str obj; do
      echo "== rep $rep: S5 $variant ($s5_invokes invokes), $cp" >&2
      both "$rep" worker "$out/bench_langgraph.py" --scenario S5 --cp "$cp" --variant "$variant" \
        --invokes "$s5_invokes" --rep "$rep" \
        -- run --scenario S5 --cp "$cp" --variant "$variant" --invokes "$s5_invokes" --rep "$rep"
    done
  done
  IFS=, read -ra workers <<<"$s7_workers"
  [[ $scenarios == *,S7,* ]] || workers=()
  for n in "${workers[@]}"; do
    echo "== rep $rep: S7 2 x $n, ${s7_duration} s" >&2
    both "$rep" s7 "$out/bench_langgraph.py" --workers "$n" --duration "$s7_duration" --rep "$rep" \
      -- s7 --workers "$n" --duration "$s7_duration" --rep "$rep"
  done
  load
done
echo "== done in $(( SECONDS - start )) s" >&2

"$rust_bin" report "$rust" "$python" "$cps" | tee "$out/table.md"
