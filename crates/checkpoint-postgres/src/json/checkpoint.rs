//! The checkpoint column written straight from a [`Checkpoint`], without building a
//! `Value` tree first: the same text as `to_text` of `checkpoint.to_value(false)` with the
//! inline `channel_values` added last (what Python's saver stores, key for key).

use stategraph_checkpoint::{
    ChannelVersion, ChannelVersions, Checkpoint, Error, Map, Result, Value,
};

use super::write::{encode, write, write_str, NotJson};

/// The keys [`Checkpoint::to_value`] writes itself; an `extra` key equal to one of them
/// replaces it in place there, which the direct writer leaves to the `Value` path.
const OWN_KEYS: [&str; 8] = [
    "v",
    "ts",
    "id",
    "channel_values",
    "channel_versions",
    "versions_seen",
    "pending_sends",
    "updated_channels",
];

/// The JSON text of the checkpoint column: the checkpoint without its values, then
/// `channel_values` holding `inline` (the values kept inline).
pub(crate) fn checkpoint_text(checkpoint: &Checkpoint, inline: Map) -> Result<String> {
    if checkpoint
        .extra
        .keys()
        .any(|k| OWN_KEYS.contains(&k.as_str()))
    {
        let Value::Map(mut doc) = checkpoint.to_value(false) else {
            return Err(Error::Encode("a checkpoint is not a map".into()));
        };
        doc.insert("channel_values", Value::Map(inline));
        return encode(&Value::Map(doc), "checkpoint");
    }
    direct(checkpoint, inline).map_err(|why| Error::Encode(format!("checkpoint: {why}")))
}

fn direct(cp: &Checkpoint, inline: Map) -> Result<String, NotJson> {
    let mut out = String::with_capacity(256 + 64 * cp.versions_seen.len());
    out.push_str("{\"v\":");
    out.push_str(&cp.v.to_string());
    out.push_str(",\"ts\":");
    write_str(&mut out, &cp.ts)?;
    out.push_str(",\"id\":");
    write_str(&mut out, &cp.id)?;
    out.push_str(",\"channel_versions\":");
    versions(&mut out, &cp.channel_versions)?;
    out.push_str(",\"versions_seen\":{");
    for (i, (node, seen)) in cp.versions_seen.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_str(&mut out, node)?;
        out.push(':');
        versions(&mut out, seen)?;
    }
    out.push('}');
    if let Some(sends) = &cp.pending_sends {
        out.push_str(",\"pending_sends\":[");
        for (i, s) in sends.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            write(&mut out, s, 2)?;
        }
        out.push(']');
    }
    out.push_str(",\"updated_channels\":");
    match &cp.updated_channels {
        None => out.push_str("null"),
        Some(list) => {
            out.push('[');
            for (i, c) in list.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_str(&mut out, c)?;
            }
            out.push(']');
        }
    }
    for (k, v) in &cp.extra {
        out.push(',');
        write_str(&mut out, k)?;
        out.push(':');
        write(&mut out, v, 1)?;
    }
    out.push_str(",\"channel_values\":");
    write(&mut out, &Value::Map(inline), 1)?;
    out.push('}');
    Ok(out)
}

fn versions(out: &mut String, versions: &ChannelVersions) -> Result<(), NotJson> {
    out.push('{');
    for (i, (channel, version)) in versions.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_str(out, channel)?;
        out.push(':');
        match version {
            ChannelVersion::Int(n) => out.push_str(&n.to_string()),
            ChannelVersion::Str(s) => write_str(out, s)?,
        }
    }
    out.push('}');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use stategraph_checkpoint::{list, map};

    /// The text of the `Value` path, the reference.
    fn via_value(cp: &Checkpoint, inline: Map) -> String {
        let Value::Map(mut doc) = cp.to_value(false) else {
            panic!("not a map")
        };
        doc.insert("channel_values", Value::Map(inline));
        encode(&Value::Map(doc), "checkpoint").unwrap()
    }

    #[test]
    fn direct_text_equals_the_value_tree_text() {
        let mut cp = Checkpoint::empty(
            "1efc7d35-7fd4-6e20-bfff-1de970d3da1f",
            "2025-01-01T00:00:00+00:00",
        );
        let inline = match map! {"a" => 1, "s" => "x\"y", "f" => 1.5, "n" => Value::Nil} {
            Value::Map(m) => m,
            _ => unreachable!(),
        };
        assert_eq!(
            checkpoint_text(&cp, inline.clone()).unwrap(),
            via_value(&cp, inline.clone())
        );
        cp.channel_versions.insert(
            "a".into(),
            ChannelVersion::from("00000000000000000000000000000001.0.5"),
        );
        cp.channel_versions
            .insert("b".into(), ChannelVersion::Int(-3));
        let mut seen = ChannelVersions::default();
        seen.insert("a".into(), ChannelVersion::Int(1));
        cp.versions_seen.insert("n\u{e9}".into(), seen);
        cp.versions_seen
            .insert("__input__".into(), ChannelVersions::default());
        cp.updated_channels = Some(vec!["a".into(), "b".into()]);
        cp.pending_sends = Some(vec![map! {"node" => "x", "arg" => list![1, 2.0]}]);
        cp.extra.insert("extra".into(), map! {"k" => 1});
        assert_eq!(
            checkpoint_text(&cp, inline.clone()).unwrap(),
            via_value(&cp, inline.clone())
        );
        // An extra key that shadows an own key goes through the Value path.
        cp.extra.insert("ts".into(), Value::from("other"));
        assert_eq!(
            checkpoint_text(&cp, inline.clone()).unwrap(),
            via_value(&cp, inline)
        );
        // Values without a JSON form are refused the same way.
        cp.extra.shift_remove("ts");
        cp.extra.insert("bad".into(), Value::Float(f64::NAN));
        assert!(checkpoint_text(&cp, Map::new()).is_err());
    }
}
