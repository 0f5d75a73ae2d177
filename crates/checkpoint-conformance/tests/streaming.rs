//! `MemorySaver::list_stream` equals `list` across page boundaries (pages of one, two, three
//! and the default number of tuples), and the check itself catches a stream that differs.

use futures::stream::{BoxStream, StreamExt};
use stategraph_checkpoint::{CheckpointConfig, CheckpointTuple, ListOptions, MemorySaver};
use stategraph_checkpoint_conformance::streaming::stream_matches_list;

#[tokio::test]
async fn memory_stream_equals_list_at_every_page_size() {
    for page in [1, 2, 3, stategraph_checkpoint::memory::DEFAULT_LIST_PAGE] {
        let saver = MemorySaver::new().with_list_page(page);
        let compared = stream_matches_list(&saver)
            .await
            .unwrap_or_else(|f| panic!("page of {page}: {}", f.message()));
        assert!(compared > 100, "{compared} listings compared");
    }
}

/// A saver whose stream loses the last tuple of every listing.
mod lossy {
    use super::*;
    use async_trait::async_trait;
    use stategraph_checkpoint::{
        ChannelVersion, ChannelVersions, Checkpoint, CheckpointMetadata, CheckpointSaver, Result,
        Value,
    };

    pub(super) struct Lossy(pub(super) MemorySaver);

    #[async_trait]
    impl CheckpointSaver for Lossy {
        async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>> {
            self.0.get_tuple(config).await
        }
        async fn list(
            &self,
            config: Option<&CheckpointConfig>,
            options: &ListOptions,
        ) -> Result<Vec<CheckpointTuple>> {
            self.0.list(config, options).await
        }
        fn list_stream(
            &self,
            config: Option<CheckpointConfig>,
            options: ListOptions,
        ) -> BoxStream<'_, Result<CheckpointTuple>> {
            let all = self.0.list_stream(config, options);
            futures::stream::once(async move {
                let mut tuples: Vec<_> = all.collect().await;
                tuples.pop();
                futures::stream::iter(tuples)
            })
            .flatten()
            .boxed()
        }
        async fn put(
            &self,
            config: &CheckpointConfig,
            checkpoint: &Checkpoint,
            metadata: &CheckpointMetadata,
            new_versions: &ChannelVersions,
        ) -> Result<CheckpointConfig> {
            self.0.put(config, checkpoint, metadata, new_versions).await
        }
        async fn put_writes(
            &self,
            config: &CheckpointConfig,
            writes: &[(String, Value)],
            task_id: &str,
            task_path: &str,
        ) -> Result<()> {
            self.0.put_writes(config, writes, task_id, task_path).await
        }
        async fn delete_thread(&self, thread_id: &str) -> Result<()> {
            self.0.delete_thread(thread_id).await
        }
        fn get_next_version(&self, current: Option<&ChannelVersion>) -> ChannelVersion {
            self.0.get_next_version(current)
        }
    }
}

#[tokio::test]
async fn a_stream_that_differs_from_list_fails_the_check() {
    let saver = lossy::Lossy(MemorySaver::new());
    let failure = stream_matches_list(&saver).await.expect_err("lossy stream");
    assert!(
        failure.message().contains("list_stream differs"),
        "{}",
        failure.message()
    );
}
