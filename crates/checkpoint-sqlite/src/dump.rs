//! `SqliteSaver::dump`: the two tables of a thread as a person reads them, values decoded,
//! in the Python-repr notation `MemorySaver::dump` uses.

use rusqlite::Connection;
use stategraph_checkpoint::serde::Serializer;
use stategraph_checkpoint::value::repr::repr;
use stategraph_checkpoint::{Error, Result, Value};

use crate::read::bytes;
use crate::sql;

fn py_str(s: &str) -> String {
    repr(&Value::from(s))
}

fn decoded(serde: &dyn Serializer, tag: Option<String>, data: Option<Vec<u8>>) -> String {
    let tag = tag.unwrap_or_else(|| "null".into());
    let data = data.unwrap_or_default();
    match serde.loads_typed(&tag, &data) {
        Ok(v) => format!("({}, {})", py_str(&tag), repr(&v)),
        Err(e) => format!("({}, <{} bytes: {e}>)", py_str(&tag), data.len()),
    }
}

fn sql(e: rusqlite::Error) -> Error {
    Error::Backend(Box::new(e))
}

/// Renders every row of `thread` (all namespaces) of both tables, oldest first.
pub(crate) fn dump(conn: &Connection, serde: &dyn Serializer, thread: &str) -> Result<String> {
    let mut out = String::from("checkpoints:\n");
    let mut stmt = conn.prepare(sql::DUMP_CHECKPOINTS).map_err(sql)?;
    let mut rows = stmt.query([thread]).map_err(sql)?;
    while let Some(row) = rows.next().map_err(sql)? {
        let ns: String = row.get(0).map_err(sql)?;
        let id: String = row.get(1).map_err(sql)?;
        let parent: Option<String> = row.get(2).map_err(sql)?;
        let tag: Option<String> = row.get(3).map_err(sql)?;
        let checkpoint = bytes(row.get_ref(4).map_err(sql)?);
        let metadata = bytes(row.get_ref(5).map_err(sql)?);
        let metadata = metadata
            .map(|m| String::from_utf8_lossy(&m).into_owned())
            .unwrap_or_default();
        out.push_str(&format!(
            "  ({}, {}, {}): parent={} checkpoint={} metadata={}\n",
            py_str(thread),
            py_str(&ns),
            py_str(&id),
            parent.as_deref().map_or("None".to_owned(), py_str),
            decoded(serde, tag, checkpoint),
            metadata,
        ));
    }
    out.push_str("writes:\n");
    let mut stmt = conn.prepare(sql::DUMP_WRITES).map_err(sql)?;
    let mut rows = stmt.query([thread]).map_err(sql)?;
    while let Some(row) = rows.next().map_err(sql)? {
        let ns: String = row.get(0).map_err(sql)?;
        let id: String = row.get(1).map_err(sql)?;
        let task: String = row.get(2).map_err(sql)?;
        let idx: i64 = row.get(3).map_err(sql)?;
        let channel: String = row.get(4).map_err(sql)?;
        let tag: Option<String> = row.get(5).map_err(sql)?;
        let value = bytes(row.get_ref(6).map_err(sql)?);
        let path: String = row.get(7).map_err(sql)?;
        out.push_str(&format!(
            "  ({}, {}, {}): ({}, {idx}) -> ({}, {}, {})\n",
            py_str(thread),
            py_str(&ns),
            py_str(&id),
            py_str(&task),
            py_str(&channel),
            decoded(serde, tag, value),
            py_str(&path),
        ));
    }
    Ok(out)
}
