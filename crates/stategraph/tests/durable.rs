//! Durable execution, on every saver: a failed or crashed run resumes without redoing
//! finished work, retries and timeouts, static and dynamic interrupts, time travel and
//! `update_state`, subgraphs, the durability modes, and the node cache. The expected
//! behaviour is what Python LangGraph does with the same graph.
#![allow(clippy::unwrap_used)]

mod support;

#[path = "durable/cache.rs"]
mod cache;
#[path = "durable/durability.rs"]
mod durability;
#[path = "durable/fault_tolerance.rs"]
mod fault_tolerance;
#[path = "durable/final_state.rs"]
mod final_state;
#[path = "durable/held_head.rs"]
mod held_head;
#[path = "durable/interrupts.rs"]
mod interrupts;
#[path = "durable/new_thread.rs"]
mod new_thread;
#[path = "durable/retries.rs"]
mod retries;
#[path = "durable/subgraphs.rs"]
mod subgraphs;
#[path = "durable/time_travel.rs"]
mod time_travel;
#[path = "durable/util.rs"]
mod util;
