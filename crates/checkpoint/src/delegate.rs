//! Savers that wrap another saver: forward everything, change only what they watch.
//!
//! A wrapper (a saver that records what was stored, times calls, removes a file on drop)
//! implements [`DelegatingSaver`]: it names its inner saver and overrides only the
//! operations it changes; every other operation of [`CheckpointSaver`], provided ones
//! included, goes to the inner saver. Writing a wrapper as a `CheckpointSaver` by hand
//! meant forwarding each method, and a method left out fell back to the trait's provided
//! form without a word: a wrapped SQLite saver walked `get_tuple` for a DeltaChannel's
//! history instead of its one query, a wrapped Postgres saver stored a batch one op at a
//! time, and `in_flight_saves` went missing so reads after a cancel no longer waited.
//!
//! Every `DelegatingSaver` is a `CheckpointSaver` (a blanket implementation). Name the trait
//! by its path in the `impl` (`impl stategraph_checkpoint::DelegatingSaver for Mine`) rather
//! than importing it where `CheckpointSaver` is imported: with both in scope, a method call
//! on the wrapper names two traits' methods.

use async_trait::async_trait;
use futures::stream::BoxStream;
use indexmap::IndexMap;

use crate::checkpoint::{Checkpoint, CheckpointTuple};
use crate::config::CheckpointConfig;
use crate::delta::DeltaChannelHistory;
use crate::error::Result;
use crate::in_flight::InFlightSaves;
use crate::metadata::CheckpointMetadata;
use crate::saver::{Capabilities, CheckpointSaver, ListOptions, PruneStrategy, SaveOp};
use crate::value::Value;
use crate::version::{ChannelVersion, ChannelVersions};

/// A saver built around an inner saver. Each method defaults to the inner saver's; the
/// blanket implementation makes every `DelegatingSaver` a [`CheckpointSaver`] whose
/// methods are these. See the module docs.
#[async_trait]
pub trait DelegatingSaver: Send + Sync {
    /// The saver every operation not overridden goes to.
    fn inner(&self) -> &dyn CheckpointSaver;

    /// [`CheckpointSaver::get_tuple`].
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>> {
        self.inner().get_tuple(config).await
    }

    /// [`CheckpointSaver::list`].
    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: &ListOptions,
    ) -> Result<Vec<CheckpointTuple>> {
        self.inner().list(config, options).await
    }

    /// [`CheckpointSaver::list_stream`].
    fn list_stream(
        &self,
        config: Option<CheckpointConfig>,
        options: ListOptions,
    ) -> BoxStream<'_, Result<CheckpointTuple>> {
        self.inner().list_stream(config, options)
    }

    /// [`CheckpointSaver::put`].
    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        new_versions: &ChannelVersions,
    ) -> Result<CheckpointConfig> {
        self.inner()
            .put(config, checkpoint, metadata, new_versions)
            .await
    }

    /// [`CheckpointSaver::put_writes`].
    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: &[(String, Value)],
        task_id: &str,
        task_path: &str,
    ) -> Result<()> {
        self.inner()
            .put_writes(config, writes, task_id, task_path)
            .await
    }

    /// [`CheckpointSaver::delete_thread`].
    async fn delete_thread(&self, thread_id: &str) -> Result<()> {
        self.inner().delete_thread(thread_id).await
    }

    /// [`CheckpointSaver::get_next_version`].
    fn get_next_version(&self, current: Option<&ChannelVersion>) -> ChannelVersion {
        self.inner().get_next_version(current)
    }

    /// [`CheckpointSaver::put_batch`]: the inner saver's batch (its group commit), not one
    /// call per op.
    async fn put_batch(&self, ops: &[SaveOp]) -> Result<()> {
        self.inner().put_batch(ops).await
    }

    /// [`CheckpointSaver::get_delta_channel_history`].
    async fn get_delta_channel_history(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<IndexMap<String, DeltaChannelHistory>> {
        self.inner()
            .get_delta_channel_history(config, channels)
            .await
    }

    /// [`CheckpointSaver::get`].
    async fn get(&self, config: &CheckpointConfig) -> Result<Option<Checkpoint>> {
        self.inner().get(config).await
    }

    /// [`CheckpointSaver::is_in_process`].
    fn is_in_process(&self) -> bool {
        self.inner().is_in_process()
    }

    /// [`CheckpointSaver::in_flight_saves`].
    fn in_flight_saves(&self) -> Option<&InFlightSaves> {
        self.inner().in_flight_saves()
    }

    /// [`CheckpointSaver::capabilities`].
    fn capabilities(&self) -> Capabilities {
        self.inner().capabilities()
    }

    /// [`CheckpointSaver::delete_for_runs`].
    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<()> {
        self.inner().delete_for_runs(run_ids).await
    }

    /// [`CheckpointSaver::copy_thread`].
    async fn copy_thread(&self, source: &str, target: &str) -> Result<()> {
        self.inner().copy_thread(source, target).await
    }

    /// [`CheckpointSaver::prune`].
    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<()> {
        self.inner().prune(thread_ids, strategy).await
    }
}

#[async_trait]
impl<T: DelegatingSaver> CheckpointSaver for T {
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>> {
        DelegatingSaver::get_tuple(self, config).await
    }

    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: &ListOptions,
    ) -> Result<Vec<CheckpointTuple>> {
        DelegatingSaver::list(self, config, options).await
    }

    fn list_stream(
        &self,
        config: Option<CheckpointConfig>,
        options: ListOptions,
    ) -> BoxStream<'_, Result<CheckpointTuple>> {
        DelegatingSaver::list_stream(self, config, options)
    }

    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        new_versions: &ChannelVersions,
    ) -> Result<CheckpointConfig> {
        DelegatingSaver::put(self, config, checkpoint, metadata, new_versions).await
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: &[(String, Value)],
        task_id: &str,
        task_path: &str,
    ) -> Result<()> {
        DelegatingSaver::put_writes(self, config, writes, task_id, task_path).await
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<()> {
        DelegatingSaver::delete_thread(self, thread_id).await
    }

    fn get_next_version(&self, current: Option<&ChannelVersion>) -> ChannelVersion {
        DelegatingSaver::get_next_version(self, current)
    }

    async fn put_batch(&self, ops: &[SaveOp]) -> Result<()> {
        DelegatingSaver::put_batch(self, ops).await
    }

    async fn get_delta_channel_history(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<IndexMap<String, DeltaChannelHistory>> {
        DelegatingSaver::get_delta_channel_history(self, config, channels).await
    }

    async fn get(&self, config: &CheckpointConfig) -> Result<Option<Checkpoint>> {
        DelegatingSaver::get(self, config).await
    }

    fn is_in_process(&self) -> bool {
        DelegatingSaver::is_in_process(self)
    }

    fn in_flight_saves(&self) -> Option<&InFlightSaves> {
        DelegatingSaver::in_flight_saves(self)
    }

    fn capabilities(&self) -> Capabilities {
        DelegatingSaver::capabilities(self)
    }

    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<()> {
        DelegatingSaver::delete_for_runs(self, run_ids).await
    }

    async fn copy_thread(&self, source: &str, target: &str) -> Result<()> {
        DelegatingSaver::copy_thread(self, source, target).await
    }

    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<()> {
        DelegatingSaver::prune(self, thread_ids, strategy).await
    }
}

#[cfg(test)]
#[path = "delegate_tests.rs"]
mod tests;
