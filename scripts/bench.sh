#!/usr/bin/env bash
# Benchmarks stategraph against the pinned Python LangGraph in one run on this machine,
# and prints the comparison table (see BENCHMARKS.md).
#
#   scripts/bench.sh            # Python reps, Rust benches, Python reps again, the table
#
# Environment:
#   SHARED_DIR   the shared/ folder (default: beside the repo, $(dirname repo)/shared)
#   REPS         Python runs per cell, split before and after the Rust benches (default 5)
#   CPS          savers to compare (default none,memory,sqlite; add postgres once the Rust
#                savers are listed in benches/src/savers.rs)
#   SAVER_BENCH  0 to skip the saver micro-benchmarks (default 1)
# Output: target/bench/{python.jsonl,table.md,run.log} (the table also on stdout, progress
# on stderr); criterion's data in target/criterion.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
shared=${SHARED_DIR:-$(dirname "$repo")/shared}
reps=${REPS:-5}
cps=${CPS:-none,memory,sqlite}
saver_bench=${SAVER_BENCH:-1}
out=target/bench
target_dir=${CARGO_TARGET_DIR:-target}
mkdir -p "$out"
exec 2> >(tee "$out/run.log" >&2)
export CARGO_TERM_COLOR=never

if [[ ! -f $shared/bench/bench_langgraph.py ]]; then
  echo "bench_langgraph.py not found under $shared/bench (set SHARED_DIR)" >&2
  exit 1
fi

# The driver keeps its SQLite files beside itself: run a copy, so shared/ stays untouched.
cp "$shared/bench/bench_langgraph.py" "$out/bench_langgraph.py"
echo "== Python venv" >&2
py=$(bash "$repo/scripts/setup-langgraph.sh" target/langgraph-venv | tail -n 1)
"$py" -c 'import langgraph' >/dev/null

echo "== tree: $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- crates 2>/dev/null || echo ' + uncommitted changes under crates/'); $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" >&2
echo "== build" >&2
cargo build -p stategraph-benches --profile bench --benches --bins --quiet

results=$out/python.jsonl
rm -f "$results"
first=$(( (reps + 1) / 2 ))
second=$(( reps - first ))
load() { echo "   (load average: $(cut -d' ' -f1-3 /proc/loadavg))" >&2; }
python_reps() { # offset count
  (( $2 > 0 )) || return 0
  echo "== Python LangGraph: S1-S3, savers $cps, reps $1..$(( $1 + $2 - 1 ))" >&2
  "$py" "$out/bench_langgraph.py" driver --reps "$2" --rep-offset "$1" \
    --only S1,S2,S3 --cps "$cps" --results "$results" >&2
  load
}

# Python and Rust alternate so that host drift hits both sides alike.
python_reps 0 "$first"
for g in S1_seed S2_chain100 S3_fanout put put_writes get_tuple list; do
  rm -rf "${target_dir:?}/criterion/$g"
done
echo "== Rust: engine (S1-S3)" >&2
load
cargo bench -p stategraph-benches --bench engine -- --noplot >&2
python_reps "$first" "$second"
if [[ $saver_bench == 1 ]]; then
  echo "== Rust: savers" >&2
  cargo bench -p stategraph-benches --bench saver -- --noplot >&2
  load
fi

echo "== table" >&2
"$target_dir/release/compare" "$target_dir/criterion" "$results" "$cps" | tee "$out/table.md"
