//! `list_stream` equals `list` across page boundaries, on a file and in memory.

use stategraph_checkpoint_conformance::streaming::stream_matches_list;
use stategraph_checkpoint_sqlite::{SqliteSaver, DEFAULT_LIST_PAGE_ROWS};

use super::support::TempPath;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_stream_equals_list_at_every_page_size() {
    for page in [1, 2, 3, DEFAULT_LIST_PAGE_ROWS] {
        let file = TempPath::new("stream");
        let saver = SqliteSaver::open(file.path())
            .expect("open")
            .with_list_page(page);
        let compared = stream_matches_list(&saver)
            .await
            .unwrap_or_else(|f| panic!("page of {page}: {}", f.message()));
        assert!(compared > 100, "{compared} listings compared");
        drop(saver);
    }
}

#[tokio::test]
async fn in_memory_stream_equals_list_with_small_pages() {
    for page in [1, 2] {
        let saver = SqliteSaver::in_memory().expect("open").with_list_page(page);
        stream_matches_list(&saver)
            .await
            .unwrap_or_else(|f| panic!("page of {page}: {}", f.message()));
    }
}
