//! Seeded pseudo-random numbers, hashing and a portable sine.
//!
//! Everything random in the generator comes from here, so a given seed produces the same world
//! on every platform and with every dependency version: the generator is SplitMix64, the hash is
//! its finaliser, and the sine is a polynomial built from IEEE-exact arithmetic only (the
//! platform's `sin` may differ in the last bit between C libraries).

/// The SplitMix64 finaliser: a strong 64-bit mixing function.
pub(crate) fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Hashes a seed, a purpose tag and two integer coordinates into 64 well-mixed bits.
pub(crate) fn hash(seed: u64, tag: u64, a: u64, b: u64) -> u64 {
    let h = mix(seed ^ mix(tag.wrapping_add(0x632B_E59B_D9B4_E019)));
    let h = mix(h ^ a.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    mix(h ^ b.wrapping_mul(0xD1B5_4A32_D192_ED03))
}

/// Maps 64 random bits to a float in [0, 1).
pub(crate) fn unit(bits: u64) -> f64 {
    (bits >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A small seeded generator (SplitMix64).
#[derive(Clone, Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    /// A generator for one purpose (`stream`) of one world seed; distinct streams are independent.
    pub(crate) fn derive(seed: u64, stream: u64) -> Rng {
        Rng(hash(seed, 0x5EED, stream, 0))
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// Uniform in [0, 1).
    pub(crate) fn f64(&mut self) -> f64 {
        unit(self.next_u64())
    }

    /// Uniform in [lo, hi).
    pub(crate) fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.f64()
    }

    /// Uniform integer in [lo, hi] (inclusive).
    pub(crate) fn int(&mut self, lo: u32, hi: u32) -> u32 {
        debug_assert!(lo <= hi);
        lo + (self.next_u64() % u64::from(hi - lo + 1)) as u32
    }

    /// True with probability `p`.
    pub(crate) fn chance(&mut self, p: f64) -> bool {
        self.f64() < p
    }

    /// Shuffles `items` in place (Fisher-Yates).
    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = (self.next_u64() % (i as u64 + 1)) as usize;
            items.swap(i, j);
        }
    }
}

/// Sine computed with additions and multiplications only, so it is bit-identical everywhere.
/// Accurate to about 1e-9 for the moderate arguments the terrain uses.
pub(crate) fn dsin(x: f64) -> f64 {
    use std::f64::consts::{FRAC_PI_2, PI, TAU};
    let k = (x / TAU).round();
    let mut r = x - k * TAU;
    if r > FRAC_PI_2 {
        r = PI - r;
    } else if r < -FRAC_PI_2 {
        r = -PI - r;
    }
    // Taylor series to x^15 on [-pi/2, pi/2], Horner form.
    let r2 = r * r;
    let mut s = -1.0 / 1_307_674_368_000.0;
    s = s * r2 + 1.0 / 6_227_020_800.0;
    s = s * r2 - 1.0 / 39_916_800.0;
    s = s * r2 + 1.0 / 362_880.0;
    s = s * r2 - 1.0 / 5_040.0;
    s = s * r2 + 1.0 / 120.0;
    s = s * r2 - 1.0 / 6.0;
    s = s * r2 + 1.0;
    s * r
}

/// Cosine to match [`dsin`].
pub(crate) fn dcos(x: f64) -> f64 {
    dsin(x + std::f64::consts::FRAC_PI_2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dsin_matches_libm() {
        let mut x = -200.0;
        while x < 200.0 {
            assert!((dsin(x) - x.sin()).abs() < 1e-8, "sin({x})");
            assert!((dcos(x) - x.cos()).abs() < 1e-8, "cos({x})");
            x += 0.0137;
        }
    }

    #[test]
    fn rng_is_repeatable_and_in_range() {
        let mut a = Rng::derive(7, 3);
        let mut b = Rng::derive(7, 3);
        let mut c = Rng::derive(7, 4);
        let mut differs = false;
        for _ in 0..1000 {
            let (x, y, z) = (a.f64(), b.f64(), c.f64());
            assert_eq!(x.to_bits(), y.to_bits());
            assert!((0.0..1.0).contains(&x));
            differs |= x != z;
            let n = a.int(2, 5);
            assert_eq!(n, b.int(2, 5));
            assert!((2..=5).contains(&n));
            c.int(2, 5);
        }
        assert!(differs);
    }
}
