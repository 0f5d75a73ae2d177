#!/usr/bin/env bash
# The project's test command (the README's second set-up command; .ci/run calls it).
#
# It prepares what the tests need -- a running Postgres (127.0.0.1:5432, user postgres, trust
# auth; each test creates and drops its own database), the pinned Python LangGraph in a
# venv for the interop tests and the local model servers of scripts/model-servers.sh -- then
# checks formatting and lints and runs every test of the workspace, interop, Postgres and
# model tests included.
#
# MCP servers for crates/stategraph/tests/mcp.rs: scripts/mcp-servers.sh. Chromium and the JS
# client for crates/server/tests/browser.rs: scripts/browser.sh.
#
# Environment: STATEGRAPH_TEST_OTLP_URL (set here: the OTLP receiver it starts),
# STATEGRAPH_TEST_POSTGRES_URL (default postgresql://postgres@127.0.0.1:5432/postgres),
# STATEGRAPH_PYTHON (a Python with the pinned LangGraph; default: the venv
# scripts/setup-langgraph.sh makes in target/langgraph-venv).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
export CARGO_TERM_COLOR=never

export STATEGRAPH_TEST_POSTGRES_URL=${STATEGRAPH_TEST_POSTGRES_URL:-postgresql://postgres@127.0.0.1:5432/postgres}

echo "== postgres"
if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
  fi
  for _ in $(seq 1 30); do pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null && break; sleep 1; done
fi
pg_isready -h 127.0.0.1 -p 5432
export STATEGRAPH_REQUIRE_POSTGRES=1
# The fault tests start private clusters (initdb + pg_ctl on a free port, as the `postgres`
# user when run as root): tell them where the server binaries are.
if [ -z "${STATEGRAPH_PG_BIN:-}" ]; then
  for dir in "$(pg_config --bindir 2>/dev/null || true)" $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -n "$dir" ] && [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
      export STATEGRAPH_PG_BIN="$dir"
      break
    fi
  done
fi
echo "private clusters use ${STATEGRAPH_PG_BIN:?no initdb/pg_ctl found: install the Postgres server}"

echo "== python langgraph (interop)"
if [ -z "${STATEGRAPH_PYTHON:-}" ]; then
  STATEGRAPH_PYTHON=$(bash "$repo/scripts/setup-langgraph.sh" "$repo/target/langgraph-venv" | tail -n1)
fi
export STATEGRAPH_PYTHON
export STATEGRAPH_INTEROP=1
echo "using $STATEGRAPH_PYTHON"

# Every server this script starts is stopped when it ends, however it ends (one EXIT trap).
otlp_dir=$(mktemp -d)
export STATEGRAPH_MODEL_SERVERS_RUN="$repo/target/model-servers"
stop_servers() {
  bash "$repo/scripts/otlp-receiver.sh" stop "$otlp_dir" || true
  bash "$repo/scripts/model-servers.sh" stop || true
  bash "$repo/scripts/mcp-servers.sh" stop || true
}
trap stop_servers EXIT

echo "== browser (Debian's chromium; npm @langchain/langgraph-sdk bundled by esbuild, playwright-core)"
# crates/server/tests/browser.rs: a page on another origin uses the official JS client.
eval "$(bash "$repo/scripts/browser.sh")"
export STATEGRAPH_REQUIRE_BROWSER=1

echo "== mcp servers (npm @modelcontextprotocol/server-everything, PyPI mcp's FastMCP)"
# Installed into ~/.cache/stategraph/mcp (kept between runs), the streamable-HTTP ones started
# on 127.0.0.1; tests/mcp.rs spawns the stdio ones.
eval "$(bash "$repo/scripts/mcp-servers.sh" start)"
export STATEGRAPH_REQUIRE_MCP=1

echo "== model servers (llama.cpp's server over a tiny model, LiteLLM's proxy for Anthropic's wire)"
# Built and installed from PyPI on the first run (cached in ~/.cache/stategraph/model-servers);
# started on free 127.0.0.1 ports.
bash "$repo/scripts/model-servers.sh" start
eval "$(bash "$repo/scripts/model-servers.sh" env)"
export STATEGRAPH_REQUIRE_MODELS=1
python3 "$repo/scripts/model-servers/check.py"

echo "== OTLP receiver (traces: crates/stategraph/tests/otel.rs, crates/server/tests/otel.rs)"
# Arize Phoenix from PyPI (a venv under ~/.cache/stategraph), on 127.0.0.1, SQLite in a
# temporary directory, its telemetry off.
STATEGRAPH_TEST_OTLP_URL=$(bash "$repo/scripts/otlp-receiver.sh" start "$otlp_dir")
export STATEGRAPH_TEST_OTLP_URL STATEGRAPH_REQUIRE_OTLP=1
echo "receiving on $STATEGRAPH_TEST_OTLP_URL"

echo "== rust-version"
bash "$repo/scripts/check-msrv.sh"

echo "== doc anchors"
python3 "$repo/scripts/check-doc-anchors.py"

echo "== module circles (no new import circle inside a crate; scripts/module-cycles.txt lists today's)"
python3 "$repo/scripts/check-module-cycles.py" --self-test
python3 "$repo/scripts/check-module-cycles.py"

echo "== rustfmt"
cargo fmt --all -- --check
# `stategraph serve` is a feature of the command (off by default, so that `cargo install`
# builds no server): the workspace is checked and tested with it, and the command alone
# without it (its stand-in `serve` that says how to get the server). MCP tools
# (`stategraph/mcp`, off by default) likewise, and `stategraph/otel` (and the command's
# `otel`): the OTLP export, tested against the receiver.
full=(--workspace --features stategraph-cli/serve,stategraph/mcp,stategraph/otel,stategraph-cli/otel)
echo "== clippy"
cargo clippy "${full[@]}" --all-targets -- -D warnings
cargo clippy -p stategraph-cli --all-targets -- -D warnings
echo "== tests"
cargo test "${full[@]}" --no-fail-fast
cargo test -p stategraph-cli --test tests --no-fail-fast
echo "== sqlx-compat (sqlx 0.8 and stategraph's default features in one build, one SQLite file)"
# tests/sqlx-compat is outside the workspace with its own lock (rusqlite 0.32 on the
# libsqlite3-sys 0.30 sqlx 0.8 links); it builds into the workspace's target directory, so
# the dependencies both share are not built twice. Not `--locked`: a dependency our crates
# gain later is added to that lock, every version already in it stays as pinned.
CARGO_TARGET_DIR="$repo/target" cargo run --quiet --manifest-path "$repo/tests/sqlx-compat/Cargo.toml"
echo "== python package (crates/python: wheel, then LangGraph's conformance suite and interop)"
# Builds the `stategraph` wheel (maturin, abi3) into target/wheels, installs it in a venv of
# its own (the pins of the LangGraph venv plus maturin and pytest; the LangGraph venv itself
# is never changed) and runs crates/python/tests with pytest.
if [ -n "${STATEGRAPH_PYTHON:-}" ]; then
  pyvenv="$repo/target/python-venv"
  want=$(printf '%s\n' "$("$STATEGRAPH_PYTHON" -m pip freeze --disable-pip-version-check)" \
    "maturin>=1.5,<2" "pytest>=8" "pytest-asyncio>=0.24")
  if [[ ! -x $pyvenv/bin/python || ! -f $pyvenv/.stategraph-pins || "$(cat "$pyvenv/.stategraph-pins")" != "$want" ]]; then
    rm -rf "$pyvenv"
    python3 -m venv "$pyvenv"
    printf '%s\n' "$want" >"$repo/target/python-venv.requirements.txt"
    "$pyvenv/bin/python" -m pip install -q --disable-pip-version-check \
      -r "$repo/target/python-venv.requirements.txt" >&2
    printf '%s\n' "$want" >"$pyvenv/.stategraph-pins"
  fi
  rm -rf "$repo/target/wheels"
  (cd crates/python && "$pyvenv/bin/maturin" build --quiet --interpreter "$pyvenv/bin/python" \
    --out "$repo/target/wheels")
  "$pyvenv/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps \
    "$repo"/target/wheels/stategraph-*.whl
  (cd crates/python && "$pyvenv/bin/python" -m pytest tests -q -p no:cacheprovider)
else
  echo "no STATEGRAPH_PYTHON: the python package tests are skipped"
fi
echo "== docs"
RUSTDOCFLAGS="-D warnings" cargo doc "${full[@]}" --no-deps --quiet
echo "== publish (every crate packaged and built as crates.io would get it)"
bash "$repo/scripts/check-publish.sh"
