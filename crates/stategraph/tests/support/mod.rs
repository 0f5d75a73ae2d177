//! Shared helpers of the engine's integration tests.
#![allow(unreachable_pub, dead_code)]

pub mod crash_saver;
pub mod golden;
pub mod python;
pub mod savers;
