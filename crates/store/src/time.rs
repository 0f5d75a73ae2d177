//! UTC timestamps with microsecond precision, and their ISO-8601 text forms.
//!
//! Items carry `created_at` / `updated_at` as aware UTC datetimes, as in Python. SQLite
//! stores them as text (`CURRENT_TIMESTAMP` gives `YYYY-MM-DD HH:MM:SS`, Python's sqlite3
//! adapter gives `YYYY-MM-DD HH:MM:SS.ffffff+00:00`); this module writes and reads those
//! without pulling a calendar crate in.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

/// A UTC instant, in microseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub i64);

impl Timestamp {
    /// The current time.
    pub fn now() -> Self {
        let d = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        Timestamp(d.as_micros() as i64)
    }

    /// Microseconds since the Unix epoch.
    pub fn micros(self) -> i64 {
        self.0
    }

    /// This instant plus `minutes` (fractional minutes allowed; saturates).
    pub fn plus_minutes(self, minutes: f64) -> Self {
        let delta = (minutes * 60_000_000.0).round();
        let delta = if delta.is_finite() {
            delta.clamp(i64::MIN as f64, i64::MAX as f64) as i64
        } else {
            i64::MAX
        };
        Timestamp(self.0.saturating_add(delta))
    }

    /// `YYYY-MM-DD HH:MM:SS`, the text of SQLite's `CURRENT_TIMESTAMP` (seconds truncated).
    pub fn to_sqlite(self) -> String {
        let (date, h, m, s, _) = self.parts();
        format!("{date} {h:02}:{m:02}:{s:02}")
    }

    /// `YYYY-MM-DD HH:MM:SS.ffffff+00:00`, the text Python's sqlite3 writes for an aware
    /// datetime (used for `expires_at`).
    pub fn to_sqlite_micros(self) -> String {
        let (date, h, m, s, us) = self.parts();
        format!("{date} {h:02}:{m:02}:{s:02}.{us:06}+00:00")
    }

    /// ISO-8601 as Python's `datetime.isoformat()` renders an aware UTC datetime
    /// (`YYYY-MM-DDTHH:MM:SS[.ffffff]+00:00`).
    pub fn to_iso(self) -> String {
        let (date, h, m, s, us) = self.parts();
        if us == 0 {
            format!("{date}T{h:02}:{m:02}:{s:02}+00:00")
        } else {
            format!("{date}T{h:02}:{m:02}:{s:02}.{us:06}+00:00")
        }
    }

    fn parts(self) -> (String, i64, i64, i64, i64) {
        let secs = self.0.div_euclid(1_000_000);
        let us = self.0.rem_euclid(1_000_000);
        let days = secs.div_euclid(86_400);
        let sod = secs.rem_euclid(86_400);
        let (y, mo, d) = civil_from_days(days);
        (
            format!("{y:04}-{mo:02}-{d:02}"),
            sod / 3600,
            (sod / 60) % 60,
            sod % 60,
            us,
        )
    }

    /// Parses `YYYY-MM-DD[ T]HH:MM:SS[.f{1,9}][Z|±HH:MM]` (no offset means UTC, as SQLite's
    /// own timestamps). Returns `None` on anything else.
    pub fn parse(text: &str) -> Option<Self> {
        let b = text.trim().as_bytes();
        if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b' ' | b'T') {
            return None;
        }
        let num = |r: std::ops::Range<usize>| -> Option<i64> {
            let s = std::str::from_utf8(b.get(r)?).ok()?;
            if !s.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            s.parse().ok()
        };
        let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
        if b[13] != b':' || b[16] != b':' {
            return None;
        }
        let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
        if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
            return None;
        }
        let mut i = 19;
        let mut us = 0i64;
        if b.get(i) == Some(&b'.') {
            i += 1;
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i == start {
                return None;
            }
            let frac = std::str::from_utf8(&b[start..i]).ok()?;
            let mut digits: String = frac.chars().take(6).collect();
            while digits.len() < 6 {
                digits.push('0');
            }
            us = digits.parse().ok()?;
        }
        let offset_secs = match &b[i..] {
            [] | [b'Z'] => 0,
            [sign @ (b'+' | b'-'), rest @ ..] if rest.len() == 5 && rest[2] == b':' => {
                let oh = num(i + 1..i + 3)?;
                let om = num(i + 4..i + 6)?;
                let o = oh * 3600 + om * 60;
                if *sign == b'+' {
                    o
                } else {
                    -o
                }
            }
            _ => return None,
        };
        let days = days_from_civil(y, mo, d);
        let secs = days * 86_400 + h * 3600 + mi * 60 + s - offset_secs;
        Some(Timestamp(secs * 1_000_000 + us))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_iso())
    }
}

// Howard Hinnant's algorithms (proleptic Gregorian calendar).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_the_three_text_forms() {
        let t = Timestamp::parse("2026-12-01 19:40:25.123456+00:00").expect("parse");
        assert_eq!(t.to_sqlite_micros(), "2026-12-01 19:40:25.123456+00:00");
        assert_eq!(t.to_sqlite(), "2026-12-01 19:40:25");
        assert_eq!(t.to_iso(), "2026-12-01T19:40:25.123456+00:00");
        assert_eq!(Timestamp::parse(&t.to_iso()), Some(t));
        let plain = Timestamp::parse("2024-02-29 00:00:00").expect("leap day");
        assert_eq!(plain.to_iso(), "2024-02-29T00:00:00+00:00");
        assert_eq!(
            Timestamp::parse("2024-02-29T02:00:00+02:00"),
            Some(plain),
            "offsets are folded into UTC"
        );
        assert_eq!(Timestamp::parse("1970-01-01 00:00:00"), Some(Timestamp(0)));
        assert_eq!(Timestamp::parse("2024-13-01 00:00:00"), None);
        assert_eq!(Timestamp::parse("garbage"), None);
        assert_eq!(Timestamp::parse("2024-01-01 00:00:00junk"), None);
    }

    #[test]
    fn plus_minutes_is_exact() {
        let t = Timestamp(0).plus_minutes(1.5);
        assert_eq!(t, Timestamp(90_000_000));
        assert_eq!(
            Timestamp(5).plus_minutes(f64::INFINITY),
            Timestamp(i64::MAX)
        );
    }
}
