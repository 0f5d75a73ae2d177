//! Runs of S4 (chat) with S6 (history) and of S5 (bigstate), measured as
//! `bench_langgraph.py` measures them; each returns one JSON object in the driver's form
//! (`scenario`, `variant`, `cp`, figures).

use std::time::Instant;

use futures::TryStreamExt;
use serde_json::{json, Map, Value as J};
use stategraph::checkpoint::ListOptions;
use stategraph::{RunConfig, Value};

use crate::io_store::{IoResult, IoSaver};
use crate::scenarios::compile;
use crate::scenarios_io::{
    big_chain, big_input, big_string, chat, chat_input, message_pool, user_messages, BIG_CHAIN_LEN,
};

/// The median of `xs` (0 when empty).
pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The `p`-th percentile of `xs` as Python's `pct` takes it (nearest rank).
pub fn percentile(xs: &[f64], p: f64) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return 0.0;
    }
    let k = ((p / 100.0 * (v.len() - 1) as f64).round() as usize).min(v.len() - 1);
    v[k]
}

/// A line of `/proc/self/status` in MiB (`VmRSS`, `VmHWM`); 0 where unreadable.
pub fn proc_mib(key: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Resets the process's peak RSS (`VmHWM`) to its current RSS (Linux `clear_refs` 5);
/// false where that is not possible.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// How many storage samples S4 takes as the thread grows (after turns N/4, N/2, 3N/4, N).
const GROWTH_POINTS: usize = 4;

/// S4 chat for `turns` turns on one thread, then S6 history on that thread; variant
/// `delta` is S4′, the chat on a DeltaChannel.
pub async fn chat_and_history(
    store: &IoSaver,
    cp: &str,
    variant: &str,
    turns: usize,
) -> IoResult<J> {
    let pool = message_pool();
    let (users, graph) = if variant == "delta" {
        let users = crate::scenarios_io::delta_user_messages(&pool, turns);
        (users, crate::scenarios_io::chat_delta(pool))
    } else {
        (user_messages(&pool, turns), chat(pool))
    };
    let graph = compile(&graph, Some(store.saver()))?;
    let config = RunConfig::thread("chat");
    let rss0 = proc_mib("VmRSS");
    let mut lat = Vec::with_capacity(turns);
    let mut growth = Vec::new();
    let mut total = 0.0;
    let mut out = None;
    for (t, message) in users.iter().enumerate() {
        let start = Instant::now();
        out = Some(graph.invoke(chat_input(message), &config).await?);
        let took = start.elapsed().as_secs_f64();
        lat.push(took);
        total += took;
        if (t + 1) % (turns / GROWTH_POINTS).max(1) == 0 || t + 1 == turns {
            let (bytes, n) = store.measure().await?;
            growth.push(json!({
                "turn": t + 1, "storage_bytes": bytes, "n_checkpoints": n,
                "bytes_per_ckpt": bytes as f64 / n.max(1) as f64,
            }));
        }
    }
    let messages = out
        .as_ref()
        .and_then(|s| s.get("messages"))
        .and_then(Value::as_list)
        .map_or(0, <[Value]>::len);
    if messages != 2 * turns {
        return Err(format!("{messages} messages after {turns} turns").into());
    }
    let head = lat.len().min(100);
    let first = median(&lat[..head]) * 1e3;
    let last = median(&lat[lat.len() - head..]) * 1e3;
    let (bytes, n) = store.measure().await?;
    let mut res = json!({
        "scenario": "S4", "variant": variant, "cp": cp, "turns": turns,
        "total_s": total, "turn_first100_ms": first, "turn_last100_ms": last,
        "growth_x": last / first, "rss_before_mb": rss0, "rss_after_s4_mb": proc_mib("VmRSS"),
        "storage_bytes": bytes, "n_checkpoints": n, "bytes_per_ckpt": bytes as f64 / n.max(1) as f64,
        "growth": growth,
    });

    // S6: the whole history (streamed, keeping only each snapshot's id, as the Python
    // driver keeps only configs), then get_state at the middle checkpoint and at the latest.
    // The listing's own memory: the peak RSS while it runs (reset first) above the RSS
    // before it.
    let reset = reset_peak_rss();
    let rss_before = proc_mib("VmRSS");
    let start = Instant::now();
    let ids: Vec<String> = graph
        .get_state_history_stream(&config, ListOptions::default())
        .try_filter_map(|s| async move { Ok(s.config.and_then(|c| c.checkpoint_id)) })
        .try_collect()
        .await?;
    let history = start.elapsed().as_secs_f64();
    let history_peak = if reset {
        proc_mib("VmHWM") - rss_before
    } else {
        f64::NAN
    };
    let mid = ids.get(ids.len() / 2).ok_or("an empty history")?.clone();
    let timed = |cfg: RunConfig| {
        let graph = &graph;
        async move {
            let mut ts = Vec::new();
            for _ in 0..20 {
                let start = Instant::now();
                let snap = graph.get_state(&cfg).await?;
                ts.push(start.elapsed().as_secs_f64());
                if !snap.values.contains_key("messages") {
                    return Err::<f64, crate::io_store::BoxError>("no messages".into());
                }
            }
            Ok(median(&ts) * 1e3)
        }
    };
    let mid_ms = timed(config.clone().at_checkpoint(mid)).await?;
    let latest_ms = timed(config.clone()).await?;
    extend(
        &mut res,
        json!({
            "s6_history_s": history, "s6_history_n": ids.len(),
            "s6_history_us_per_ckpt": history / ids.len().max(1) as f64 * 1e6,
            "s6_get_state_mid_ms": mid_ms, "s6_get_state_latest_ms": latest_ms,
            "s6_history_peak_mb": history_peak,
            "peak_rss_after_s6_mb": proc_mib("VmHWM"),
        }),
    );
    Ok(res)
}

/// S5 bigstate: `invokes` invokes of the 200-node chain on new threads, `big` a 1 MiB
/// string (`str`) or that string in a map (`obj`).
pub async fn bigstate(store: &IoSaver, cp: &str, variant: &str, invokes: usize) -> IoResult<J> {
    let big = big_string();
    let graph = compile(&big_chain(BIG_CHAIN_LEN), Some(store.saver()))?;
    let rss0 = proc_mib("VmRSS");
    let (mut ts, mut grow, mut ckpts) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..invokes {
        let (s0, n0) = store.measure().await?;
        let config = RunConfig::thread(format!("t{i}")).recursion_limit(1000);
        let start = Instant::now();
        let out = graph
            .invoke(big_input(&big, variant == "obj"), &config)
            .await?;
        ts.push(start.elapsed().as_secs_f64());
        if out.get("counter").and_then(Value::as_i64) != Some(BIG_CHAIN_LEN as i64) {
            return Err("the chain did not count to its length".into());
        }
        let (s1, n1) = store.measure().await?;
        grow.push((s1 as f64 - s0 as f64) / (n1 - n0).max(1) as f64);
        ckpts.push((n1 - n0) as f64);
    }
    let m = median(&ts);
    Ok(json!({
        "scenario": "S5", "variant": variant, "cp": cp, "invokes": invokes,
        "ms_per_invoke": m * 1e3, "ms_per_step": m / BIG_CHAIN_LEN as f64 * 1e3,
        "storage_per_ckpt_bytes": median(&grow), "ckpts_per_invoke": median(&ckpts),
        "storage_bytes": store.measure().await?.0,
        "rss_before_mb": rss0, "rss_end_mb": proc_mib("VmRSS"), "peak_rss_mb": proc_mib("VmHWM"),
    }))
}

/// Adds the keys of `more` (an object) to `res` (an object).
fn extend(res: &mut J, more: J) {
    if let (J::Object(res), J::Object(more)) = (res, more) {
        let more: Map<String, J> = more;
        res.extend(more);
    }
}
