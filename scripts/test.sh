#!/usr/bin/env bash
# The project's test command (the README's second set-up command; .ci/run calls it).
# Checks formatting and lints, then runs every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
echo "== rustfmt"
cargo fmt --all -- --check
echo "== clippy"
cargo clippy --workspace --all-targets -- -D warnings
echo "== tests"
cargo test --workspace --no-fail-fast
echo "== docs"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet
