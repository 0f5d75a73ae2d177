#!/usr/bin/env bash
# Local model servers for the chat-model tests: `start`, `stop`, `env`, `install`.
#
# * llama.cpp's `llama-server` (an OpenAI-compatible /v1/chat/completions with streaming,
#   tool calls, json_schema output and usage), built from the llama.cpp sources that PyPI's
#   `llama-cpp-python` sdist vendors, with cmake and ninja from PyPI: CPU only, static, no
#   web UI, no downloader (built without curl and OpenSSL, so it cannot fetch anything);
# * over a tiny model that scripts/model-servers/make_tiny_model.py writes with PyPI's
#   `gguf` (hand-set weights: fixed, known answers; see that file);
# * LiteLLM's proxy (PyPI `litellm[proxy]`) in front of it for Anthropic's wire
#   (`/v1/messages`), every fetch from the internet and all telemetry turned off.
#
# Both bind 127.0.0.1 on free ports. `start` waits until each answers; `env` prints the
# export lines the tests read (STATEGRAPH_OPENAI_BASE_URL, STATEGRAPH_OPENAI_MODEL,
# STATEGRAPH_ANTHROPIC_BASE_URL, STATEGRAPH_ANTHROPIC_MODEL); `stop` ends both.
#
# Installs are cached in $STATEGRAPH_MODEL_SERVERS_CACHE (default
# ~/.cache/stategraph/model-servers) and reused; a run's pids, ports and logs live in
# $STATEGRAPH_MODEL_SERVERS_RUN (default <repo>/target/model-servers), so that two checkouts
# can each run their own pair.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${STATEGRAPH_MODEL_SERVERS_CACHE:-$HOME/.cache/stategraph/model-servers}
run=${STATEGRAPH_MODEL_SERVERS_RUN:-$repo/target/model-servers}

# Pins: change one and the cached install is redone.
LLAMA_CPP_PYTHON=0.3.36 # its sdist vendors llama.cpp (ggml 0.25.3)
TOOL_PINS="cmake==4.4.5 ninja==1.13.2 gguf==0.19.0 numpy==2.4.6"
LITELLM_PINS="litellm[proxy]==1.108.7"
MODEL_NAME=stategraph-tiny

log() { echo "model-servers: $*" >&2; }

# A venv at $1 with the pins $2, made again when the pins change.
venv_with() {
  local dir=$1 pins=$2
  if [[ -x $dir/bin/python && -f $dir/.pins && "$(cat "$dir/.pins")" == "$pins" ]]; then
    return
  fi
  rm -rf "$dir"
  python3 -m venv "$dir"
  # shellcheck disable=SC2086
  "$dir/bin/python" -m pip install -q --disable-pip-version-check $pins >&2
  printf '%s' "$pins" >"$dir/.pins"
}

llama_bin() { echo "$cache/llama-$LLAMA_CPP_PYTHON/bin/llama-server"; }

build_llama_server() {
  local bin dest work src
  bin=$(llama_bin)
  [[ -x $bin ]] && return
  venv_with "$cache/tools" "$TOOL_PINS"
  dest=$(dirname "$(dirname "$bin")")
  work=$cache/build-$LLAMA_CPP_PYTHON
  rm -rf "$work" && mkdir -p "$work"
  log "downloading the llama-cpp-python $LLAMA_CPP_PYTHON sdist"
  "$cache/tools/bin/python" -m pip download -q --disable-pip-version-check --no-deps \
    --no-binary llama-cpp-python "llama-cpp-python==$LLAMA_CPP_PYTHON" -d "$work" >&2
  tar xzf "$work"/llama_cpp_python-*.tar.gz -C "$work"
  src=$(echo "$work"/llama_cpp_python-*/vendor/llama.cpp)
  log "building llama-server (CPU only; a few minutes on 2 cores)"
  local start=$SECONDS
  PATH=$cache/tools/bin:$PATH cmake -S "$src" -B "$work/build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
    -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF \
    >"$work/cmake.log" 2>&1 || { tail -n 30 "$work/cmake.log" >&2; return 1; }
  PATH=$cache/tools/bin:$PATH cmake --build "$work/build" --target llama-server \
    -j "$(nproc)" >"$work/build.log" 2>&1 || { tail -n 30 "$work/build.log" >&2; return 1; }
  mkdir -p "$dest/bin"
  cp "$work/build/bin/llama-server" "$dest/bin/"
  log "llama-server built in $((SECONDS - start)) s"
  rm -rf "$work"
}

model_file() {
  local sum
  sum=$(sha256sum "$repo/scripts/model-servers/make_tiny_model.py" | cut -c1-12)
  echo "$cache/models/tiny-$sum.gguf"
}

make_model() {
  local file
  file=$(model_file)
  [[ -f $file ]] && return
  venv_with "$cache/tools" "$TOOL_PINS"
  mkdir -p "$(dirname "$file")"
  "$cache/tools/bin/python" "$repo/scripts/model-servers/make_tiny_model.py" "$file.tmp"
  mv "$file.tmp" "$file"
}

install_all() {
  local start=$SECONDS
  # one install at a time in a cache (two checkouts may run their tests at once)
  mkdir -p "$cache"
  exec 9>"$cache/.install.lock"
  flock 9
  # pip for LiteLLM waits on the network, the build on the CPU: run them side by side
  venv_with "$cache/litellm" "$LITELLM_PINS" &
  local litellm_pid=$!
  build_llama_server || { wait "$litellm_pid" || true; return 1; }
  make_model
  wait "$litellm_pid"
  flock -u 9
  log "installed in $((SECONDS - start)) s"
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits until $1 answers 200 ($2: what, $3: its pid).
wait_http() {
  local url=$1 what=$2 pid=$3
  for _ in $(seq 1 600); do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "$what exited; its log:" && tail -n 40 "$run/$what.log" >&2
      return 1
    fi
    curl -sf -o /dev/null "$url" && return 0
    sleep 0.5
  done
  log "$what did not answer at $url in 300 s" && tail -n 40 "$run/$what.log" >&2
  return 1
}

# Everything LiteLLM could fetch from the internet or report, off.
litellm_env() {
  export LITELLM_LOCAL_MODEL_COST_MAP=True LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS=True \
    LITELLM_LOCAL_BLOG_POSTS=True LITELLM_LOCAL_AUTOROUTER_PRESETS=True \
    LITELLM_LOCAL_POLICY_TEMPLATES=True LITELLM_TELEMETRY_DISABLED=True \
    DISABLE_ADMIN_UI=True LITELLM_DISABLE_BUG_REPORT_LINK=True \
    LITELLM_USE_CHAT_COMPLETIONS_URL_FOR_ANTHROPIC_MESSAGES=True \
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 NO_PROXY='*' no_proxy='*'
  # where a URL is read from the environment, one that goes nowhere
  export LITELLM_MODEL_COST_MAP_URL=http://127.0.0.1:9/ LITELLM_BLOG_POSTS_URL=http://127.0.0.1:9/ \
    LITELLM_ANTHROPIC_BETA_HEADERS_URL=http://127.0.0.1:9/ \
    LITELLM_AUTOROUTER_PRESETS_URL=http://127.0.0.1:9/
}

start_all() {
  if [[ -f $run/env ]] && running; then
    log "already running (stop first)"
    return 0
  fi
  stop_all # what a start that failed half-way may have left
  install_all
  rm -rf "$run" && mkdir -p "$run"
  local lport aport
  lport=$(free_port)
  # Threads: 1 for generation (the model is tiny; the machine is shared); 2 slots so that
  # two requests at once do not wait; a 16k-token context per slot; at most 512 tokens
  # per answer when the request sets no max_tokens (the model stops far sooner). Top-k 1 by
  # default: greedy, so answers are the same whatever temperature a client sends (a request
  # that sets top_k itself gets what it asks for).
  "$(llama_bin)" --host 127.0.0.1 --port "$lport" -m "$(model_file)" --alias "$MODEL_NAME" \
    --jinja -c 32768 -np 2 -n 512 -t 1 -tb 1 --no-webui --metrics --offline --top-k 1 \
    >"$run/llama-server.log" 2>&1 &
  echo $! >"$run/llama-server.pid"
  wait_http "http://127.0.0.1:$lport/health" llama-server "$(cat "$run/llama-server.pid")"

  aport=$(free_port)
  cat >"$run/litellm.yaml" <<EOF
model_list:
  - model_name: $MODEL_NAME
    litellm_params:
      model: openai/$MODEL_NAME
      api_base: http://127.0.0.1:$lport/v1
      api_key: none
litellm_settings:
  telemetry: false
  drop_params: false
general_settings:
  disable_spend_logs: true
  # no key: it listens on 127.0.0.1 only, and clients send whatever key they like
  dangerously_permit_weak_or_unset_master_key: true
EOF
  (
    litellm_env
    cd "$run"
    exec "$cache/litellm/bin/litellm" --config "$run/litellm.yaml" --host 127.0.0.1 \
      --port "$aport" --num_workers 1
  ) >"$run/litellm.log" 2>&1 &
  echo $! >"$run/litellm.pid"
  wait_http "http://127.0.0.1:$aport/health/liveliness" litellm "$(cat "$run/litellm.pid")"

  cat >"$run/env" <<EOF
export STATEGRAPH_OPENAI_BASE_URL=http://127.0.0.1:$lport/v1
export STATEGRAPH_OPENAI_MODEL=$MODEL_NAME
export STATEGRAPH_ANTHROPIC_BASE_URL=http://127.0.0.1:$aport
export STATEGRAPH_ANTHROPIC_MODEL=$MODEL_NAME
EOF
  log "llama-server on 127.0.0.1:$lport, LiteLLM on 127.0.0.1:$aport (logs in $run)"
}

running() {
  local f
  for f in "$run"/*.pid; do
    [[ -f $f ]] && kill -0 "$(cat "$f")" 2>/dev/null && return 0
  done
  return 1
}

stop_all() {
  local f pid
  for f in "$run"/*.pid; do
    [[ -f $f ]] || continue
    pid=$(cat "$f")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$f"
  done
  rm -f "$run/env"
}

case ${1:-} in
  install) install_all ;;
  start) start_all ;;
  stop) stop_all ;;
  env) cat "$run/env" ;;
  *) echo "usage: $0 install|start|stop|env" >&2 && exit 2 ;;
esac
