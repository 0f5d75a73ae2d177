//! The configuration of one run: thread, checkpoint, limits, interrupts, durability.

use indexmap::IndexMap;
use stategraph_checkpoint::{CheckpointConfig, Value};

use crate::run_context::RunContext;
use crate::thread_head::ThreadHead;

/// LangGraph's default recursion limit (`LANGGRAPH_DEFAULT_RECURSION_LIMIT`).
pub const DEFAULT_RECURSION_LIMIT: usize = 10007;

/// When checkpoints and writes reach the saver (docs/runtime.md#durability).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Durability {
    /// Each step's checkpoint is saved before the next step starts.
    Sync,
    /// Checkpoints are saved in the background, in order (LangGraph's default).
    #[default]
    Async,
    /// Only the final state (and the writes of interrupted or failed tasks) at exit.
    Exit,
}

/// The config of a run (LangGraph's `RunnableConfig`, the parts stategraph reads).
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// The thread; required with a checkpointer.
    pub thread_id: Option<String>,
    /// Start from this checkpoint instead of the latest (time travel).
    pub checkpoint_id: Option<String>,
    /// The namespace addressed by `get_state`, `get_state_history` and `update_state`
    /// (`""`: the root graph; `node:task_id` for a subgraph's state).
    pub checkpoint_ns: String,
    /// How many super-steps a run may take.
    pub recursion_limit: usize,
    /// Further `configurable` keys (copied into checkpoint metadata when scalar).
    pub configurable: IndexMap<String, Value>,
    /// `config["metadata"]` (copied into checkpoint metadata when scalar).
    pub metadata: IndexMap<String, Value>,
    /// Overrides the compiled `interrupt_before` for this run.
    pub interrupt_before: Option<Vec<String>>,
    /// Overrides the compiled `interrupt_after` for this run.
    pub interrupt_after: Option<Vec<String>>,
    /// When checkpoints are saved.
    pub durability: Durability,
    /// At most this many tasks of a step run at once (`None`: all of them). With 1 the
    /// tasks run one after another in task order, which makes event order deterministic.
    pub max_concurrency: Option<usize>,
    /// The caller knows the thread has no checkpoint in the root namespace: a run with new
    /// input starts without reading the saver (see [`RunConfig::assume_new_thread`]).
    pub assume_new_thread: bool,
    /// The thread's head as the caller holds it: a run with new input starts from it
    /// without reading the saver (see [`RunConfig::start_from`]).
    pub start_from: Option<ThreadHead>,
    /// The run's typed context (Python's `context=`, read as `runtime.context`): see
    /// [`RunConfig::context`]. Never stored.
    pub context: Option<RunContext>,
    /// `config["tags"]`: shown in the `messages` and `tasks` streams' metadata and on the
    /// run's span. Never stored.
    pub tags: Vec<String>,
    /// `config["run_id"]`: the run's id, in [`ExecutionInfo::run_id`](crate::ExecutionInfo::run_id) and on the run's
    /// span (Python does not store it in checkpoint metadata either).
    pub run_id: Option<uuid::Uuid>,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            thread_id: None,
            checkpoint_id: None,
            checkpoint_ns: String::new(),
            recursion_limit: DEFAULT_RECURSION_LIMIT,
            configurable: IndexMap::new(),
            metadata: IndexMap::new(),
            interrupt_before: None,
            interrupt_after: None,
            durability: Durability::default(),
            max_concurrency: None,
            assume_new_thread: false,
            start_from: None,
            context: None,
            tags: Vec::new(),
            run_id: None,
        }
    }
}

impl RunConfig {
    /// A config for a thread.
    pub fn thread(thread_id: impl Into<String>) -> RunConfig {
        RunConfig {
            thread_id: Some(thread_id.into()),
            ..Default::default()
        }
    }

    /// Starts from a given checkpoint (builder style).
    pub fn at_checkpoint(mut self, checkpoint_id: impl Into<String>) -> Self {
        self.checkpoint_id = Some(checkpoint_id.into());
        self
    }

    /// Addresses a subgraph's namespace (builder style).
    pub fn in_namespace(mut self, ns: impl Into<String>) -> Self {
        self.checkpoint_ns = ns.into();
        self
    }

    /// Sets the recursion limit (builder style).
    pub fn recursion_limit(mut self, limit: usize) -> Self {
        self.recursion_limit = limit;
        self
    }

    /// Adds a configurable key (builder style).
    pub fn with_configurable(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.configurable.insert(key.into(), value.into());
        self
    }

    /// Adds a metadata key (builder style).
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }

    /// Sets the durability (builder style).
    pub fn durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }

    /// Sets the largest number of tasks run at once (builder style).
    pub fn max_concurrency(mut self, n: usize) -> Self {
        self.max_concurrency = Some(n.max(1));
        self
    }

    /// Tells the run that the thread has no checkpoint in the root namespace, so it starts
    /// from an empty state without reading the saver (one read less; an Agent Server knows
    /// this of a thread it just created). Builder style.
    ///
    /// It applies to a root run with new input ([`crate::IntoUpdate`] values) on a saver
    /// that fences ([`stategraph_checkpoint::Capabilities::fence`]); elsewhere it is
    /// ignored and the run reads the thread as usual: a `Command` or [`crate::NoInput`]
    /// (a resume needs the saved state), subgraphs, an unfenced saver (a wrong assumption
    /// could not be detected) or no saver. With a `checkpoint_id` it is a contradiction:
    /// [`crate::Error::InvalidConfig`].
    ///
    /// **If the assumption is wrong**, the run's first checkpoint is refused by the fence
    /// ([`crate::Error::Conflict`] with [`crate::InputFate::NotApplied`]): nothing
    /// of the thread is overwritten. In durability `async` and `exit` the run's nodes may
    /// have run before the refusal reaches it; nothing they wrote is stored.
    pub fn assume_new_thread(mut self) -> Self {
        self.assume_new_thread = true;
        self
    }

    /// Starts the run from `head`, the thread's head as a previous run left it
    /// ([`crate::RunStream::final_head`]), instead of reading it from the saver (one read
    /// less, and no decode: a server running a conversation holds the head of the
    /// thread's last run). Builder style.
    ///
    /// It applies where [`RunConfig::assume_new_thread`] does, to a root run with new
    /// input on a saver that fences, and only when the run does not continue the head's
    /// own run (the config's `metadata.run_id` is not the head's: such a run resumes, and
    /// reads); elsewhere the run reads the thread as usual. A head of another thread, or
    /// together with a `checkpoint_id` or `assume_new_thread`, is
    /// [`crate::Error::InvalidConfig`]. Given the same head, the run is the one a run that
    /// read it makes: same values, checkpoints and writes.
    ///
    /// **If the head is stale** (the thread has a newer checkpoint), the run's first
    /// checkpoint, a child of the held head, is refused by the fence
    /// ([`crate::Error::Conflict`] with [`crate::InputFate::NotApplied`]): nothing is
    /// stored, nothing overwritten; the caller reads and runs again. The fence does not
    /// see writes stored against the held checkpoint since it was held (a run that failed
    /// before its first checkpoint leaves some): a caller that cannot rule them out
    /// compares [`ThreadHead::write_count`] with the stored count.
    pub fn start_from(mut self, head: ThreadHead) -> Self {
        self.start_from = Some(head);
        self
    }

    /// Sets `interrupt_before` for this run (builder style).
    pub fn interrupt_before<I: IntoIterator<Item = T>, T: Into<String>>(
        mut self,
        nodes: I,
    ) -> Self {
        self.interrupt_before = Some(nodes.into_iter().map(Into::into).collect());
        self
    }

    /// Sets `interrupt_after` for this run (builder style).
    pub fn interrupt_after<I: IntoIterator<Item = T>, T: Into<String>>(mut self, nodes: I) -> Self {
        self.interrupt_after = Some(nodes.into_iter().map(Into::into).collect());
        self
    }

    /// The checkpoint config of this run in namespace `ns`.
    pub(crate) fn checkpoint_config(&self, ns: &str) -> CheckpointConfig {
        CheckpointConfig {
            thread_id: self.thread_id.clone().unwrap_or_default(),
            checkpoint_ns: Some(ns.to_owned()),
            checkpoint_id: self.checkpoint_id.clone(),
            configurable: self.configurable.clone(),
            metadata: self.metadata.clone(),
        }
    }
}

impl RunConfig {
    /// This config with `defaults` filling what it leaves unset (what
    /// [`CompiledGraph::with_config`](crate::CompiledGraph::with_config) does to every
    /// call's config, as Python's `merge_configs`): the thread, checkpoint id and
    /// interrupt lists when absent, the namespace when empty, the recursion limit, the
    /// durability and `max_concurrency` when left at their defaults; `configurable` and
    /// `metadata` keys of both, this config's winning. (A field set explicitly to its
    /// default value cannot be told from an unset one, so the default's value wins.)
    pub fn merged_over(self, defaults: &RunConfig) -> RunConfig {
        let mut configurable = defaults.configurable.clone();
        configurable.extend(self.configurable);
        let mut metadata = defaults.metadata.clone();
        metadata.extend(self.metadata);
        RunConfig {
            thread_id: self.thread_id.or_else(|| defaults.thread_id.clone()),
            checkpoint_id: self
                .checkpoint_id
                .or_else(|| defaults.checkpoint_id.clone()),
            checkpoint_ns: if self.checkpoint_ns.is_empty() {
                defaults.checkpoint_ns.clone()
            } else {
                self.checkpoint_ns
            },
            recursion_limit: if self.recursion_limit == DEFAULT_RECURSION_LIMIT {
                defaults.recursion_limit
            } else {
                self.recursion_limit
            },
            configurable,
            metadata,
            interrupt_before: self
                .interrupt_before
                .or_else(|| defaults.interrupt_before.clone()),
            interrupt_after: self
                .interrupt_after
                .or_else(|| defaults.interrupt_after.clone()),
            durability: if self.durability == Durability::default() {
                defaults.durability
            } else {
                self.durability
            },
            max_concurrency: self.max_concurrency.or(defaults.max_concurrency),
            assume_new_thread: self.assume_new_thread || defaults.assume_new_thread,
            // A head is the run's own, never a default: the next run's would be stale.
            start_from: self.start_from,
            context: self.context.or_else(|| defaults.context.clone()),
            tags: crate::run_context::merge_tags(&defaults.tags, self.tags),
            run_id: self.run_id.or(defaults.run_id),
        }
    }
}

impl From<&RunConfig> for RunConfig {
    fn from(config: &RunConfig) -> RunConfig {
        config.clone()
    }
}

/// The config a snapshot, `update_state` or a saver hands back, as a run config: the same
/// thread, namespace and checkpoint (so `invoke(NoInput, snapshot.config)` resumes or
/// replays from it, as in Python), with its other `configurable` keys and metadata.
impl From<CheckpointConfig> for RunConfig {
    fn from(config: CheckpointConfig) -> RunConfig {
        RunConfig {
            thread_id: Some(config.thread_id).filter(|t| !t.is_empty()),
            checkpoint_id: config.checkpoint_id,
            checkpoint_ns: config.checkpoint_ns.unwrap_or_default(),
            configurable: config.configurable,
            metadata: config.metadata,
            ..RunConfig::default()
        }
    }
}

impl From<&CheckpointConfig> for RunConfig {
    fn from(config: &CheckpointConfig) -> RunConfig {
        RunConfig::from(config.clone())
    }
}

/// `StateSnapshot::config` and `parent_config` as they are (`None`: an empty config).
impl From<Option<CheckpointConfig>> for RunConfig {
    fn from(config: Option<CheckpointConfig>) -> RunConfig {
        config.map(RunConfig::from).unwrap_or_default()
    }
}

/// `&snapshot.config` or `&snapshot.parent_config` (`None`: an empty config).
impl From<&Option<CheckpointConfig>> for RunConfig {
    fn from(config: &Option<CheckpointConfig>) -> RunConfig {
        config.as_ref().map(RunConfig::from).unwrap_or_default()
    }
}

/// The checkpoint config a run of this config addresses (its namespace, thread,
/// checkpoint id, configurable keys and metadata).
impl From<&RunConfig> for CheckpointConfig {
    fn from(config: &RunConfig) -> CheckpointConfig {
        config.checkpoint_config(&config.checkpoint_ns)
    }
}

impl From<RunConfig> for CheckpointConfig {
    fn from(config: RunConfig) -> CheckpointConfig {
        CheckpointConfig::from(&config)
    }
}

/// What the methods of a compiled graph accept as a config: `&RunConfig`, and the configs
/// stategraph hands back, by reference: a snapshot's `&snapshot.config` /
/// `&snapshot.parent_config`, the `&CheckpointConfig` `update_state` returns (as Python
/// passes `snapshot.config` straight to `invoke`).
pub trait AsRunConfig {
    /// The run config.
    fn to_run_config(self) -> RunConfig;
}

impl AsRunConfig for &RunConfig {
    fn to_run_config(self) -> RunConfig {
        self.clone()
    }
}

impl AsRunConfig for &CheckpointConfig {
    fn to_run_config(self) -> RunConfig {
        RunConfig::from(self)
    }
}

impl AsRunConfig for &Option<CheckpointConfig> {
    fn to_run_config(self) -> RunConfig {
        RunConfig::from(self)
    }
}
