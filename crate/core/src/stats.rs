//! Small statistics shared by scoring, ranking and meta-evaluation: a seeded RNG, means, quantiles,
//! tie-aware ranks and a generic percentile bootstrap.

use rand::{Rng as _, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The one random source of the crate: ChaCha8 seeded from a `u64`, identical on every platform.
pub struct Rng(ChaCha8Rng);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(ChaCha8Rng::seed_from_u64(seed))
    }
    /// Uniform in `[0, n)`.
    pub fn below(&mut self, n: usize) -> usize {
        self.0.random_range(0..n)
    }
    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.0.random::<f64>()
    }
    /// `n` indices drawn with replacement from `0..n`.
    pub fn resample(&mut self, n: usize) -> Vec<usize> {
        (0..n).map(|_| self.below(n)).collect()
    }
    /// Fisher–Yates shuffle.
    pub fn shuffle<T>(&mut self, xs: &mut [T]) {
        for i in (1..xs.len()).rev() {
            let j = self.below(i + 1);
            xs.swap(i, j);
        }
    }
    /// A draw from Multinomial(n, p) as counts (sequential binomial draws by inversion of uniforms).
    pub fn multinomial(&mut self, n: usize, p: &[f64]) -> Vec<usize> {
        // n draws of a categorical variable: O(n log k) with a cumulative table, exact for any p.
        let total: f64 = p.iter().sum();
        let mut cum = Vec::with_capacity(p.len());
        let mut acc = 0.0;
        for &x in p {
            acc += x / total;
            cum.push(acc);
        }
        let mut counts = vec![0; p.len()];
        for _ in 0..n {
            let u = self.0.random::<f64>();
            let k = cum.partition_point(|&c| c <= u).min(p.len() - 1);
            counts[k] += 1;
        }
        counts
    }
}

/// P(X = 0..=n) for X ~ Binomial(n, p), by the recurrence on C(n, k) (exact to rounding for the small
/// n it is used with).
pub fn binomial_pmf(n: usize, p: f64) -> Vec<f64> {
    let mut c = 1.0; // C(n, k)
    (0..=n)
        .map(|k| {
            if k > 0 {
                c = c * (n + 1 - k) as f64 / k as f64;
            }
            c * p.powi(k as i32) * (1.0 - p).powi((n - k) as i32)
        })
        .collect()
}

pub fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Median (mean of the two middle values for an even count). NaN for an empty slice.
pub fn median(xs: &[f64]) -> f64 {
    quantile(xs, 0.5)
}

/// Quantile with linear interpolation between order statistics (numpy's default, `method="linear"`).
pub fn quantile(xs: &[f64], q: f64) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let pos = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// Ranks 1..n with ties given their average rank (scipy's `rankdata(method="average")`).
pub fn average_ranks(xs: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..xs.len()).collect();
    idx.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
    let mut ranks = vec![0.0; xs.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && xs[idx[j + 1]] == xs[idx[i]] {
            j += 1;
        }
        let r = (i + j) as f64 / 2.0 + 1.0;
        for &k in &idx[i..=j] {
            ranks[k] = r;
        }
        i = j + 1;
    }
    ranks
}

/// A percentile confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Interval {
    pub lower: f64,
    pub upper: f64,
}

/// Percentile bootstrap: resample the `n` units with replacement `reps` times, evaluate `stat` on each
/// resample (given as indices) and return the central `level` interval of the finite results.
/// `None` when fewer than half of the resamples gave a finite value.
pub fn bootstrap_ci<F>(n: usize, reps: usize, level: f64, seed: u64, mut stat: F) -> Option<Interval>
where
    F: FnMut(&[usize]) -> f64,
{
    let mut rng = Rng::new(seed);
    let vals: Vec<f64> = (0..reps).map(|_| stat(&rng.resample(n))).collect();
    percentile_interval(&vals, reps, level)
}

/// The central `level` interval of the finite values among `replicates` (NaN: a replicate without a
/// value); `None` when fewer than half of the `reps` replicates asked for gave a finite value.
pub fn percentile_interval(replicates: &[f64], reps: usize, level: f64) -> Option<Interval> {
    let vals: Vec<f64> = replicates.iter().copied().filter(|v| v.is_finite()).collect();
    if reps == 0 || vals.len() * 2 < reps {
        return None;
    }
    let a = (1.0 - level) / 2.0;
    Some(Interval { lower: quantile(&vals, a), upper: quantile(&vals, 1.0 - a) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_with_ties() {
        assert_eq!(average_ranks(&[10.0, 20.0, 10.0, 30.0]), [1.5, 3.0, 1.5, 4.0]);
    }

    #[test]
    fn quantiles_like_numpy() {
        // numpy.quantile([1, 2, 3, 4], [0.25, 0.5, 0.975]) = [1.75, 2.5, 3.925]
        let xs = [4.0, 1.0, 3.0, 2.0];
        assert!((quantile(&xs, 0.25) - 1.75).abs() < 1e-12);
        assert!((median(&xs) - 2.5).abs() < 1e-12);
        assert!((quantile(&xs, 0.975) - 3.925).abs() < 1e-12);
    }

    #[test]
    fn rng_is_reproducible_and_multinomial_sums() {
        let a: Vec<usize> = Rng::new(7).resample(10);
        assert_eq!(a, Rng::new(7).resample(10));
        let c = Rng::new(1).multinomial(1000, &[0.2, 0.3, 0.5]);
        assert_eq!(c.iter().sum::<usize>(), 1000);
        assert!(c[2] > c[0]);
    }
}
