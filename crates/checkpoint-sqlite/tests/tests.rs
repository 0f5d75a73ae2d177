//! The integration tests of `stategraph-checkpoint-sqlite` (the conformance suite is the
//! other test binary).

mod suite;
