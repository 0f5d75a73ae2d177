//! Shared values: O(1) clones, copy-on-write, wide maps with O(1) lookups.
#![allow(clippy::unwrap_used)]

use stategraph_checkpoint::serde::msgpack::{decode, encode};
use stategraph_checkpoint::{list, map, Bytes, List, Map, Str, Value};

#[test]
fn a_wide_map_of_100_000_keys_is_built_and_read_in_linear_time() {
    // With a linear search per insert this is 5e9 comparisons (minutes); indexed, it is
    // instant. No timing assertion: the test would simply not finish on a quadratic map.
    let n = 100_000;
    let mut m = Map::new();
    for i in 0..n {
        m.insert(format!("key{i}"), i);
    }
    assert_eq!(m.len(), n);
    for i in (0..n).step_by(7) {
        assert_eq!(m.get(&format!("key{i}")), Some(&Value::from(i)));
    }
    assert_eq!(m.get("key-missing"), None);
    // Replacing keeps the position and the length.
    assert_eq!(m.insert("key5", "five"), Some(Value::from(5)));
    assert_eq!(m.len(), n);
    assert_eq!(m.as_slice()[5].1, Value::from("five"));
    // Insertion order is kept.
    let keys: Vec<&str> = m.keys().take(3).filter_map(Value::as_str).collect();
    assert_eq!(keys, ["key0", "key1", "key2"]);
    // Removal keeps the rest in order and lookups right.
    assert_eq!(m.remove("key1"), Some(Value::from(1)));
    assert_eq!(m.get("key2"), Some(&Value::from(2)));
    assert_eq!(m.as_slice()[1].0, Value::from("key2"));
    assert_eq!(m.get(&format!("key{}", n - 1)), Some(&Value::from(n - 1)));
    // A wide map survives the msgpack round trip with every key.
    let back = decode(&encode(&Value::Map(m.clone())).unwrap()).unwrap();
    let back = back.as_map().unwrap();
    assert_eq!(back.len(), n - 1);
    assert_eq!(back.get("key99999"), Some(&Value::from(99_999)));
}

#[test]
fn a_wide_map_with_duplicate_keys_keeps_them_as_written_and_finds_the_first() {
    let mut pairs: Vec<(Value, Value)> = (0..100)
        .map(|i| (Value::from(format!("k{i}")), Value::from(i)))
        .collect();
    pairs.push((Value::from("k3"), Value::from("again")));
    pairs.push((Value::from(7), Value::from("int key")));
    let m = Map::from_pairs(pairs.clone());
    assert_eq!(m.len(), 102);
    assert_eq!(m.get("k3"), Some(&Value::from(3)));
    assert_eq!(m.get_value(&Value::from(7)), Some(&Value::from("int key")));
    // Encoding writes both entries; decoding keeps both.
    let bytes = encode(&Value::Map(m)).unwrap();
    let back = decode(&bytes).unwrap();
    assert_eq!(back.as_map().unwrap().as_slice(), pairs.as_slice());
    assert_eq!(back.get("k3"), Some(&Value::from(3)));
}

#[test]
fn cloning_a_value_shares_its_payload() {
    let big = Value::from("x".repeat(1 << 20));
    let copy = big.clone();
    match (&big, &copy) {
        (Value::Str(a), Value::Str(b)) => assert!(Str::ptr_eq(a, b)),
        _ => panic!("not strings"),
    }
    let l = list![1, "a", map! {"k" => "v"}];
    let (Value::List(a), Value::List(b)) = (&l, &l.clone()) else {
        panic!("not lists")
    };
    assert!(List::ptr_eq(a, b));
    let m = map! {"k" => 1};
    let (Value::Map(a), Value::Map(b)) = (&m, &m.clone()) else {
        panic!("not maps")
    };
    assert!(Map::ptr_eq(a, b));
    let by = Value::bytes(vec![1u8, 2, 3]);
    let (Value::Bytes(a), Value::Bytes(b)) = (&by, &by.clone()) else {
        panic!("not bytes")
    };
    assert!(Bytes::ptr_eq(a, b));
}

#[test]
fn mutating_a_shared_list_or_map_copies_it_and_leaves_the_other_handle_alone() {
    let original = list![1, 2];
    let mut edited = original.clone();
    edited.as_list_mut().unwrap().push(Value::from(3));
    assert_eq!(original, list![1, 2]);
    assert_eq!(edited, list![1, 2, 3]);

    let original = map! {"a" => 1};
    let mut edited = original.clone();
    edited.as_map_mut().unwrap().insert("b", 2);
    assert_eq!(original, map! {"a" => 1});
    assert_eq!(edited, map! {"a" => 1, "b" => 2});

    // An unshared list is mutated in place: the elements keep their identity.
    let inner = list!["x"];
    let mut l = List::from(vec![inner.clone()]);
    l.push(Value::from(2));
    let (Value::List(a), Value::List(b)) = (&l[0], &inner) else {
        panic!("not lists")
    };
    assert!(List::ptr_eq(a, b));
}

/// A message-like element: an extension holding a map, as LangChain messages are stored.
fn message(i: usize) -> Value {
    use stategraph_checkpoint::{Ext, ObjectCode};
    Value::ext(Ext::object(
        ObjectCode::PydanticV2,
        "langchain_core.messages.human",
        "HumanMessage",
        map! {"content" => format!("message {i} {}", "x".repeat(i % 50)), "id" => format!("id-{i}")},
        Some("model_validate_json"),
    ))
}

/// The encoding of a list built fresh (no cache, no base) from the same elements.
fn fresh(v: &Value) -> Vec<u8> {
    let copy = Value::list(v.as_list().unwrap().to_vec());
    let mut out = Vec::new();
    // Wrapping in a one-element list encodes the inner list as a nested value, which
    // never uses the cache: a second, independent path to the same bytes.
    let wrapped = encode(&Value::list(vec![copy.clone()])).unwrap();
    out.extend_from_slice(&wrapped[1..]);
    assert_eq!(out, encode(&copy).unwrap());
    out
}

#[test]
fn encode_once_bytes_equal_a_fresh_encoding_through_appends_edits_and_removals() {
    let mut history = Value::list((0..40).map(message).collect::<Vec<_>>());
    let first = encode(&history).unwrap();
    assert_eq!(first, fresh(&history));
    // The same version encodes to the same bytes again (from the cache).
    assert_eq!(encode(&history).unwrap(), first);

    // Appends while an older version is still held (as a checkpoint holds it).
    let mut versions = vec![history.clone()];
    for turn in 0..30 {
        let l = history.as_list_mut().unwrap();
        l.push(message(100 + 2 * turn));
        l.push(message(101 + 2 * turn));
        assert_eq!(encode(&history).unwrap(), fresh(&history), "turn {turn}");
        versions.push(history.clone());
    }
    // An edit in the middle (a message replaced by id, as add_messages does).
    history.as_list_mut().unwrap()[20] = message(9999);
    assert_eq!(encode(&history).unwrap(), fresh(&history));
    // A removal (RemoveMessage), then an append, without encoding in between.
    history.as_list_mut().unwrap().remove(3);
    history.as_list_mut().unwrap().push(message(5000));
    assert_eq!(encode(&history).unwrap(), fresh(&history));
    // Shrinking below the cache threshold and the empty list.
    history.as_list_mut().unwrap().truncate(5);
    assert_eq!(encode(&history).unwrap(), fresh(&history));
    history.as_list_mut().unwrap().clear();
    assert_eq!(encode(&history).unwrap(), vec![0x90]);
    // Older versions are untouched and still encode to their own bytes.
    assert_eq!(encode(&versions[0]).unwrap(), first);
    for v in &versions {
        assert_eq!(encode(v).unwrap(), fresh(v));
        assert_eq!(decode(&encode(v).unwrap()).unwrap(), *v);
    }
}

#[test]
fn an_element_replaced_by_an_equal_copy_is_reencoded_to_the_same_bytes() {
    let mut l = Value::list((0..20).map(message).collect::<Vec<_>>());
    let before = encode(&l).unwrap();
    let copy = decode(&encode(&l.as_list().unwrap()[0]).unwrap()).unwrap();
    l.as_list_mut().unwrap()[0] = copy;
    assert_eq!(encode(&l).unwrap(), before);
}

#[tokio::test]
async fn memory_saver_hands_back_the_latest_value_it_was_given_without_decoding() {
    use stategraph_checkpoint::{
        ChannelVersion, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
        MemorySaver,
    };
    let saver = MemorySaver::new();
    let history = Value::list((0..50).map(message).collect::<Vec<_>>());
    let mut cp = Checkpoint::empty(
        "1efc7d35-7fd4-6e20-bfff-1de970d3da1f",
        "2025-01-01T00:00:00+00:00",
    );
    cp.channel_values.insert("messages".into(), history.clone());
    cp.channel_versions
        .insert("messages".into(), ChannelVersion::Int(1));
    let config = CheckpointConfig::thread("t");
    let new_versions = cp.channel_versions.clone();
    let stored = saver
        .put(&config, &cp, &CheckpointMetadata::default(), &new_versions)
        .await
        .unwrap();
    let read = |c: CheckpointConfig| {
        let saver = &saver;
        async move {
            saver
                .get_tuple(&c)
                .await
                .unwrap()
                .unwrap()
                .checkpoint
                .channel_values["messages"]
                .clone()
        }
    };
    let latest = read(config.clone()).await;
    assert!(Value::same(&latest, &history));
    // A second version: the latest read is the new value; the first version, no longer
    // the latest, is decoded from its bytes and still equal.
    let mut next = history.clone();
    next.as_list_mut().unwrap().push(message(1000));
    let mut cp2 = cp.clone();
    cp2.id = "1efc7d35-7fd4-6e21-8000-1de970d3da1f".into();
    cp2.channel_values.insert("messages".into(), next.clone());
    cp2.channel_versions
        .insert("messages".into(), ChannelVersion::Int(2));
    let nv = cp2.channel_versions.clone();
    saver
        .put(&stored, &cp2, &CheckpointMetadata::default(), &nv)
        .await
        .unwrap();
    assert!(Value::same(&read(config.clone()).await, &next));
    let old = read(stored.clone()).await;
    assert!(!Value::same(&old, &history));
    assert_eq!(old, history);
}

#[test]
fn encode_once_stays_exact_over_hundreds_of_versions_with_occasional_edits() {
    let mut l = Value::list((0..16).map(message).collect::<Vec<_>>());
    let mut held = Vec::new();
    for i in 0..300 {
        let items = l.as_list_mut().unwrap();
        items.push(message(1000 + i));
        if i % 37 == 0 {
            let at = items.len() / 3;
            items[at] = message(5000 + i);
        }
        if i % 53 == 0 {
            items.remove(items.len() / 2);
        }
        if i % 2 == 0 {
            held.push(l.clone()); // a checkpoint holding this version
        }
        assert_eq!(encode(&l).unwrap(), fresh(&l), "version {i}");
    }
    for v in &held {
        assert_eq!(encode(v).unwrap(), fresh(v));
    }
}

#[tokio::test]
async fn memory_saver_blobs_of_a_growing_list_are_the_bytes_of_a_fresh_encoding() {
    use stategraph_checkpoint::{
        ChannelVersion, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
        MemorySaver,
    };
    let saver = MemorySaver::new();
    let mut history = Value::list((0..20).map(message).collect::<Vec<_>>());
    let mut config = CheckpointConfig::thread("t");
    let mut expected = Vec::new();
    for v in 1..=5i64 {
        let mut cp = Checkpoint::empty(
            format!("1efc7d35-7fd4-6e2{v}-8000-1de970d3da1f"),
            "2025-01-01T00:00:00+00:00",
        );
        cp.channel_values.insert("messages".into(), history.clone());
        cp.channel_versions
            .insert("messages".into(), ChannelVersion::Int(v));
        let nv = cp.channel_versions.clone();
        config = saver
            .put(&config, &cp, &CheckpointMetadata::default(), &nv)
            .await
            .unwrap();
        expected.push(fresh(&history));
        let l = history.as_list_mut().unwrap();
        l.push(message(100 + v as usize));
        if v == 3 {
            l.remove(2);
        }
    }
    let blobs: Vec<Vec<u8>> = saver
        .storage_snapshot()
        .blobs
        .into_iter()
        .map(|b| b.value.bytes)
        .collect();
    assert_eq!(blobs, expected);
    // Every version reads back equal to what was put.
    let tuples = saver
        .list(Some(&CheckpointConfig::thread("t")), &Default::default())
        .await
        .unwrap();
    assert_eq!(tuples.len(), 5);
    for (t, bytes) in tuples.iter().rev().zip(&expected) {
        assert_eq!(
            encode(&t.checkpoint.channel_values["messages"]).unwrap(),
            *bytes
        );
    }
}

#[tokio::test]
async fn memory_saver_stores_a_long_string_once_and_writes_its_exact_bytes() {
    use stategraph_checkpoint::{
        ChannelVersion, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
        MemorySaver,
    };
    let saver = MemorySaver::new();
    let text = Value::from("é".repeat(40_000));
    let mut cp = Checkpoint::empty(
        "1efc7d35-7fd4-6e20-8000-1de970d3da1f",
        "2025-01-01T00:00:00+00:00",
    );
    cp.channel_values.insert("doc".into(), text.clone());
    cp.channel_versions
        .insert("doc".into(), ChannelVersion::Int(1));
    let nv = cp.channel_versions.clone();
    let config = saver
        .put(
            &CheckpointConfig::thread("t"),
            &cp,
            &CheckpointMetadata::default(),
            &nv,
        )
        .await
        .unwrap();
    saver
        .put_writes(&config, &[("doc".to_owned(), text.clone())], "task", "")
        .await
        .unwrap();
    let layout = saver.storage_snapshot();
    assert_eq!(layout.blobs[0].value.bytes, encode(&text).unwrap());
    assert_eq!(layout.writes[0].value.bytes, encode(&text).unwrap());
    let tuple = saver.get_tuple(&config).await.unwrap().unwrap();
    assert_eq!(tuple.pending_writes[0].value, text);
    assert!(Value::same(&tuple.checkpoint.channel_values["doc"], &text));
}
