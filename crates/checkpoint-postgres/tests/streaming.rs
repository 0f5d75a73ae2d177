//! `list_stream` equals `list` across page boundaries (keyset pages of one, two, three and
//! the default number of rows).

use stategraph_checkpoint_conformance::streaming::stream_matches_list;
use stategraph_checkpoint_postgres::{PostgresSaver, DEFAULT_LIST_PAGE_ROWS};

use crate::support::TestDb;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_equals_list_at_every_page_size() {
    for page in [1, 2, 3, DEFAULT_LIST_PAGE_ROWS] {
        let Some(db) = TestDb::unfenced().await else {
            return;
        };
        let saver = PostgresSaver::from_pool(db.pool().clone())
            .with_fencing(false)
            .with_list_page(page);
        let compared = stream_matches_list(&saver)
            .await
            .unwrap_or_else(|f| panic!("page of {page}: {}", f.message()));
        assert!(compared > 100, "{compared} listings compared");
    }
}
