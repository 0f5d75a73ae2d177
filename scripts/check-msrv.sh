#!/usr/bin/env bash
# Checks the workspace's `rust-version` against what it really needs.
#
# Only one toolchain is installed where the tests run, so the minimum cannot be proven by
# building with it. What is checked instead:
#   1. `rust-version` in Cargo.toml equals the highest `rust-version` declared by any
#      package in Cargo.lock's resolution (dependencies, dev-dependencies included): it is
#      neither below what a dependency demands nor above it without a reason;
#   2. the toolchain running this script is at least that version;
#   3. (in scripts/test.sh, by clippy) `clippy::incompatible_msrv` rejects our own uses of
#      standard-library items stabilized after `rust-version`.
# Language features newer than `rust-version` are not caught; bump `rust-version` by hand
# (and set OWN_MINIMUM below) when the code starts to need one.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
# The minimum our own code needs beyond the dependencies (empty: none known).
OWN_MINIMUM=""
cargo metadata --format-version 1 --locked --filter-platform "$(rustc -vV | sed -n "s/^host: //p")" | python3 -c '
import json, subprocess, sys
own = sys.argv[1]
meta = json.load(sys.stdin)
members = set(meta["workspace_members"])
def key(v): return (tuple(int(x) for x in v.split(".")) + (0, 0))[:3]
declared = {p["rust_version"] for p in meta["packages"] if p["id"] in members}
if len(declared) != 1:
    sys.exit(f"workspace members declare different rust-versions: {sorted(declared, key=str)}")
ours = declared.pop()
deps = [(key(p["rust_version"]), p["name"], p["version"]) for p in meta["packages"]
        if p["id"] not in members and p.get("rust_version")]
need, name, version = max(deps)
need_s = ".".join(map(str, need))
if own and key(own) > need:
    need, need_s, name, version = key(own), own, "our own code", ""
rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True, check=True).stdout.split()[1]
print(f"rust-version {ours}; highest requirement {need_s} ({name} {version}); toolchain {rustc}")
if key(ours) != need:
    sys.exit(f"rust-version {ours} should be {need_s}")
if key(rustc.split("-")[0]) < key(ours):
    sys.exit(f"toolchain {rustc} is older than rust-version {ours}")
' "$OWN_MINIMUM"
