#!/usr/bin/env bash
# The `stategraph` command against Python LangGraph's API (BENCHMARKS.md, section
# "The `stategraph` command"): `history --json` of a 10 000-checkpoint thread and `stats` of a
# ~1 GB SQLite file, wall time, CPU time and peak RSS (GNU time), each side run twice,
# alternating, in one run on one machine.
#
# Usage: bash crates/cli/bench/run.sh [PYTHON] [DIR]   (DIR keeps the databases; ~1.1 GB)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
python=${1:-${STATEGRAPH_PYTHON:-$repo/target/langgraph-venv/bin/python}}
dir=${2:-$(mktemp -d)}
script="$repo/crates/cli/bench/history_bench.py"
cargo build --release -p stategraph-cli --manifest-path "$repo/Cargo.toml"
bin="$repo/target/release/stategraph"
[ -f "$dir/long.db" ] || "$python" "$script" write "$dir/long.db" 10000
[ -f "$dir/chat.db" ] || "$python" "$script" chat "$dir/chat.db" 10000
[ -f "$dir/big.db" ] || "$python" "$script" big "$dir/big.db" 5000
ls -lL "$dir/long.db" "$dir/chat.db" "$dir/big.db"
fmt='%e s wall, %U s user, %S s sys, %M KiB peak RSS'
for _ in 1 2; do
  /usr/bin/time -f "rust   history --json 10k: $fmt" "$bin" history --json "$dir/long.db" long >/dev/null
  /usr/bin/time -f "python history 10k:        $fmt" "$python" "$script" history "$dir/long.db" >/dev/null
done
for _ in 1 2; do
  /usr/bin/time -f "rust   history --json chat: $fmt" "$bin" history --json "$dir/chat.db" chat >/dev/null
  /usr/bin/time -f "python history chat:       $fmt" "$python" "$script" history "$dir/chat.db" chat >/dev/null
done
for _ in 1 2; do
  /usr/bin/time -f "rust   stats 1 GB:         $fmt" "$bin" stats --json "$dir/big.db" >/dev/null
  /usr/bin/time -f "python stats 1 GB:         $fmt" "$python" "$script" stats "$dir/big.db" >/dev/null
done
