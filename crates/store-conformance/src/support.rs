//! Helpers the behaviours share: values, namespaces, ops and key lists.

use serde_json::Value;
use stategraph_store::{BaseStore, Document, IndexSpec, Namespace, Op, PutOp, SearchOp};

pub(crate) fn doc(v: Value) -> Document {
    match v {
        Value::Object(m) => m,
        other => panic!("test value must be an object, got {other}"),
    }
}

pub(crate) fn ns(labels: &[&str]) -> Namespace {
    Namespace::from(labels)
}

pub(crate) async fn keys(store: &dyn BaseStore, op: SearchOp) -> Vec<String> {
    store
        .search(op)
        .await
        .expect("search")
        .into_iter()
        .map(|i| i.item.key)
        .collect()
}

pub(crate) fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

pub(crate) fn put(n: &[&str], k: &str, v: Option<Value>) -> Op {
    Op::Put(PutOp {
        namespace: ns(n),
        key: k.into(),
        value: v.map(doc),
        index: IndexSpec::Default,
        ttl: None,
    })
}

pub(crate) fn get(n: &[&str], k: &str) -> Op {
    Op::Get(stategraph_store::GetOp {
        namespace: ns(n),
        key: k.into(),
        refresh_ttl: true,
    })
}
