//! One module per concern; `support` holds the shared helpers.

mod batch;
mod concurrency;
mod corrupt;
mod filter;
mod golden;
mod interop;
mod json;
mod large_values;
mod open_errors;
mod raw;
mod read_cache;
mod schema;
mod streaming;
mod support;
