//! One module per command.

pub mod copy;
pub mod diff;
pub mod dump;
pub mod history;
pub mod maintain;
#[cfg(feature = "serve")]
pub mod serve;
pub mod show;
pub mod stats;
pub mod store;
pub mod threads;
pub mod verify;
