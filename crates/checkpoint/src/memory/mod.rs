//! MemorySaver: LangGraph's InMemorySaver layout (`storage`, `writes`, `blobs`).

/// Placeholder.
#[derive(Debug, Default)]
pub struct MemorySaver;
