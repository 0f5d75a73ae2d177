//! `DeltaChannel`: a reducer channel that stores its writes instead of its value
//! (docs/format.md#deltachannel).

use std::fmt;
use std::sync::Arc;

use stategraph_checkpoint::{Ext, Value};

use super::binop::into_overwrite;
use super::last_value::concurrent_update_error;
use super::{Channel, ChannelError, Reducer};

/// A batch reducer: `reducer(state, writes) -> state`, applied to all the writes of a step
/// (or of a replayed stretch of history) at once. It must be batch-invariant:
/// `r(r(s, xs), ys) == r(s, xs ++ ys)`, since a replay may batch writes differently.
pub type BatchReducer = Arc<dyn Fn(Value, Vec<Value>) -> Result<Value, ChannelError> + Send + Sync>;

/// The superstep bound: a DeltaChannel stores a snapshot at the latest after this many
/// supersteps since its last one, written or not (LangGraph's
/// `DELTA_MAX_SUPERSTEPS_SINCE_SNAPSHOT`, environment variable
/// `LANGGRAPH_DELTA_MAX_SUPERSTEPS_SINCE_SNAPSHOT`, default 5000).
pub fn max_supersteps_since_snapshot() -> u64 {
    static BOUND: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *BOUND.get_or_init(|| {
        std::env::var("LANGGRAPH_DELTA_MAX_SUPERSTEPS_SINCE_SNAPSHOT")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(5000)
    })
}

/// LangGraph's `DeltaChannel` (beta in LangGraph 1.2): a reducer channel whose checkpoints
/// normally store nothing. Its value is rebuilt from the writes stored along the parent
/// chain, replayed over the nearest stored snapshot; every `snapshot_frequency` updates
/// (or after [`max_supersteps_since_snapshot`] supersteps, or when an overwrite or a
/// branch requires it) the engine stores the full value as a `_DeltaSnapshot` (msgpack
/// ext 7). A chat thread then stores each message once, plus a snapshot now and then,
/// instead of the whole list at every step.
///
/// The channel starts with `initial` (Python's `T()`, `[]` by default). An overwrite (see
/// [`super::BinaryOperatorAggregate`]) among a step's writes replaces the value and the
/// step's other writes are ignored; two overwrites in one step are an error.
#[derive(Clone)]
pub struct DeltaChannel {
    reducer: BatchReducer,
    snapshot_frequency: u64,
    initial: Value,
    value: Option<Value>,
    /// Built from `add_messages` (see [`Channel::gives_message_ids`]).
    message_ids: bool,
    /// The built-in pairwise reducer it was built from (see [`Channel::spec`]).
    reducer_name: Option<&'static str>,
}

impl DeltaChannel {
    /// A channel folding each step's writes with `reducer`, storing a snapshot every
    /// `snapshot_frequency` updates (at least 1), starting from an empty list.
    pub fn new(reducer: BatchReducer, snapshot_frequency: u64) -> DeltaChannel {
        DeltaChannel {
            reducer,
            snapshot_frequency: snapshot_frequency.max(1),
            initial: Value::list(Vec::new()),
            value: None,
            message_ids: false,
            reducer_name: None,
        }
    }

    /// A channel whose batch reducer applies a pairwise [`Reducer`] (such as
    /// `reducers::add_messages()`) to each write in turn.
    pub fn from_pairwise(reducer: Reducer, snapshot_frequency: u64) -> DeltaChannel {
        let message_ids = crate::reducers::is_add_messages(&reducer);
        DeltaChannel {
            message_ids,
            reducer_name: crate::reducers::name_of(&reducer),
            ..DeltaChannel::new(batch(reducer), snapshot_frequency)
        }
    }

    /// Sets the value the channel starts with, Python's `T()` (builder style).
    pub fn with_initial(mut self, initial: Value) -> DeltaChannel {
        self.initial = initial;
        self
    }

    /// Updates between two snapshots.
    pub fn snapshot_frequency(&self) -> u64 {
        self.snapshot_frequency
    }

    /// Replays stored writes, oldest first, with one reducer call: the last overwrite
    /// among them becomes the base and only the writes after it are reduced.
    pub fn replay_writes(&mut self, writes: Vec<Value>) -> Result<(), ChannelError> {
        if writes.is_empty() {
            return Ok(());
        }
        let mut base = self.value.take();
        let mut rest = Vec::with_capacity(writes.len());
        for w in writes {
            match into_overwrite(w) {
                Ok(replacement) => {
                    base = Some(self.or_initial(Some(replacement)));
                    rest.clear();
                }
                Err(w) => rest.push(w),
            }
        }
        let base = base.unwrap_or_else(|| self.initial.clone());
        self.value = Some(if rest.is_empty() {
            base
        } else {
            (self.reducer)(base, rest)?
        });
        Ok(())
    }

    /// `None` and a stored nil both mean Python's `T()`.
    fn or_initial(&self, value: Option<Value>) -> Value {
        match value {
            None | Some(Value::Nil) => self.initial.clone(),
            Some(v) => v,
        }
    }
}

/// A batch reducer that applies `pairwise` to each write in turn.
pub fn batch(pairwise: Reducer) -> BatchReducer {
    Arc::new(move |mut state: Value, writes: Vec<Value>| {
        for w in writes {
            state = pairwise(state, w)?;
        }
        Ok(state)
    })
}

impl fmt::Debug for DeltaChannel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeltaChannel")
            .field("snapshot_frequency", &self.snapshot_frequency)
            .field("value", &self.value)
            .finish_non_exhaustive()
    }
}

impl Channel for DeltaChannel {
    fn kind(&self) -> &'static str {
        "DeltaChannel"
    }

    fn spec(&self) -> Option<super::ChannelSpec> {
        Some(super::ChannelSpec::DeltaChannel {
            reducer: self.reducer_name?.to_owned(),
            snapshot_frequency: self.snapshot_frequency,
            initial: self.initial.clone(),
        })
    }

    fn update(&mut self, values: Vec<Value>) -> Result<bool, ChannelError> {
        if values.is_empty() {
            return Ok(false);
        }
        let mut overwrite: Option<Value> = None;
        let mut plain = Vec::with_capacity(values.len());
        for v in values {
            match into_overwrite(v) {
                Ok(replacement) => {
                    if overwrite.is_some() {
                        return Err(concurrent_update_error(
                            "Can receive only one Overwrite value per super-step.",
                        ));
                    }
                    overwrite = Some(replacement);
                }
                Err(v) => plain.push(v),
            }
        }
        if let Some(replacement) = overwrite {
            self.value = Some(self.or_initial(Some(replacement)));
            return Ok(true);
        }
        let base = self.value.clone().unwrap_or_else(|| self.initial.clone());
        self.value = Some((self.reducer)(base, plain)?);
        Ok(true)
    }

    fn get(&self) -> Option<Value> {
        self.value.clone()
    }

    fn is_available(&self) -> bool {
        self.value.is_some()
    }

    /// Nothing: the engine decides when to store a snapshot ([`Channel::snapshot`]).
    fn checkpoint(&self) -> Option<Value> {
        None
    }

    /// Restores from a `_DeltaSnapshot`, a plain value (a thread written before the key
    /// became a DeltaChannel), or nothing (`T()`; the caller then replays the history).
    fn from_checkpoint(&self, value: Option<Value>) -> Result<Box<dyn Channel>, ChannelError> {
        let value = match value {
            Some(Value::Ext(ext)) => match &*ext {
                Ext::DeltaSnapshot(inner) => Some(inner.clone()),
                _ => Some(Value::Ext(ext)),
            },
            other => other,
        };
        let mut ch = self.clone();
        ch.value = Some(self.or_initial(value));
        Ok(Box::new(ch))
    }

    fn clone_box(&self) -> Box<dyn Channel> {
        Box::new(self.clone())
    }

    fn gives_message_ids(&self) -> bool {
        self.message_ids
    }

    fn delta_snapshot_frequency(&self) -> Option<u64> {
        Some(self.snapshot_frequency)
    }

    fn snapshot(&self) -> Option<Value> {
        self.value
            .clone()
            .map(|v| Value::ext(Ext::DeltaSnapshot(v)))
    }

    fn from_history(
        &self,
        seed: Option<Value>,
        writes: Vec<Value>,
    ) -> Result<Box<dyn Channel>, ChannelError> {
        let mut ch = self.clone();
        let restored = self.from_checkpoint(seed)?;
        ch.value = restored.get();
        ch.replay_writes(writes)?;
        Ok(Box::new(ch))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ch(freq: u64) -> DeltaChannel {
        DeltaChannel::from_pairwise(crate::reducers::add(), freq)
    }

    fn list(xs: &[i64]) -> Value {
        Value::list(xs.iter().map(|x| Value::Int(*x)).collect::<Vec<_>>())
    }

    fn overwrite(v: Value) -> Value {
        let mut m = stategraph_checkpoint::Map::new();
        m.insert("__overwrite__", v);
        Value::Map(m)
    }

    #[test]
    fn stores_nothing_and_folds_a_step_in_one_batch() {
        let live = ch(3).from_checkpoint(None).unwrap();
        assert_eq!(live.get(), Some(list(&[])));
        let mut live = live;
        assert!(live.update(vec![list(&[1]), list(&[2, 3])]).unwrap());
        assert_eq!(live.get(), Some(list(&[1, 2, 3])));
        assert_eq!(live.checkpoint(), None);
        assert!(
            matches!(live.snapshot(), Some(Value::Ext(e)) if matches!(*e, Ext::DeltaSnapshot(_)))
        );
        assert!(!live.update(vec![]).unwrap());
    }

    #[test]
    fn an_overwrite_replaces_and_two_are_refused() {
        let mut live = ch(3).from_checkpoint(Some(list(&[9]))).unwrap();
        live.update(vec![list(&[1]), overwrite(list(&[5]))])
            .unwrap();
        assert_eq!(live.get(), Some(list(&[5])));
        let err = live
            .update(vec![overwrite(list(&[1])), overwrite(list(&[2]))])
            .unwrap_err();
        assert!(err.to_string().contains("only one Overwrite"), "{err}");
    }

    #[test]
    fn history_replays_over_the_seed_from_the_last_overwrite() {
        let seed = Value::ext(Ext::DeltaSnapshot(list(&[1])));
        let live = ch(3)
            .from_history(Some(seed.clone()), vec![list(&[2]), list(&[3])])
            .unwrap();
        assert_eq!(live.get(), Some(list(&[1, 2, 3])));
        let live = ch(3)
            .from_history(
                Some(seed),
                vec![list(&[2]), overwrite(list(&[7])), list(&[8])],
            )
            .unwrap();
        assert_eq!(live.get(), Some(list(&[7, 8])));
        let live = ch(3).from_history(None, vec![list(&[4])]).unwrap();
        assert_eq!(live.get(), Some(list(&[4])));
    }
}
