//! Where a paged listing stands: the cursor every saver's `list_stream` pages with.
//!
//! A listing is newest first by `(checkpoint_id, thread_id, checkpoint_ns)`; each page resumes
//! after the last row the previous one read ([`RowKey`]), so a page of one thread and namespace
//! is a range scan whatever the thread's length. [`stream_pages`] turns a saver's "read the next
//! page" into the [`crate::CheckpointSaver::list_stream`] stream.

use std::future::Future;

use futures::stream::{self, BoxStream, StreamExt, TryStreamExt};

use crate::checkpoint::CheckpointTuple;
use crate::config::{validate_config, CheckpointConfig};
use crate::error::Result;
use crate::saver::ListOptions;

/// The position of a row in a listing's order: a page resumes after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowKey {
    /// The row's checkpoint id.
    pub checkpoint_id: String,
    /// The row's thread.
    pub thread_id: String,
    /// The row's namespace.
    pub checkpoint_ns: String,
}

/// Where a listing stands between pages: its arguments, what is left of its limit, and the
/// last row it read. Savers read and advance the fields as they read a page.
#[derive(Debug)]
pub struct ListCursor {
    /// The listing's config (`None`: every thread).
    pub config: Option<CheckpointConfig>,
    /// The listing's filter, `before` and limit.
    pub options: ListOptions,
    /// How many tuples the limit still allows.
    pub remaining: usize,
    /// The last row read; the next page starts after it (`None`: from the newest).
    pub after: Option<RowKey>,
    /// True once every tuple has been returned.
    pub done: bool,
}

impl ListCursor {
    /// A listing of `list(config, options)` that has not started.
    pub fn new(config: Option<CheckpointConfig>, options: ListOptions) -> ListCursor {
        let remaining = options.limit.unwrap_or(usize::MAX);
        ListCursor {
            config,
            options,
            remaining,
            after: None,
            done: remaining == 0,
        }
    }

    /// True when every tuple has been returned.
    pub fn is_done(&self) -> bool {
        self.done
    }
}

/// The stream of `list(config, options)` read page by page: `config` is validated first (an
/// invalid one is the stream's only item), then `next_page` is called with the cursor until
/// it is done; each call returns one page and the advanced cursor.
pub fn stream_pages<'a, F, Fut>(
    config: Option<CheckpointConfig>,
    options: ListOptions,
    mut next_page: F,
) -> BoxStream<'a, Result<CheckpointTuple>>
where
    F: FnMut(ListCursor) -> Fut + Send + 'a,
    Fut: Future<Output = Result<(Vec<CheckpointTuple>, ListCursor)>> + Send + 'a,
{
    if let Some(Err(e)) = config.as_ref().map(validate_config) {
        return stream::once(async move { Err(e) }).boxed();
    }
    stream::try_unfold(ListCursor::new(config, options), move |cursor| {
        let page = (!cursor.is_done()).then(|| next_page(cursor));
        async move {
            match page {
                None => Ok(None),
                Some(page) => {
                    let (tuples, cursor) = page.await?;
                    Ok(Some((stream::iter(tuples.into_iter().map(Ok)), cursor)))
                }
            }
        }
    })
    .try_flatten()
    .boxed()
}
