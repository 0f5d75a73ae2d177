//! The special `as_node` forms of `update_state` / `bulk_update_state`, as LangGraph's:
//! [`END`] with no values clears the pending tasks, [`INPUT`] applies the values as new
//! input, and [`COPY`] copies the checkpoint as a fork. Each must be the only update of
//! its superstep.

use std::collections::BTreeSet;
use std::sync::Arc;

use indexmap::IndexMap;
use stategraph_checkpoint::{
    ChannelVersion, ChannelVersions, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
    CheckpointSource, Map, Value, NULL_TASK_ID,
};

use super::compiled::CompiledGraph;
use super::update_forms::{Special, COPY, INPUT};
use super::update_state::{fork_channels, put_update, store_writes, RanUpdate, StateUpdate};
use super::virtual_nodes::END;
use crate::error::{Error, Result};
use crate::pregel::algo::{apply_writes, prepare_task_ids, TaskWrites};
use crate::pregel::status::read_task_statuses;
use crate::pregel::task::TaskPath;
use crate::state::{IntoUpdate, State};

/// The metadata key of the DeltaChannel snapshot counters a copy keeps.
const COUNTERS_KEY: &str = "counters_since_delta_snapshot";

impl<U> StateUpdate<U> {
    /// Clears the pending tasks of the checkpoint (LangGraph's `StateUpdate(None, END)`):
    /// the writes its finished tasks saved are applied and the rest are dropped.
    pub fn clear() -> Self
    where
        U: Default,
    {
        StateUpdate::new(U::default(), END)
    }

    /// Applies `values` as new input to the graph (`as_node="__input__"`).
    pub fn input(values: U) -> Self {
        StateUpdate::new(values, INPUT)
    }

    /// Copies the checkpoint as a fork (`as_node="__copy__"`).
    pub fn copy() -> Self
    where
        U: Default,
    {
        StateUpdate::new(U::default(), COPY)
    }
}

impl<S: State> CompiledGraph<S> {
    /// Runs a superstep whose single update is the special form `form`.
    pub(super) async fn special_superstep<U: IntoUpdate>(
        &self,
        saver: &Arc<dyn CheckpointSaver>,
        cfg: &CheckpointConfig,
        form: Special,
        values: U,
        first: bool,
    ) -> Result<CheckpointConfig> {
        let writes = values.into_writes()?;
        match form {
            Special::Clear if !writes.is_empty() => Err(Error::UnknownNode {
                node: END.to_owned(),
                by: "update_state".into(),
            }),
            Special::Clear => self.clear_superstep(saver, cfg, first).await,
            Special::Input => self.input_superstep(saver, cfg, writes, first).await,
            Special::Copy if !writes.is_empty() => Err(Error::InvalidUpdate(
                "a copy of a checkpoint takes no values".into(),
            )),
            Special::Copy => self.copy_superstep(saver, cfg).await,
        }
    }

    /// Clears the pending tasks: the client's writes and those of the finished tasks are
    /// applied, every prepared task's triggers are consumed, and a checkpoint of source
    /// `update` is saved.
    async fn clear_superstep(
        &self,
        saver: &Arc<dyn CheckpointSaver>,
        cfg: &CheckpointConfig,
        first: bool,
    ) -> Result<CheckpointConfig> {
        let graph = self.graph.clone();
        let mut base = self.load_base(saver, cfg).await?;
        let fork = fork_channels(&graph, &base, &[], first);
        let mut updated = BTreeSet::new();
        if let Some(saved) = base.saved.clone() {
            let mut tasks = prepare_task_ids(
                &base.checkpoint,
                &graph,
                &base.channels,
                base.step + 1,
                "",
                None,
            )?;
            let next = |c: Option<&ChannelVersion>| saver.get_next_version(c);
            let null_writes: Vec<(String, Value)> = saved
                .pending_writes
                .iter()
                .filter(|w| w.task_id == NULL_TASK_ID)
                .map(|w| (w.channel.clone(), w.value.clone()))
                .collect();
            if !null_writes.is_empty() {
                let path = TaskPath::default();
                let input = TaskWrites {
                    path: &path,
                    name: INPUT,
                    triggers: &[],
                    writes: &null_writes,
                };
                updated.extend(apply_writes(
                    &mut base.checkpoint,
                    &mut base.channels,
                    &[input],
                    &next,
                    &graph.trigger_to_nodes,
                )?);
            }
            let statuses = read_task_statuses(
                saved
                    .pending_writes
                    .iter()
                    .map(|w| (w.task_id.as_str(), w.channel.as_str(), &w.value)),
            );
            for task in &mut tasks {
                if let Some(status) = statuses.get(&task.id) {
                    task.writes.extend(status.output.iter().cloned());
                }
            }
            let all: Vec<TaskWrites<'_>> = tasks.iter().map(TaskWrites::from).collect();
            updated.extend(apply_writes(
                &mut base.checkpoint,
                &mut base.channels,
                &all,
                &next,
                &graph.trigger_to_nodes,
            )?);
        }
        let step = base.step + 1;
        self.finish_superstep(saver, base, updated, fork, CheckpointSource::Update, step)
            .await
    }

    /// Applies `writes` as the graph's input: stored on the checkpoint under the task id
    /// `uuid5(checkpoint_id, "__input__")`, then a checkpoint of source `input` is saved
    /// (step -1 on a new thread).
    async fn input_superstep(
        &self,
        saver: &Arc<dyn CheckpointSaver>,
        cfg: &CheckpointConfig,
        writes: Vec<(String, Value)>,
        first: bool,
    ) -> Result<CheckpointConfig> {
        let base = self.load_base(saver, cfg).await?;
        let input: Map = writes.into_iter().collect();
        let ns = uuid::Uuid::parse_str(&base.checkpoint.id).unwrap_or_default();
        let ran = RanUpdate {
            task_id: uuid::Uuid::new_v5(&ns, INPUT.as_bytes()).to_string(),
            path: TaskPath::default(),
            as_node: INPUT.to_owned(),
            triggers: Vec::new(),
            writes: vec![("__start__".to_owned(), Value::Map(input))],
        };
        if base.saved.is_some() && !base.superseded {
            store_writes(
                saver.as_ref(),
                &base.config,
                &ran.writes,
                &ran.task_id,
                &ran.path,
            )
            .await?;
        }
        let has_step = base.saved.as_ref().and_then(|t| t.metadata.step).is_some();
        let step = if has_step { base.step + 1 } else { -1 };
        self.save_superstep(saver, base, &[ran], first, CheckpointSource::Input, step)
            .await
    }

    /// Saves a copy of the addressed checkpoint next to it (under its parent): source
    /// `fork`, the next step, the same parents and values.
    async fn copy_superstep(
        &self,
        saver: &Arc<dyn CheckpointSaver>,
        cfg: &CheckpointConfig,
    ) -> Result<CheckpointConfig> {
        let Some(saved) = saver.get_tuple(cfg).await? else {
            return Err(Error::InvalidUpdate(
                "Cannot copy a non-existent checkpoint".into(),
            ));
        };
        let step = saved.metadata.step.unwrap_or(-1);
        let mut checkpoint = saved.checkpoint.clone();
        checkpoint.id = self.sources.ids().uuid6(step);
        checkpoint.ts = self.sources.ts();
        checkpoint.updated_channels = None;
        let has_parent = saved.parent_config.is_some();
        let config = saved.parent_config.clone().unwrap_or_else(|| {
            let mut c = saved.config.clone();
            c.checkpoint_id = None;
            c
        });
        let mut extra = IndexMap::new();
        if let Some(counters) = saved.metadata.extra.get(COUNTERS_KEY) {
            extra.insert(COUNTERS_KEY.to_owned(), counters.clone());
        }
        let metadata = CheckpointMetadata {
            source: Some(CheckpointSource::Fork),
            step: Some(step + 1),
            parents: Some(saved.metadata.parents.clone().unwrap_or_default()),
            extra,
        };
        let versions = ChannelVersions::default();
        put_update(
            saver.as_ref(),
            config,
            has_parent,
            &checkpoint,
            &metadata,
            &versions,
        )
        .await
    }
}
