//! Correlation coefficients, tie-aware as scipy computes them: Pearson r, Spearman ρ (Pearson on
//! average ranks), Kendall τ-b, and the controllable τ_u of seed 001 §2.2.

use crate::stats::average_ranks;

/// Pearson's r. NaN when either input is constant or shorter than 2 (scipy returns NaN too).
pub fn pearson(x: &[f64], y: &[f64]) -> f64 {
    assert_eq!(x.len(), y.len(), "pearson: inputs of different lengths");
    let n = x.len();
    if n < 2 {
        return f64::NAN;
    }
    let mx = x.iter().sum::<f64>() / n as f64;
    let my = y.iter().sum::<f64>() / n as f64;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let (dx, dy) = (x[i] - mx, y[i] - my);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if sxx == 0.0 || syy == 0.0 {
        return f64::NAN;
    }
    (sxy / (sxx.sqrt() * syy.sqrt())).clamp(-1.0, 1.0)
}

/// Spearman's ρ with average ranks for ties (`scipy.stats.spearmanr`).
pub fn spearman(x: &[f64], y: &[f64]) -> f64 {
    pearson(&average_ranks(x), &average_ranks(y))
}

/// Pair counts behind Kendall's τ-b.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PairCounts {
    pub concordant: f64,
    pub discordant: f64,
    /// Tied in x only.
    pub ties_x: f64,
    /// Tied in y only.
    pub ties_y: f64,
}

impl PairCounts {
    fn add(&mut self, dx: f64, dy: f64) {
        match (dx == 0.0, dy == 0.0) {
            (true, true) => {}
            (true, false) => self.ties_x += 1.0,
            (false, true) => self.ties_y += 1.0,
            _ if (dx > 0.0) == (dy > 0.0) => self.concordant += 1.0,
            _ => self.discordant += 1.0,
        }
    }

    /// τ-b = (C − D) / √((C + D + T_x)(C + D + T_y)); NaN when a side has no untied pair.
    pub fn tau_b(&self) -> f64 {
        let cd = self.concordant + self.discordant;
        let denom = ((cd + self.ties_x) * (cd + self.ties_y)).sqrt();
        if denom == 0.0 {
            f64::NAN
        } else {
            (self.concordant - self.discordant) / denom
        }
    }
}

/// Kendall's τ-b (`scipy.stats.kendalltau`, the default variant). O(n²), fine for rankings and for
/// instance-level data of a few thousand points.
pub fn kendall_tau_b(x: &[f64], y: &[f64]) -> f64 {
    assert_eq!(x.len(), y.len(), "kendall: inputs of different lengths");
    let mut c = PairCounts::default();
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            c.add(x[i] - x[j], y[i] - y[j]);
        }
    }
    c.tau_b()
}

/// Controllable Kendall τ_u (seed 001 §2.2): τ-b over the pairs of systems whose reference ratings
/// differ by at most `u` (all pairs when `u` is `None`) *and* whose reference confidence intervals do
/// not overlap (closed intervals: touching counts as overlapping). `reference` holds (rating, lower,
/// upper). NaN when no pair qualifies.
pub fn tau_u(ours: &[f64], reference: &[(f64, f64, f64)], u: Option<f64>) -> f64 {
    assert_eq!(ours.len(), reference.len(), "tau_u: inputs of different lengths");
    let mut c = PairCounts::default();
    for i in 0..ours.len() {
        for j in i + 1..ours.len() {
            let (ri, li, ui) = reference[i];
            let (rj, lj, uj) = reference[j];
            let close_enough = u.is_none_or(|u| (ri - rj).abs() <= u);
            let separable = ui < lj || uj < li;
            if close_enough && separable {
                c.add(ours[i] - ours[j], ri - rj);
            }
        }
    }
    c.tau_b()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tau_u_fixture_from_the_seed_digest() {
        // Ratings A..E = 1200,1180,1150,1100,1090 with CI half-widths 15,15,20,10,10.
        let r = [(1200.0, 15.0), (1180.0, 15.0), (1150.0, 20.0), (1100.0, 10.0), (1090.0, 10.0)];
        let reference: Vec<_> = r.iter().map(|&(v, h)| (v, v - h, v + h)).collect();
        let g = [0.70, 0.75, 0.60, 0.62, 0.50];
        assert!((tau_u(&g, &reference, Some(60.0)) - 1.0 / 3.0).abs() < 1e-12);
        assert!((tau_u(&g, &reference, None) - 5.0 / 7.0).abs() < 1e-12);
        let g2 = [0.70, 0.75, 0.60, 0.62, 0.60];
        assert!(tau_u(&g2, &reference, Some(60.0)).abs() < 1e-12);
    }

    #[test]
    fn constant_input_is_nan() {
        assert!(pearson(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]).is_nan());
        assert!(kendall_tau_b(&[1.0, 1.0], &[1.0, 2.0]).is_nan());
    }
}
