#!/usr/bin/env bash
# The MCP servers crates/stategraph/tests/mcp.rs runs against, none written here:
# @modelcontextprotocol/server-everything from npm (pinned by scripts/mcp/package-lock.json)
# and a FastMCP server (tests/mcp/fastmcp_server.py on PyPI `mcp`), with
# langchain-mcp-adapters beside it, whose ToolMessages the tests compare with ours (both
# pinned by scripts/mcp/requirements.txt).
#
#   eval "$(bash scripts/mcp-servers.sh start)"   # install if needed, start, print exports
#   bash scripts/mcp-servers.sh stop
#
# `start` installs both into STATEGRAPH_MCP_CACHE (default ~/.cache/stategraph/mcp; kept
# between runs, reinstalled when a pin changes), starts the two streamable-HTTP servers on
# free ports of 127.0.0.1 (logs and pids in target/mcp-servers/) and prints the `export`
# lines of the env vars the tests read (the stdio servers are spawned by the tests
# themselves). Nothing listens beyond 127.0.0.1 and nothing phones home: npm runs without
# audit, fund or update checks and no install scripts; pip without its version check.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${STATEGRAPH_MCP_CACHE:-$HOME/.cache/stategraph/mcp}
run="$repo/target/mcp-servers"
pins="$repo/scripts/mcp"
everything="$cache/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
export NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false

install() {
  mkdir -p "$cache"
  if [[ ! -f $everything ]] || ! cmp -s "$pins/package-lock.json" "$cache/package-lock.json"; then
    cp "$pins/package.json" "$pins/package-lock.json" "$cache/"
    (cd "$cache" && npm ci --no-audit --no-fund --no-update-notifier --ignore-scripts --loglevel=error) >&2
  fi
  if [[ ! -x $cache/venv/bin/python ]] || ! cmp -s "$pins/requirements.txt" "$cache/venv/.stategraph-pins"; then
    rm -rf "$cache/venv"
    python3 -m venv "$cache/venv"
    "$cache/venv/bin/python" -m pip install -q --disable-pip-version-check -r "$pins/requirements.txt" >&2
    cp "$pins/requirements.txt" "$cache/venv/.stategraph-pins"
  fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits until something accepts connections on 127.0.0.1:$1 (the server's log on failure).
wait_port() {
  for _ in $(seq 1 120); do
    if python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$1" 2>/dev/null; then
      return 0
    fi
    sleep 0.5
  done
  echo "MCP server on port $1 did not start:" >&2
  cat "$2" >&2
  return 1
}

stop() {
  shopt -s nullglob
  for pidfile in "$run"/*.pid; do
    kill "$(cat "$pidfile")" 2>/dev/null || true
    rm -f "$pidfile"
  done
}

start() {
  install
  stop
  mkdir -p "$run"
  local ev_port py_port
  ev_port=$(free_port)
  # server-everything's HTTP mode listens on all interfaces: loopback.cjs pins 127.0.0.1.
  PORT=$ev_port nohup node --require "$pins/loopback.cjs" "$everything" streamableHttp \
    >"$run/everything.log" 2>&1 &
  echo $! >"$run/everything.pid"
  py_port=$(free_port)
  nohup "$cache/venv/bin/python" "$repo/crates/stategraph/tests/mcp/fastmcp_server.py" http "$py_port" \
    >"$run/fastmcp.log" 2>&1 &
  echo $! >"$run/fastmcp.pid"
  wait_port "$ev_port" "$run/everything.log"
  wait_port "$py_port" "$run/fastmcp.log"
  echo "export STATEGRAPH_MCP_EVERYTHING_CMD='node $everything stdio'"
  echo "export STATEGRAPH_MCP_EVERYTHING_URL=http://127.0.0.1:$ev_port/mcp"
  echo "export STATEGRAPH_MCP_PYTHON=$cache/venv/bin/python"
  echo "export STATEGRAPH_MCP_FASTMCP_URL=http://127.0.0.1:$py_port/mcp"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
