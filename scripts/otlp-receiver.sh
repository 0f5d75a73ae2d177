#!/usr/bin/env bash
# A real OTLP receiver for the trace tests: Arize Phoenix (PyPI `arize-phoenix`, pinned), in
# a venv of its own under ~/.cache/stategraph, storing in SQLite in a temporary directory,
# listening on 127.0.0.1 only, with its telemetry and every outside resource turned off.
#
#   scripts/otlp-receiver.sh start DIR   # installs if needed, starts, waits until ready;
#                                        # prints the base URL (OTLP: URL/v1/traces,
#                                        # spans read back: URL/v1/projects/NAME/spans)
#   scripts/otlp-receiver.sh stop DIR    # stops it and removes DIR
#
# No OpenTelemetry Collector is packaged in the registries this project uses (Debian has only
# the Go libraries, PyPI and npm no collector binary), and Phoenix both receives OTLP and
# answers queries for the spans it stored, which the tests need.
set -euo pipefail
cmd=${1:?start or stop}
dir=${2:?a directory for the receiver files}
version=20.26.1
venv=${STATEGRAPH_PHOENIX_VENV:-$HOME/.cache/stategraph/phoenix-$version}
case $cmd in
  start)
    if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -c "import phoenix" 2>/dev/null; then
      rm -rf "$venv"
      python3 -m venv "$venv"
      "$venv/bin/python" -m pip install -q --disable-pip-version-check "arize-phoenix==$version" >&2
    fi
    mkdir -p "$dir"
    # Two free ports side by side (HTTP, then gRPC), unless given.
    port=${STATEGRAPH_OTLP_PORT:-$(python3 -c '
import socket
while True:
    a = socket.socket(); a.bind(("127.0.0.1", 0)); port = a.getsockname()[1]
    try:
        b = socket.socket(); b.bind(("127.0.0.1", port + 1)); b.close(); a.close(); print(port); break
    except OSError:
        a.close()
')}
    # gRPC is bound to "[::]" by Phoenix itself: otlp-receiver-launch.py binds it to 127.0.0.1.
    (
      export PHOENIX_WORKING_DIR="$dir" PHOENIX_HOST=127.0.0.1 PHOENIX_PORT="$port" \
        PHOENIX_GRPC_PORT=$((port + 1)) PHOENIX_SQL_DATABASE_URL="sqlite:///$dir/phoenix.db" \
        PHOENIX_TELEMETRY_ENABLED=false PHOENIX_ALLOW_EXTERNAL_RESOURCES=false \
        PHOENIX_DISABLE_AGENT_ASSISTANT=true PHOENIX_ENABLE_MCP_SERVER=false \
        PHOENIX_AGENTS_DISABLE_BASH=true PHOENIX_AGENTS_DISABLE_WEB_ACCESS=true
      nohup "$venv/bin/python" "$(dirname "$0")/otlp-receiver-launch.py" >"$dir/phoenix.log" 2>&1 &
      echo $! >"$dir/pid"
    )
    for _ in $(seq 1 180); do
      if curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then
        echo "http://127.0.0.1:$port"
        exit 0
      fi
      kill -0 "$(cat "$dir/pid")" 2>/dev/null || break
      sleep 1
    done
    echo "the OTLP receiver did not start; its log:" >&2
    tail -n 40 "$dir/phoenix.log" >&2 || true
    exit 1
    ;;
  stop)
    if [[ -f $dir/pid ]]; then
      kill "$(cat "$dir/pid")" 2>/dev/null || true
      for _ in $(seq 1 30); do kill -0 "$(cat "$dir/pid")" 2>/dev/null || break; sleep 1; done
    fi
    rm -rf "$dir"
    ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
