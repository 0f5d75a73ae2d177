//! Checkpoints, metadata and writes for the saver benches: what the engine stores for
//! a small state, and a state holding a 1 MiB value.

use stategraph_checkpoint::id::IdGenerator;
use stategraph_checkpoint::{
    map, ChannelVersion, ChannelVersions, Checkpoint, CheckpointMetadata, CheckpointSource, Value,
};

/// One `put`: the checkpoint, its metadata and the versions that are new since its parent.
#[derive(Clone, Debug)]
pub struct PutArgs {
    /// The checkpoint.
    pub checkpoint: Checkpoint,
    /// Its metadata.
    pub metadata: CheckpointMetadata,
    /// The channels whose values are new.
    pub new_versions: ChannelVersions,
}

/// A channel version as savers mint them (`{counter:032}.{fraction}`).
pub fn version(counter: u64) -> ChannelVersion {
    ChannelVersion::Str(format!("{counter:032}.0.6830287151429463"))
}

/// A message of about 200 bytes, as in the chat scenario.
fn message(i: usize) -> Value {
    let role = if i.is_multiple_of(2) {
        "user"
    } else {
        "assistant"
    };
    map! { "role" => role, "content" => ascii(165, i as u64 + 1) }
}

/// `len` pseudo-random ASCII letters and digits, the same for the same `seed`.
pub fn ascii(len: usize, seed: u64) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            char::from(ALPHABET[(x % ALPHABET.len() as u64) as usize])
        })
        .collect()
}

/// The `step`-th checkpoint of a thread with a small state: `messages` (four ~200-byte
/// maps), `counter`, `name` and a `branch:to:agent` trigger. Step 0 writes every channel;
/// later steps write `messages` and `counter` only, as a one-node loop would.
pub fn small_step(step: u64) -> PutArgs {
    let mut cp = Checkpoint::empty(
        IdGenerator::system().uuid6(step as i64),
        "2026-12-01T00:00:00.000000+00:00",
    );
    let messages = Value::List((0..4).map(|i| message(i + step as usize)).collect());
    cp.channel_values.insert("messages".into(), messages);
    cp.channel_values
        .insert("counter".into(), Value::Int(step as i64));
    cp.channel_values.insert("name".into(), Value::from("Ada"));
    cp.channel_values
        .insert("branch:to:agent".into(), Value::Nil);
    let mut new_versions = ChannelVersions::default();
    for (channel, v) in [
        ("messages", step + 1),
        ("counter", step + 1),
        ("name", 1),
        ("branch:to:agent", 1),
    ] {
        cp.channel_versions.insert(channel.into(), version(v));
        if step == 0 || v == step + 1 {
            new_versions.insert(channel.into(), version(v));
        }
    }
    let seen: ChannelVersions = [("branch:to:agent".to_owned(), version(1))]
        .into_iter()
        .collect();
    cp.versions_seen.insert("agent".into(), seen);
    cp.versions_seen
        .insert("__input__".into(), ChannelVersions::default());
    cp.updated_channels = Some(vec!["counter".into(), "messages".into()]);
    let metadata = CheckpointMetadata::new(CheckpointSource::Loop, step as i64);
    PutArgs {
        checkpoint: cp,
        metadata,
        new_versions,
    }
}

/// A checkpoint whose state is `{big: a 1 MiB string, counter}`, both new.
pub fn big_step() -> PutArgs {
    let mut cp = Checkpoint::empty(
        IdGenerator::system().uuid6(0),
        "2026-12-01T00:00:00.000000+00:00",
    );
    cp.channel_values
        .insert("big".into(), Value::from(ascii(1 << 20, 7)));
    cp.channel_values.insert("counter".into(), Value::Int(0));
    for channel in ["big", "counter"] {
        cp.channel_versions.insert(channel.into(), version(1));
    }
    cp.updated_channels = Some(vec!["big".into(), "counter".into()]);
    let new_versions = cp.channel_versions.clone();
    PutArgs {
        checkpoint: cp,
        metadata: CheckpointMetadata::new(CheckpointSource::Input, -1),
        new_versions,
    }
}

/// The writes of one task of the small state: a message, the counter and a trigger.
pub fn task_writes() -> Vec<(String, Value)> {
    vec![
        ("messages".into(), Value::list(vec![message(1)])),
        ("counter".into(), Value::Int(1)),
        ("branch:to:agent".into(), Value::Nil),
    ]
}

/// A task id (UUID text) numbered `n`.
pub fn task_id(n: u64) -> String {
    format!(
        "{:08x}-0000-4000-8000-{:012x}",
        n >> 32,
        n & 0xFFFF_FFFF_FFFF
    )
}
