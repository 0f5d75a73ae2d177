//! Fuzzes the JSON text reader the Postgres saver uses for JSONB columns
//! (`json_text::parse` with big integers read as floats, 512 levels): no input may panic,
//! reading is deterministic, and an input read without that option reads the same with it.

#![no_main]

use libfuzzer_sys::fuzz_target;
use stategraph_checkpoint::serde::json_text::{parse, JsonOptions};

fuzz_target!(|data: &[u8]| {
    let jsonb = JsonOptions {
        big_ints_as_floats: true,
        max_depth: 512,
    };
    let first = parse(data, &jsonb);
    let again = parse(data, &jsonb);
    assert_eq!(format!("{first:?}"), format!("{again:?}"));
    if let Ok(strict) = parse(data, &JsonOptions::default()) {
        let loose = first.expect("what the strict reader reads, the JSONB reader reads");
        assert_eq!(format!("{strict:?}"), format!("{loose:?}"));
    }
});
