//! Seeded random numbers with one independent stream per random element.
//!
//! A run has one seed. Every random element (a link's service times, its loss, its jitter, a cross
//! flow's arrivals, a source's start offset) draws from its own generator, derived from the seed
//! and the element's *label* (a stable name such as `"link a→b loss"`). Changing one element's
//! behaviour, or the number of draws it makes, therefore leaves every other element's sequence
//! unchanged: with the same seed a cross flow sees the same arrivals whatever the ACP controller
//! (common random numbers). Labels rather than indices keep this true when flows are added or
//! reordered in a scenario.
//!
//! The generator is xoshiro256++ (Blackman and Vigna), seeded through splitmix64.

/// A xoshiro256++ generator.
#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// A generator whose whole sequence is determined by `seed`.
    pub fn new(seed: u64) -> Self {
        let mut x = seed;
        Rng {
            s: [
                splitmix(&mut x),
                splitmix(&mut x),
                splitmix(&mut x),
                splitmix(&mut x),
            ],
        }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in (0, 1]: never 0, so its logarithm is finite.
    pub fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        // unit() is in (0, 1]: p = 0 is never true, p = 1 always.
        self.unit() <= p
    }

    /// Exponentially distributed with the given mean.
    pub fn exp(&mut self, mean: f64) -> f64 {
        -mean * self.unit().ln()
    }

    /// A uniform integer in `[0, max]` (multiply-shift; for `max ≤ 2²⁰` no value's probability
    /// is off by more than 2⁻⁴³).
    pub fn up_to(&mut self, max: u32) -> u32 {
        let x = (u128::from(self.next_u64()) * (u128::from(max) + 1)) >> 64;
        u32::try_from(x).unwrap_or(max)
    }

    /// Standard normal (Box–Muller, cosine branch: two uniforms per draw).
    pub fn normal(&mut self) -> f64 {
        let radius = (-2.0 * self.unit().ln()).sqrt();
        radius * (2.0 * std::f64::consts::PI * self.unit()).cos()
    }

    /// Uniform in `[lo, hi]`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.unit() - f64::EPSILON / 2.0).max(0.0)
    }
}

/// The source of every stream of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Streams {
    seed: u64,
}

impl Streams {
    /// The streams of a run with this seed.
    pub fn new(seed: u64) -> Self {
        Streams { seed }
    }

    /// The run's seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The generator of the element called `label`: the same for the same seed and label,
    /// independent of every other label's.
    pub fn stream(&self, label: &str) -> Rng {
        // FNV-1a over the label (stable across platforms and releases, unlike std's hasher),
        // mixed with the seed through splitmix64.
        let mut h: u64 = 0xCBF2_9CE4_8422_2325;
        for b in label.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01B3);
        }
        let mut x = self.seed ^ h.rotate_left(17);
        Rng::new(splitmix(&mut x) ^ h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_matches_reference() {
        // First outputs of splitmix64 seeded with 0 (reference implementation by S. Vigna).
        let mut x = 0;
        assert_eq!(splitmix(&mut x), 0xE220_A839_7B1D_CDAF);
        assert_eq!(splitmix(&mut x), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn xoshiro_matches_reference() {
        // xoshiro256++ from the state {1, 2, 3, 4}: reference outputs of the C implementation.
        let mut r = Rng { s: [1, 2, 3, 4] };
        let got: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
        assert_eq!(got, [41_943_041, 58_720_359, 3_588_806_011_781_223]);
    }

    #[test]
    fn same_seed_same_sequence_and_sane_moments() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        assert!((0..100).all(|_| a.next_u64() == b.next_u64()));
        assert_ne!(Rng::new(1).next_u64(), Rng::new(2).next_u64());
        // Mean of 10⁶ exponentials with mean 2: standard error 2/1000, so ±1 % is 10 σ.
        let mut r = Rng::new(3);
        let n = 1_000_000;
        let mean = (0..n).map(|_| r.exp(2.0)).sum::<f64>() / n as f64;
        assert!((mean - 2.0).abs() < 0.02, "{mean}");
        assert!((0..1000).all(|_| {
            let u = r.unit();
            u > 0.0 && u <= 1.0
        }));
        assert!((0..1000).all(|_| (-1.0..=1.0).contains(&r.uniform(-1.0, 1.0))));
        assert!((0..1000).all(|_| r.up_to(15) <= 15));
        // Mean and variance of 10⁶ standard normals: standard errors 0.001 and 0.0014.
        let xs: Vec<f64> = (0..n).map(|_| r.normal()).collect();
        let m = xs.iter().sum::<f64>() / n as f64;
        let v = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n as f64;
        assert!(m.abs() < 0.006 && (v - 1.0).abs() < 0.008, "{m} {v}");
    }

    #[test]
    fn streams_are_stable_and_distinct() {
        let s = Streams::new(42);
        let first = |label: &str| s.stream(label).next_u64();
        assert_eq!(first("link a→b loss"), first("link a→b loss"));
        assert_ne!(first("link a→b loss"), first("link a→b service"));
        assert_ne!(
            first("link a→b loss"),
            Streams::new(43).stream("link a→b loss").next_u64()
        );
        // Draining one stream leaves another untouched (what common random numbers rest on).
        let mut x = s.stream("x");
        let before: Vec<u64> = (0..5).map(|_| x.next_u64()).collect();
        let mut y = s.stream("y");
        (0..1000).for_each(|_| {
            y.next_u64();
        });
        let mut x2 = s.stream("x");
        assert!(before.iter().all(|&v| v == x2.next_u64()));
    }
}
