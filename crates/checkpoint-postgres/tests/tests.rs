//! Integration tests of `PostgresSaver` against a real server (one binary; the
//! conformance suite is the other). Each test uses a fresh schema, dropped at its end.

#[allow(dead_code)]
mod support;

mod batch;
mod blob_cache;
mod chain;
mod connect_errors;
mod faults;
mod fence;
mod filters;
mod golden;
mod interop;
mod long_strings;
mod raw;
mod read_only;
mod rows;
mod stall;
mod streaming;
mod toast;
