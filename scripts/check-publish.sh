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
if ! cargo publish --workspace --dry-run --locked --allow-dirty "${verify[@]}" >"$log" 2>&1; then
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
