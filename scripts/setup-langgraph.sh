#!/usr/bin/env bash
# Makes the pinned Python LangGraph that stategraph's interop, golden and draw tests compare
# against, in a venv.
#
# Usage: scripts/setup-langgraph.sh [VENV_DIR]   (default: target/langgraph-venv)
#
# Prints the venv's python path on its last line (scripts/test.sh exports it as
# STATEGRAPH_PYTHON). Safe to run again: a venv that already holds every pinned version is
# used as it is and nothing is installed; otherwise the missing pins are installed into it
# (a fresh venv is made when VENV_DIR has no python). Needs python3 >= 3.10 with venv and
# network access to PyPI the first time.
set -euo pipefail
venv=${1:-target/langgraph-venv}
# The versions the golden traces and the interop tests were made with. langchain-core is
# pinned too: message field order in stored bytes follows its pydantic models.
pins=(
  langgraph==1.2.24
  langgraph-prebuilt==1.1.3
  langgraph-checkpoint==4.3.2
  langgraph-checkpoint-sqlite==3.1.2
  langgraph-checkpoint-postgres==3.2.0
  langgraph-checkpoint-conformance==0.0.2
  langgraph-sdk==0.4.14
  langchain-core==1.8.3
  psycopg[binary]==3.3.9
  psycopg-pool==3.3.3
  ormsgpack==1.13.1
  xxhash==4.1.0
  aiosqlite==0.22.1
  pycryptodome==4.4.0
  sqlite-vec==0.1.9
  # create_agent and the chat-model clients' interop tests (ChatOpenAI, ChatAnthropic).
  langchain==1.5.0
  langchain-openai==1.7.4
  langchain-anthropic==1.7.10
)

# Prints the pins the venv's python does not satisfy (name==version, extras dropped).
missing() {
  "$1" - "${pins[@]}" <<'PY'
import sys
from importlib.metadata import version, PackageNotFoundError
for pin in sys.argv[1:]:
    name, want = pin.split("==")
    name = name.split("[")[0]
    try:
        have = version(name)
    except PackageNotFoundError:
        have = None
    # pycryptodome: any release of the same major version works (only AES-EAX is used).
    if name == "pycryptodome" and have and have.split(".")[0] == want.split(".")[0]:
        continue
    if have != want:
        print(pin)
PY
}

python="$venv/bin/python"
if [[ -x $python ]] && [[ -z "$(missing "$python")" ]]; then
  echo "$python"
  exit 0
fi
[[ -x $python ]] || python3 -m venv "$venv"
mapfile -t todo < <(missing "$python")
echo "installing into $venv: ${todo[*]}" >&2
"$python" -m pip install -q --disable-pip-version-check "${todo[@]}" >&2
left=$(missing "$python")
if [[ -n $left ]]; then
  echo "still missing after install: $left" >&2
  exit 1
fi
echo "$python"
