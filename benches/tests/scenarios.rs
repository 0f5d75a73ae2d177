//! The benchmarked graphs compute what the Python scenarios compute, with and without a
//! saver, so that the timings compare the same work.

use stategraph::{RunConfig, Value};
use stategraph_benches::savers::Backend;
use stategraph_benches::scenarios::{
    chain, chain_input, compile, fanout, fanout_input, seed, seed_input, typed_chain, CHAIN_LEN,
};

#[tokio::test]
async fn seed_sets_name_and_address() {
    for backend in Backend::all() {
        let g = compile(&seed(), backend.open().await.unwrap()).unwrap();
        let out = g
            .invoke(seed_input(), &RunConfig::thread("t"))
            .await
            .unwrap();
        assert_eq!(
            out.get("address"),
            Some(&Value::from("Hyderabad residency")),
            "{backend}"
        );
        assert_eq!(
            out.get("name"),
            Some(&Value::from("pavaneeshwar")),
            "{backend}"
        );
    }
}

#[tokio::test]
async fn chain_counts_one_per_node_and_stores_one_checkpoint_per_step() {
    for backend in Backend::all() {
        let saver = backend.open().await.unwrap();
        let g = compile(&chain(CHAIN_LEN), saver.clone()).unwrap();
        let out = g
            .invoke(chain_input(), &RunConfig::thread("t"))
            .await
            .unwrap();
        assert_eq!(
            out.get("counter"),
            Some(&Value::Int(CHAIN_LEN as i64)),
            "{backend}"
        );
        if let Some(saver) = saver {
            let config = stategraph::checkpoint::CheckpointConfig::thread("t");
            let all = saver
                .list(Some(&config), &Default::default())
                .await
                .unwrap();
            // The input checkpoint, one per node, and the empty one before the input.
            assert_eq!(all.len(), CHAIN_LEN + 2, "{backend}");
        }
    }
}

#[tokio::test]
async fn typed_chain_counts_like_the_dynamic_one() {
    for backend in Backend::all() {
        let g = compile(&typed_chain(CHAIN_LEN), backend.open().await.unwrap()).unwrap();
        let input = stategraph_benches::scenarios::CounterUpdate::default().counter(0);
        let out = g.invoke(input, &RunConfig::thread("t")).await.unwrap();
        assert_eq!(out.counter, CHAIN_LEN as i64, "{backend}");
    }
}

#[tokio::test]
async fn fanout_collects_one_result_per_send() {
    for backend in Backend::all() {
        let g = compile(&fanout(), backend.open().await.unwrap()).unwrap();
        let out = g
            .invoke(fanout_input(), &RunConfig::thread("t"))
            .await
            .unwrap();
        let mut got: Vec<i64> = out
            .get("results")
            .and_then(Value::as_list)
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        got.sort_unstable();
        assert_eq!(got, (0..100).collect::<Vec<_>>(), "{backend}");
    }
}
