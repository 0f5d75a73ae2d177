//! Checkpoint ids (UUIDv6 with the step in the clock sequence) and `ts` strings.
//!
//! A checkpoint id is LangGraph's `uuid6(clock_seq=step)` (docs/format.md#checkpoint-ids): the
//! 60-bit count of
//! 100-ns ticks since 1582-10-15, most significant bits first so that ids sort by creation
//! time, then the step in the 14-bit clock sequence, then 48 fresh random bits. Python keeps
//! the last tick in a module-level variable and bumps it so that one process never mints
//! two ids with the same tick; [`IdGenerator`] keeps it per generator, and
//! [`IdGenerator::system`] is the process-wide one.

use std::fmt;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use crate::source::{Clock, OsRandom, RandomSource, SystemClock};

/// 100-ns ticks from the UUID epoch (1582-10-15T00:00:00Z) to the Unix epoch.
pub const UUID_EPOCH_OFFSET: u64 = 0x01B2_1DD2_1381_4000;

/// Mints checkpoint ids from a clock and a random source.
pub struct IdGenerator {
    clock: Arc<dyn Clock>,
    state: Mutex<IdState>,
}

/// What one mint reads and updates together.
struct IdState {
    last_ticks: Option<u64>,
    rng: Box<dyn RandomSource>,
}

impl IdGenerator {
    /// A generator reading `clock` for time and `rng` for the 48 node bits.
    pub fn new(clock: Arc<dyn Clock>, rng: Box<dyn RandomSource>) -> Self {
        IdGenerator {
            clock,
            state: Mutex::new(IdState {
                last_ticks: None,
                rng,
            }),
        }
    }

    /// The process-wide generator (system clock, OS-seeded randomness), shared like
    /// Python's module-level `_last_v6_timestamp` so ids of one process strictly increase.
    pub fn system() -> &'static IdGenerator {
        static SYSTEM: OnceLock<IdGenerator> = OnceLock::new();
        SYSTEM.get_or_init(|| IdGenerator::new(Arc::new(SystemClock), Box::new(OsRandom::new())))
    }

    /// The clock this generator reads.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// A new id, `str(uuid6(clock_seq=clock_seq))` in Python: LangGraph passes the
    /// checkpoint's step (`-2` for the empty placeholder). Only the low 14 bits of
    /// `clock_seq` are kept, so negative steps wrap as Python's `&` makes them
    /// (`-1` gives `bfff` in the fourth group).
    pub fn uuid6(&self, clock_seq: i64) -> String {
        let mut state = self.state.lock();
        let mut ticks = (self.clock.now_ns() / 100).wrapping_add(UUID_EPOCH_OFFSET);
        if let Some(last) = state.last_ticks {
            if ticks <= last {
                ticks = last.wrapping_add(1);
            }
        }
        state.last_ticks = Some(ticks);
        let node = state.rng.getrandbits(48);
        drop(state);
        uuid6_string(ticks, clock_seq, node)
    }
}

impl fmt::Debug for IdGenerator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let last = self.state.lock().last_ticks;
        f.debug_struct("IdGenerator")
            .field("last_ticks", &last)
            .finish_non_exhaustive()
    }
}

/// Lays out a version-6 UUID from its tick count, clock sequence and node.
fn uuid6_string(ticks: u64, clock_seq: i64, node: u64) -> String {
    let time_high_mid = u128::from((ticks >> 12) & 0xFFFF_FFFF_FFFF);
    let time_low = u128::from(ticks & 0x0FFF);
    // Two's complement `&` on i64 agrees with Python's `&` on negative integers.
    let seq = (clock_seq & 0x3FFF) as u128;
    let mut u = time_high_mid << 80;
    u |= 0x6 << 76;
    u |= time_low << 64;
    u |= 0b10 << 62;
    u |= seq << 48;
    u |= u128::from(node & 0xFFFF_FFFF_FFFF);
    uuid::Uuid::from_u128(u).hyphenated().to_string()
}

/// Python's `datetime.fromtimestamp(t, timezone.utc).isoformat()` for a time given in
/// nanoseconds, cut to microseconds the way `datetime.now()` cuts them (towards the past):
/// `2025-01-01T00:00:00.002001+00:00`, or `2025-01-01T00:00:00+00:00` when the
/// microseconds are 0.
pub fn format_ts(unix_ns: u64) -> String {
    let secs = unix_ns / 1_000_000_000;
    let micros = (unix_ns % 1_000_000_000) / 1_000;
    let (year, month, day) = civil_from_days(secs / 86_400);
    let rem = secs % 86_400;
    let (hh, mm, ss) = (rem / 3_600, rem % 3_600 / 60, rem % 60);
    if micros == 0 {
        format!("{year:04}-{month:02}-{day:02}T{hh:02}:{mm:02}:{ss:02}+00:00")
    } else {
        format!("{year:04}-{month:02}-{day:02}T{hh:02}:{mm:02}:{ss:02}.{micros:06}+00:00")
    }
}

/// The `ts` of a checkpoint created now by `clock` (`datetime.now(timezone.utc).isoformat()`).
pub fn now_ts(clock: &dyn Clock) -> String {
    format_ts(clock.now_ns())
}

/// The proleptic Gregorian `(year, month, day)` of a count of days since 1970-01-01.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    // Count from 0000-03-01 so that the leap day ends each 4/100/400-year cycle.
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = era * 400 + yoe + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{FakeClock, PyRandom};

    #[test]
    fn ts_omits_zero_microseconds_and_cuts_nanoseconds() {
        assert_eq!(format_ts(0), "1970-01-01T00:00:00+00:00");
        assert_eq!(
            format_ts(1_735_689_600_000_000_000),
            "2025-01-01T00:00:00+00:00"
        );
        assert_eq!(
            format_ts(1_735_689_600_002_001_999),
            "2025-01-01T00:00:00.002001+00:00"
        );
        assert_eq!(
            format_ts(1_735_689_600_000_000_999),
            "2025-01-01T00:00:00+00:00"
        );
    }

    #[test]
    fn ts_handles_leap_days_and_century_rules() {
        // Python: datetime.fromtimestamp(t, timezone.utc).isoformat()
        assert_eq!(
            format_ts(951_782_400 * 1_000_000_000),
            "2000-02-29T00:00:00+00:00"
        );
        assert_eq!(
            format_ts(4_107_542_399 * 1_000_000_000 + 999_999_000),
            "2100-02-28T23:59:59.999999+00:00"
        );
        assert_eq!(
            format_ts(4_107_542_400 * 1_000_000_000),
            "2100-03-01T00:00:00+00:00"
        );
        assert_eq!(
            format_ts(1_709_208_000 * 1_000_000_000 + 5_000),
            "2024-02-29T12:00:00.000005+00:00"
        );
    }

    #[test]
    fn clock_seq_wraps_like_python() {
        let id = uuid6_string(0, -2, 0);
        assert_eq!(&id[19..23], "bffe");
        assert_eq!(&uuid6_string(0, 16_384 + 10, 0)[19..23], "800a");
        assert_eq!(&id[14..15], "6");
    }

    #[test]
    fn ids_strictly_increase_when_the_clock_stalls() {
        let ids = IdGenerator::new(
            Arc::new(FakeClock::new(5_000, 0)),
            Box::new(PyRandom::new(1)),
        );
        let (a, b) = (ids.uuid6(0), ids.uuid6(0));
        assert!(a < b, "{a} !< {b}");
    }
}
