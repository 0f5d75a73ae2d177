//! `dump DB THREAD`: the thread's rows in LangGraph's `InMemorySaver` notation
//! (`storage`, `writes`, `blobs`), exactly as [`MemorySaver::dump`] prints them: the
//! thread is replayed into a `MemorySaver` through its own `put` / `put_writes`.

use std::process::ExitCode;

use serde_json::json;
use stategraph_checkpoint::MemorySaver;

use crate::db::Db;
use crate::error::CliError;
use crate::{replay, Ctx, Result};

/// Runs the command.
pub async fn run(ctx: &mut Ctx, name: &str, thread: &str) -> Result<ExitCode> {
    let db = Db::open_read(name).await?;
    let memory = MemorySaver::new().with_serializer(db.serde.clone());
    let (checkpoints, _) = replay::thread(&db, &memory, thread, thread, None).await?;
    if checkpoints == 0 {
        return Err(CliError::NotFound(format!(
            "no checkpoints for thread {thread:?}"
        )));
    }
    let text = memory.dump();
    if ctx.json {
        ctx.print_json(&json!({ "thread_id": thread, "dump": text }))?;
    } else {
        ctx.print(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}
