#!/usr/bin/env bash
# Every crate is ready to publish, and the default `stategraph` command stays small.
#
# 1. Metadata: each crate that is published (every member without `publish = false`) has a
#    description, a license, a readme, a documentation link and docs.rs metadata, a version
#    on every path dependency, and no placeholder URL.
# 2. The default build of the `stategraph` command (`cargo install --path crates/cli`)
#    leaves out the Agent Server, the graph engine and Python's bindings; `--features serve`
#    brings the server in.
# 3. `cargo publish --workspace --dry-run`: packages every published crate in dependency
#    order and builds each package against the others (a local overlay of the registry), as
#    crates.io would get them. STATEGRAPH_PUBLISH_NO_VERIFY=1 packages without building.
#
# Run by scripts/test.sh after the tests; takes the tests' target dir, so the dependencies
# are built already and only our crates compile again (as packages).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

echo "-- manifests"
cargo metadata --no-deps --format-version 1 --locked | python3 -c '
import json, sys
meta = json.load(sys.stdin)
bad = []
for pkg in meta["packages"]:
    name = pkg["name"]
    path = pkg["manifest_path"]
    if "example.invalid" in open(path).read():
        bad.append(f"{name}: a placeholder URL in {path}")
    if pkg["publish"] == []:
        continue
    for key in ("description", "license", "readme", "documentation"):
        if not pkg.get(key):
            bad.append(f"{name}: no `{key}`")
    if not (pkg.get("metadata") or {}).get("docs", {}).get("rs"):
        bad.append(f"{name}: no [package.metadata.docs.rs]")
    for dep in pkg["dependencies"]:
        dep_name = dep["name"]
        if dep.get("path") and dep["kind"] != "dev" and dep["req"] == "*":
            bad.append(f"{name}: path dependency {dep_name} has no version")
if bad:
    sys.exit("not ready to publish:\n  " + "\n  ".join(bad))
print("every published crate has its metadata")
'

echo "-- the default stategraph command"
tree() { cargo tree --locked -p stategraph-cli -e normal,build --prefix none "$@"; }
default=$(tree)
for heavy in stategraph-server stategraph stategraph-python axum hyper pyo3 tracing-subscriber; do
  if grep -q "^$heavy v" <<<"$default"; then
    echo "the default \`stategraph\` build brings in $heavy:" >&2
    cargo tree --locked -p stategraph-cli -e normal,build -i "$heavy" >&2
    exit 1
  fi
done
tree --features serve | grep -q '^stategraph-server v' ||
  { echo "--features serve does not bring in stategraph-server" >&2; exit 1; }
echo "$(sed "s/ (\*)$//" <<<"$default" | sort -u | wc -l) crates in the default build; no server, engine or Python"

echo "-- cargo publish --workspace --dry-run"
verify=()
[ "${STATEGRAPH_PUBLISH_NO_VERIFY:-}" = 1 ] && verify=(--no-verify)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# A dependent crate is verified against the packages of the crates it depends on: cargo puts
# them in a local registry in the build dir (<build dir>/package/tmp-registry) and unpacks
# them, as it unpacks any registry crate, into $CARGO_HOME/registry/src/-<hash of that
# registry's path>/NAME-VERSION, once: a registry's NAME-VERSION never changes, so a copy that
# is there already is used as it is. Ours change on every commit under the same 0.1.0, and
# with the same path on every run each dependent was verified against its dependencies'
# sources as the FIRST run on this machine packaged them (stategraph-server "cannot find trait
# `DelegatingSaver` in crate `stategraph_checkpoint`" while the workspace built and tested;
# deleting target/ does not help, the stale copy is in $CARGO_HOME). So cargo reaches the build
# dir through a link named after the sources' content: the same sources share one unpacked
# copy, changed sources get a copy of their own (in this checkout only: the link is in its
# target dir). The dependencies built for the tests are still used (the link leads to the
# same directory); what is built from the packages is built again.
build_dir=$(cargo metadata --no-deps --format-version 1 --locked |
  python3 -c 'import json, sys; m = json.load(sys.stdin); print(m.get("build_directory") or m["target_directory"])')
key=$(git ls-files -z --cached --others --exclude-standard 2>/dev/null | python3 -c '
import hashlib, os, sys
names = sorted(set(n for n in sys.stdin.buffer.read().split(b"\0") if n))
h = hashlib.sha256()
for name in names:
    if os.path.isfile(name):
        h.update(name + b"\0")
        with open(name, "rb") as f:
            h.update(hashlib.sha256(f.read()).digest())
print(h.hexdigest()[:16] if names else "")
' || true)
# Outside a git checkout the file list is unknown: a key of this run's own.
[ -n "$key" ] || key="run-$$-$(date +%s)"
mkdir -p "$build_dir"
# What earlier runs built from their packages, and the copies cargo unpacked for them, go
# first: each run would otherwise leave its own set (some 400 MB) in the build dir. Such a unit
# is known by its dep-info: written through a publish-* link with sources relative to an
# extracted package, or with sources in an unpacked copy of the local registry.
python3 - "$build_dir" "${CARGO_HOME:-$HOME/.cargo}" <<'PY'
import re, shutil, sys
from pathlib import Path
build, home = Path(sys.argv[1]), Path(sys.argv[2])
linked = re.compile(re.escape(str(build)) + r"/publish-[^/]+/")
unpacked = re.compile(re.escape(str(home / "registry" / "src")) + r"/(-[0-9a-f]+)/")
copies = set()
for deps in build.glob("*/deps"):
    for dep_info in deps.glob("*.d"):
        first = dep_info.read_text(errors="replace").split("\n", 1)[0]
        target, _, sources = first.partition(": ")
        copy = unpacked.search(sources)
        packaged = linked.match(target) and sources[:1] not in ("", "/")
        if not (copy or packaged):
            continue
        if copy:
            copies.add(copy.group(1))
        unit_hash = dep_info.stem.rpartition("-")[2]
        for f in [*deps.glob(f"*-{unit_hash}"), *deps.glob(f"*-{unit_hash}.*")]:
            f.unlink(missing_ok=True)
        for d in deps.parent.glob(f".fingerprint/*-{unit_hash}"):
            shutil.rmtree(d, ignore_errors=True)
for name in copies:
    shutil.rmtree(home / "registry" / "src" / name, ignore_errors=True)
PY
find "$build_dir" -maxdepth 1 -name 'publish-*' -type l -delete
ln -s . "$build_dir/publish-$key"
# No incremental state for code built once (the packages).
if ! CARGO_BUILD_BUILD_DIR="$build_dir/publish-$key" CARGO_INCREMENTAL=0 \
  cargo publish --workspace --dry-run --locked --allow-dirty "${verify[@]}" >"$log" 2>&1; then
  cat "$log" >&2
  exit 1
fi
grep -E '^ *(Packaging|Packaged|Verifying|Uploading)' "$log" || true
# Cargo only warns about some gaps (no documentation link, a file it leaves out): fail on them.
if grep -E '^warning: (manifest has no|.*(is not included|will not be published|ignoring))' \
  "$log" | grep -vE 'ignoring (test|example|bench) `' >&2; then
  echo "cargo publish warned (above)" >&2
  exit 1
fi
echo "every crate packages and builds as published"
