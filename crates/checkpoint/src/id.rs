//! Checkpoint ids (UUIDv6 with the step in the clock sequence) and `ts` strings.
