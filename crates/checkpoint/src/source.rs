//! Injectable sources of time and randomness, and a Python-compatible random generator.
//!
//! Everything LangGraph mints from the outside world (checkpoint ids, `ts` strings, the
//! random fraction of channel versions) goes through a [`Clock`] or a [`RandomSource`], so
//! production code uses [`SystemClock`] and [`OsRandom`] while tests plug in a
//! [`FakeClock`] and a seeded [`PyRandom`] and get back the very bytes of a Python trace.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of wall-clock time.
pub trait Clock: Send + Sync {
    /// Nanoseconds since the Unix epoch (1970-01-01T00:00:00Z).
    fn now_ns(&self) -> u64;
}

/// The operating system's wall clock (Python's `time.time_ns()`).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    /// A clock set before 1970 reads 0; one past the year 2554 saturates.
    fn now_ns(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
            .unwrap_or(0)
    }
}

/// A clock for tests: the n-th reading (n = 1, 2, ...) is `start_ns + n * step_ns`.
///
/// This is the fake clock of the golden-trace generator: readings never repeat as long as
/// `step_ns > 0`, whichever thread takes them. Arithmetic wraps instead of overflowing.
#[derive(Debug)]
pub struct FakeClock {
    start_ns: u64,
    step_ns: u64,
    calls: AtomicU64,
}

impl FakeClock {
    /// A clock whose first reading is `start_ns + step_ns`.
    pub fn new(start_ns: u64, step_ns: u64) -> Self {
        FakeClock {
            start_ns,
            step_ns,
            calls: AtomicU64::new(0),
        }
    }

    /// How many times the clock has been read so far.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Clock for FakeClock {
    fn now_ns(&self) -> u64 {
        let n = self.calls.fetch_add(1, Ordering::SeqCst).wrapping_add(1);
        self.start_ns.wrapping_add(n.wrapping_mul(self.step_ns))
    }
}

/// A source of random numbers with the two operations LangGraph uses from Python's
/// `random` module.
pub trait RandomSource: Send {
    /// A uniform float in `[0, 1)` with 53 random bits (Python's `random.random()`).
    fn random(&mut self) -> f64;

    /// A uniform integer of `k` random bits (Python's `random.getrandbits(k)`).
    /// `k` above 64 is treated as 64; `k = 0` returns 0.
    fn getrandbits(&mut self, k: u32) -> u64;
}

impl<R: RandomSource + ?Sized> RandomSource for Box<R> {
    fn random(&mut self) -> f64 {
        (**self).random()
    }

    fn getrandbits(&mut self, k: u32) -> u64 {
        (**self).getrandbits(k)
    }
}

const MT_N: usize = 624;
const MT_M: usize = 397;
const MT_MATRIX_A: u32 = 0x9908_b0df;
const MT_UPPER: u32 = 0x8000_0000;
const MT_LOWER: u32 = 0x7fff_ffff;

/// CPython's `random.Random`: the MT19937 Mersenne Twister, seeded and read exactly as
/// CPython seeds and reads it, so the same seed gives the same numbers.
#[derive(Clone)]
pub struct PyRandom {
    state: [u32; MT_N],
    index: usize,
}

impl std::fmt::Debug for PyRandom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PyRandom")
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

impl PyRandom {
    /// The generator of `random.Random(seed)`: CPython feeds the 32-bit words of the seed,
    /// least significant first (one word for seeds below 2^32, `[0]` for 0), to
    /// `init_by_array`.
    pub fn new(seed: u64) -> Self {
        let lo = seed as u32;
        let hi = (seed >> 32) as u32;
        if hi == 0 {
            Self::from_key(&[lo])
        } else {
            Self::from_key(&[lo, hi])
        }
    }

    /// The generator after MT19937's `init_by_array(key)`; an empty key counts as `[0]`.
    pub fn from_key(key: &[u32]) -> Self {
        let key: &[u32] = if key.is_empty() { &[0] } else { key };
        let mut mt = Self::from_u32(19_650_218);
        let s = &mut mt.state;
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..MT_N.max(key.len()) {
            let prev = s[i - 1] ^ (s[i - 1] >> 30);
            s[i] = (s[i] ^ prev.wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= MT_N {
                s[0] = s[MT_N - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..MT_N - 1 {
            let prev = s[i - 1] ^ (s[i - 1] >> 30);
            s[i] = (s[i] ^ prev.wrapping_mul(1_566_083_941)).wrapping_sub(i as u32);
            i += 1;
            if i >= MT_N {
                s[0] = s[MT_N - 1];
                i = 1;
            }
        }
        s[0] = MT_UPPER;
        mt
    }

    /// MT19937's `init_genrand(seed)`.
    fn from_u32(seed: u32) -> Self {
        let mut state = [0u32; MT_N];
        state[0] = seed;
        for i in 1..MT_N {
            let prev = state[i - 1];
            state[i] = 1_812_433_253u32
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(i as u32);
        }
        PyRandom { state, index: MT_N }
    }

    /// Regenerates the whole state block (the "twist").
    fn twist(&mut self) {
        let s = &mut self.state;
        for k in 0..MT_N {
            let y = (s[k] & MT_UPPER) | (s[(k + 1) % MT_N] & MT_LOWER);
            let mag = if y & 1 == 1 { MT_MATRIX_A } else { 0 };
            s[k] = s[(k + MT_M) % MT_N] ^ (y >> 1) ^ mag;
        }
        self.index = 0;
    }

    /// The next tempered 32-bit output (`genrand_uint32`).
    pub fn next_u32(&mut self) -> u32 {
        if self.index >= MT_N {
            self.twist();
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }
}

impl RandomSource for PyRandom {
    fn random(&mut self) -> f64 {
        let a = f64::from(self.next_u32() >> 5);
        let b = f64::from(self.next_u32() >> 6);
        (a * 67_108_864.0 + b) * (1.0 / 9_007_199_254_740_992.0)
    }

    /// CPython's construction: one 32-bit output per word, least significant word first,
    /// the last word keeping only its top bits.
    fn getrandbits(&mut self, k: u32) -> u64 {
        let mut k = k.min(64);
        if k == 0 {
            return 0;
        }
        let mut out = 0u64;
        let mut shift = 0u32;
        while k > 0 {
            let mut word = self.next_u32();
            if k < 32 {
                word >>= 32 - k;
            }
            out |= u64::from(word) << shift;
            shift += 32;
            k = k.saturating_sub(32);
        }
        out
    }
}

/// The production random source: the same Mersenne Twister as Python's module-level
/// `random`, seeded like CPython seeds it when given no seed (624 words of OS entropy).
///
/// If the OS has no entropy to give, the seed falls back to the clock mixed through a
/// randomly keyed hasher; ids and versions stay unique through their other parts.
#[derive(Clone, Debug)]
pub struct OsRandom(PyRandom);

impl OsRandom {
    /// A generator seeded from OS entropy.
    pub fn new() -> Self {
        let mut bytes = [0u8; MT_N * 4];
        if getrandom::fill(&mut bytes).is_err() {
            fallback_entropy(&mut bytes);
        }
        let key: Vec<u32> = bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        OsRandom(PyRandom::from_key(&key))
    }
}

impl Default for OsRandom {
    fn default() -> Self {
        OsRandom::new()
    }
}

impl RandomSource for OsRandom {
    fn random(&mut self) -> f64 {
        self.0.random()
    }

    fn getrandbits(&mut self, k: u32) -> u64 {
        self.0.getrandbits(k)
    }
}

/// Fills `bytes` from the clock hashed with std's randomly keyed SipHash.
fn fallback_entropy(bytes: &mut [u8]) {
    let state = RandomState::new();
    let now = SystemClock.now_ns();
    for (i, chunk) in bytes.chunks_mut(8).enumerate() {
        let mut h = state.build_hasher();
        h.write_u64(now);
        h.write_usize(i);
        let word = h.finish().to_le_bytes();
        chunk.copy_from_slice(&word[..chunk.len()]);
    }
}
