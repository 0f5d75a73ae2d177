//! Scripts from a seed, for the test that runs in CI: a xorshift64* generator fills a
//! buffer per op and `arbitrary` reads the op from it, so the seeded scripts and the fuzzed
//! ones are the same kind of script.

use arbitrary::{Arbitrary, Unstructured};

use crate::op::{Op, Script};

/// The bytes each op is read from (more than the largest op takes).
const BYTES_PER_OP: usize = 96;

/// xorshift64* (Vigna): small, deterministic, good enough to pick ops.
#[derive(Clone, Debug)]
pub struct XorShift(u64);

impl XorShift {
    /// A generator; seed 0 is moved off the fixed point.
    pub fn new(seed: u64) -> XorShift {
        XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let n = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&n[..chunk.len()]);
        }
    }
}

/// The script of `seed`: `ops` operations, fenced or not as the seed decides.
pub fn script(seed: u64, ops: usize) -> Script {
    let mut rng = XorShift::new(seed);
    let fenced = rng.next_u64() & 1 == 0;
    let mut buf = [0u8; BYTES_PER_OP];
    let ops = (0..ops)
        .map(|_| {
            rng.fill(&mut buf);
            // Any bytes make an op (every field is read modulo its pool); a read that runs
            // out of bytes takes zeros.
            Op::arbitrary(&mut Unstructured::new(&buf)).unwrap_or(Op::DeleteThread(0))
        })
        .collect();
    Script { fenced, ops }
}
