//! A check for savers that stream their listings: [`CheckpointSaver::list_stream`] gives
//! exactly the tuples of [`CheckpointSaver::list`], in the same order, for every shape of
//! config and every option.
//!
//! The conformance behaviours already compare the two paths on what they store, but their
//! threads are short, so a saver that reads in pages never crosses a page boundary there.
//! Run [`stream_matches_list`] on a saver built with pages of one, two and three tuples:
//! every resumption point (inside a namespace, between namespaces, between threads, on
//! checkpoint ids shared by several threads and namespaces) is then crossed.

use futures::TryStreamExt;
use stategraph_checkpoint::{CheckpointConfig, CheckpointSaver, ListOptions, Value};

use crate::fixtures::{checkpoint_id, ids, in_ns, loop_metadata, uuid4, NewCheckpoint};
use crate::Failure;

/// How many checkpoints each `(thread, namespace)` of the fixture holds.
const CHAIN: usize = 7;

/// Stores the fixture on `saver` (which should be empty, and must not fence puts: the same
/// checkpoint ids go to two threads and two namespaces), then compares `list_stream` with
/// `list` for every config and option of the matrix. Returns how many listings were
/// compared.
///
/// The fixture: threads `a` and `b`, namespaces `""` and `"inner"` in each, the same
/// seven checkpoint ids in all four (metadata `step` 0…6, `source` `loop` on even
/// steps and `input` on odd ones, a value per checkpoint, writes on two of them), and one
/// more checkpoint in `(a, "")` only.
pub async fn stream_matches_list(saver: &dyn CheckpointSaver) -> Result<usize, Failure> {
    let (a, b) = (format!("a-{}", uuid4()), format!("b-{}", uuid4()));
    let chain: Vec<NewCheckpoint> = (0..CHAIN)
        .map(|i| NewCheckpoint::new().value("v", format!("value {i}"), i as i64 + 1))
        .collect();
    for thread in [&a, &b] {
        for ns in ["", "inner"] {
            let mut parent: Option<String> = None;
            for (i, cp) in chain.iter().enumerate() {
                let mut config = in_ns(thread, ns);
                config.checkpoint_id = parent.clone();
                let mut metadata = loop_metadata(i as i64);
                if i % 2 == 1 {
                    metadata.source = Some(stategraph_checkpoint::CheckpointSource::Input);
                }
                let stored = cp.put(saver, &config, &metadata).await?;
                if i == 2 || i == 5 {
                    let writes = vec![("w".to_owned(), Value::from(i as i64))];
                    saver.put_writes(&stored, &writes, "task", "").await?;
                }
                parent = Some(cp.id().to_owned());
            }
        }
    }
    let extra = NewCheckpoint::new();
    let mut config = in_ns(&a, "");
    config.checkpoint_id = Some(chain[CHAIN - 1].id().to_owned());
    extra
        .put(saver, &config, &loop_metadata(CHAIN as i64))
        .await?;

    let mid = chain[3].id().to_owned();
    let configs: Vec<Option<CheckpointConfig>> = vec![
        None,
        Some(without_ns(&a)),
        Some(in_ns(&a, "")),
        Some(in_ns(&a, "inner")),
        Some(in_ns(&b, "")),
        Some(without_ns(&a).with_checkpoint_id(mid.clone())),
        Some(in_ns(&b, "inner").with_checkpoint_id(mid.clone())),
        Some(in_ns(&a, "").with_checkpoint_id(checkpoint_id())),
        Some(in_ns(&uuid4(), "")),
    ];
    let before_mid = || CheckpointConfig::thread(&a).with_checkpoint_id(mid.clone());
    let options: Vec<ListOptions> = vec![
        ListOptions::default(),
        ListOptions::default().limit(0),
        ListOptions::default().limit(1),
        ListOptions::default().limit(2),
        ListOptions::default().limit(5),
        ListOptions::default().limit(100),
        ListOptions::default().before(before_mid()),
        ListOptions::default().before(before_mid()).limit(2),
        ListOptions::default().before(CheckpointConfig::thread(&a)),
        ListOptions::default().filter("step", 3),
        ListOptions::default().filter("source", "loop"),
        ListOptions::default().filter("source", "loop").limit(3),
        ListOptions::default()
            .filter("source", "input")
            .before(before_mid()),
        ListOptions::default()
            .filter("step", 3)
            .filter("source", "input"),
        ListOptions::default().filter("no such key", 1),
    ];
    let mut compared = 0;
    for config in &configs {
        for options in &options {
            let listed = saver.list(config.as_ref(), options).await?;
            let streamed: Vec<_> = saver
                .list_stream(config.clone(), options.clone())
                .try_collect()
                .await?;
            if streamed != listed {
                return Err(Failure::new(format!(
                    "list_stream differs from list for config {config:?}, options {options:?}: \
                     streamed ids {:?}, listed ids {:?}",
                    ids(&streamed),
                    ids(&listed)
                )));
            }
            compared += 1;
        }
    }
    // The matrix is not vacuous: the whole store lists every stored checkpoint.
    let all = saver.list(None, &ListOptions::default()).await?.len();
    if all != 4 * CHAIN + 1 {
        return Err(Failure::new(format!(
            "list(None) found {all} checkpoints, {} were stored",
            4 * CHAIN + 1
        )));
    }
    Ok(compared)
}

/// A config of a thread without a namespace (lists every namespace).
fn without_ns(thread: &str) -> CheckpointConfig {
    CheckpointConfig {
        checkpoint_ns: None,
        ..CheckpointConfig::thread(thread)
    }
}
