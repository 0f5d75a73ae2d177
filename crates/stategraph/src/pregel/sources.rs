//! The sources of ids and timestamps a run uses: real ones by default, injectable for
//! tests that reproduce a LangGraph trace.

use std::sync::Arc;

use stategraph_checkpoint::id::{format_ts, IdGenerator};
use stategraph_checkpoint::source::{Clock, SystemClock};

/// Where checkpoint ids, checkpoint timestamps and debug-event timestamps come from.
#[derive(Clone)]
pub struct Sources {
    ids: Option<Arc<IdGenerator>>,
    clock: Arc<dyn Clock>,
    debug_clock: Arc<dyn Clock>,
}

impl Default for Sources {
    fn default() -> Self {
        Sources {
            ids: None,
            clock: Arc::new(SystemClock),
            debug_clock: Arc::new(SystemClock),
        }
    }
}

impl std::fmt::Debug for Sources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sources")
            .field("custom_ids", &self.ids.is_some())
            .finish_non_exhaustive()
    }
}

impl Sources {
    /// Injected sources: an id generator, a clock for checkpoint `ts`, and a clock for
    /// debug-event timestamps.
    pub fn new(
        ids: Arc<IdGenerator>,
        clock: Arc<dyn Clock>,
        debug_clock: Arc<dyn Clock>,
    ) -> Sources {
        Sources {
            ids: Some(ids),
            clock,
            debug_clock,
        }
    }

    /// The id generator (the process-wide one unless injected).
    pub fn ids(&self) -> &IdGenerator {
        match &self.ids {
            Some(g) => g,
            None => IdGenerator::system(),
        }
    }

    /// A checkpoint timestamp.
    pub fn ts(&self) -> String {
        format_ts(self.clock.now_ns())
    }

    /// A debug-event timestamp.
    pub fn debug_ts(&self) -> String {
        format_ts(self.debug_clock.now_ns())
    }
}
