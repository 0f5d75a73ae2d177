//! The pinned Python of the interop tests: `STATEGRAPH_PYTHON`, else the venv that
//! `scripts/setup-langgraph.sh` makes under `target/`.

use std::path::{Path, PathBuf};

/// The interpreter, or `None` (with a note) when there is none, so the test skips; with
/// `STATEGRAPH_INTEROP=1` a missing interpreter fails the test instead.
pub fn python() -> Option<PathBuf> {
    let path = std::env::var_os("STATEGRAPH_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/langgraph-venv/bin/python")
        });
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var("STATEGRAPH_INTEROP").map_or(true, |v| v != "1"),
        "STATEGRAPH_INTEROP=1 but there is no Python at {path:?}"
    );
    println!("note: skipping: no venv Python at {path:?}");
    None
}
