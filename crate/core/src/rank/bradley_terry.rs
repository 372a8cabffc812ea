//! Bradley–Terry maximum likelihood on the points each pair of models took from each other.
//!
//! `P(i beats j) = 1 / (1 + 10^((R_j − R_i)/400))`, ratings on the Elo scale `R = 1000 + 400·β/ln 10`
//! with mean 1000, as Chatbot Arena's `compute_mle_elo` (logistic regression without intercept, whose
//! solution from a zero start has coefficients summing to zero). A tie counts as half a win for each side.
//!
//! The MLE exists only when the "has taken points from" graph is strongly connected; otherwise a model
//! that won (or lost) every comparison would drift to ±∞. In that case — and only then — each model
//! also plays one virtual tie against a virtual opponent of average strength (a weak logistic prior
//! centred on the mean), which keeps every rating finite; affected models are reported.
//!
//! The fit is sparse: it reads each pair of models that met once (their points from each other),
//! so memory and each iteration's time are linear in the pairs and models, never n². Newton's
//! method on the convex objective, each step solved by conjugate gradients (Jacobi-preconditioned)
//! with the Hessian applied pair by pair, then a backtracking line search.

use crate::error::{invalid, Result};

/// Elo points per natural-log unit of strength.
pub const ELO_PER_NAT: f64 = 400.0 / std::f64::consts::LN_10;
pub const INITIAL_RATING: f64 = 1000.0;

/// Two models that met: `i < j`, the points `i` took from `j` (wins + ½ ties) and those `j` took from `i`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pair {
    pub i: usize,
    pub j: usize,
    pub wins_i: f64,
    pub wins_j: f64,
}

/// The result of a fit: ratings and which models needed the prior.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    pub ratings: Vec<f64>,
    /// True when the comparison graph was not strongly connected and the virtual-tie prior was used.
    pub regularized: bool,
}

/// Fit ratings of `n` models from the pairs that met (each pair once, `i < j`).
pub fn fit_pairs(n: usize, pairs: &[Pair]) -> Result<Fit> {
    if n < 2 {
        return invalid!("ranking needs at least two models, found {n}");
    }
    let bad = |w: f64| !w.is_finite() || w < 0.0;
    if pairs.iter().any(|p| p.i >= p.j || p.j >= n || bad(p.wins_i) || bad(p.wins_j)) {
        return invalid!("each pair of models needs two distinct models and finite, non-negative points");
    }
    if pairs.iter().all(|p| p.wins_i + p.wins_j == 0.0) {
        return invalid!("no comparisons between the models");
    }
    let regularized = !strongly_connected(n, pairs);
    let prior = if regularized { 1.0 } else { 0.0 };
    let beta = newton(n, pairs, prior);
    let mean = beta.iter().sum::<f64>() / n as f64;
    Ok(Fit { ratings: beta.iter().map(|b| INITIAL_RATING + ELO_PER_NAT * (b - mean)).collect(), regularized })
}

fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

fn log_sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        -(-x).exp().ln_1p()
    } else {
        x - x.exp().ln_1p()
    }
}

/// Objective: negative log-likelihood, plus `prior` virtual ties against β = 0 per model, plus
/// ½(Σβ)² to pin the location when there is no prior (the likelihood is shift-invariant).
fn objective(pairs: &[Pair], beta: &[f64], prior: f64) -> f64 {
    let mut f = 0.0;
    for p in pairs {
        let d = beta[p.i] - beta[p.j];
        if p.wins_i > 0.0 {
            f -= p.wins_i * log_sigmoid(d);
        }
        if p.wins_j > 0.0 {
            f -= p.wins_j * log_sigmoid(-d);
        }
    }
    if prior > 0.0 {
        f -= beta.iter().map(|b| prior * 0.5 * (log_sigmoid(*b) + log_sigmoid(-*b))).sum::<f64>();
    } else {
        let s: f64 = beta.iter().sum();
        f += 0.5 * s * s;
    }
    f
}

/// The Hessian at one point: each pair's weight games·p·(1−p) (off the diagonal; its sums, with the
/// prior's, on it), and (without a prior) the all-ones term of ½(Σβ)².
struct Hessian<'a> {
    pairs: &'a [Pair],
    weight: Vec<f64>,
    diagonal: Vec<f64>,
    ones: bool,
}

impl Hessian<'_> {
    /// `out = H v`.
    fn apply(&self, v: &[f64], out: &mut [f64]) {
        let s: f64 = if self.ones { v.iter().sum() } else { 0.0 };
        for (o, (d, x)) in out.iter_mut().zip(self.diagonal.iter().zip(v)) {
            *o = d * x + s;
        }
        // The pairs' off-diagonal entries (their diagonal part is in `diagonal`).
        for (p, w) in self.pairs.iter().zip(&self.weight) {
            out[p.i] -= w * v[p.j];
            out[p.j] -= w * v[p.i];
        }
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Solve `H x = b` by conjugate gradients with the diagonal as preconditioner, to a relative
/// residual of 1e-12 or `max_iter` steps; every iterate is a descent direction for Newton.
fn conjugate_gradients(h: &Hessian, b: &[f64], max_iter: usize) -> Vec<f64> {
    let n = b.len();
    let precond: Vec<f64> = (0..n).map(|i| 1.0 / (h.diagonal[i] + if h.ones { 1.0 } else { 0.0 }).max(1e-300)).collect();
    let mut x = vec![0.0; n];
    let mut r = b.to_vec();
    let mut z: Vec<f64> = r.iter().zip(&precond).map(|(r, m)| r * m).collect();
    let mut p = z.clone();
    let mut rz = dot(&r, &z);
    let stop = 1e-24 * dot(b, b);
    let mut hp = vec![0.0; n];
    for _ in 0..max_iter {
        if dot(&r, &r) <= stop {
            break;
        }
        h.apply(&p, &mut hp);
        let php = dot(&p, &hp);
        // A curvature that is not positive (or NaN) ends the solve: what it has is a descent direction.
        if php.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            break;
        }
        let alpha = rz / php;
        for k in 0..n {
            x[k] += alpha * p[k];
            r[k] -= alpha * hp[k];
        }
        for k in 0..n {
            z[k] = r[k] * precond[k];
        }
        let rz_next = dot(&r, &z);
        let beta = rz_next / rz;
        rz = rz_next;
        for k in 0..n {
            p[k] = z[k] + beta * p[k];
        }
    }
    x
}

fn newton(n: usize, pairs: &[Pair], prior: f64) -> Vec<f64> {
    let mut beta = vec![0.0; n];
    let mut f = objective(pairs, &beta, prior);
    // Each pair's games and the models' total games (the diagonal's pair part).
    let games: Vec<f64> = pairs.iter().map(|p| p.wins_i + p.wins_j).collect();
    for _ in 0..200 {
        let mut g = vec![0.0; n];
        let mut weight = Vec::with_capacity(pairs.len());
        let mut diagonal = vec![0.0; n];
        for (p, &games) in pairs.iter().zip(&games) {
            let s = sigmoid(beta[p.i] - beta[p.j]);
            g[p.i] -= p.wins_i - games * s;
            g[p.j] += p.wins_i - games * s;
            let w = games * s * (1.0 - s);
            diagonal[p.i] += w;
            diagonal[p.j] += w;
            weight.push(w);
        }
        if prior > 0.0 {
            for i in 0..n {
                let s = sigmoid(beta[i]);
                g[i] -= prior * (0.5 - s);
                diagonal[i] += prior * s * (1.0 - s);
            }
        } else {
            let s: f64 = beta.iter().sum();
            g.iter_mut().for_each(|x| *x += s);
        }
        if g.iter().all(|x| x.abs() < 1e-13) {
            break;
        }
        let h = Hessian { pairs, weight, diagonal, ones: prior == 0.0 };
        let step = conjugate_gradients(&h, &g, 4 * n + 100);
        // Backtracking line search on the convex objective.
        let mut t = 1.0;
        let mut next;
        loop {
            next = beta.iter().zip(&step).map(|(b, d)| b - t * d).collect::<Vec<_>>();
            let fn_ = objective(pairs, &next, prior);
            if fn_ <= f + 1e-12 * f.abs().max(1.0) || t < 1e-8 {
                f = fn_;
                break;
            }
            t *= 0.5;
        }
        let moved = step.iter().map(|d| (t * d).abs()).fold(0.0, f64::max);
        beta = next;
        if moved < 1e-11 {
            break;
        }
    }
    beta
}

/// Whether every model can be reached from every other along "took points from" edges.
pub fn strongly_connected(n: usize, pairs: &[Pair]) -> bool {
    // Edges i → j where i took points from j, as adjacency lists (forward and reversed).
    let mut forward = vec![Vec::new(); n];
    let mut backward = vec![Vec::new(); n];
    for p in pairs {
        if p.wins_i > 0.0 {
            forward[p.i].push(p.j);
            backward[p.j].push(p.i);
        }
        if p.wins_j > 0.0 {
            forward[p.j].push(p.i);
            backward[p.i].push(p.j);
        }
    }
    let reaches_all = |adj: &[Vec<usize>]| {
        let mut seen = vec![false; n];
        let mut stack = vec![0];
        seen[0] = true;
        while let Some(i) = stack.pop() {
            for &j in &adj[i] {
                if !seen[j] {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        seen.into_iter().all(|s| s)
    };
    n == 0 || (reaches_all(&forward) && reaches_all(&backward))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fit of a dense matrix `wins[i][j]`, the points model i took from model j.
    fn fit(wins: &[Vec<f64>]) -> Result<Fit> {
        let n = wins.len();
        let pairs: Vec<Pair> = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .map(|(i, j)| Pair { i, j, wins_i: wins[i][j], wins_j: wins[j][i] })
            .collect();
        fit_pairs(n, &pairs)
    }

    #[test]
    fn two_models_match_the_closed_form() {
        // 3 wins of A over B, 1 of B over A: p = 0.75, ΔR = 400·log10(3).
        let f = fit(&[vec![0.0, 3.0], vec![1.0, 0.0]]).unwrap();
        assert!(!f.regularized);
        assert!((f.ratings[0] - f.ratings[1] - 400.0 * 3f64.log10()).abs() < 1e-8);
        assert!((f.ratings[0] + f.ratings[1] - 2000.0).abs() < 1e-8);
    }

    /// A small deterministic generator for the tests' tournaments.
    fn lcg(state: &mut u64) -> f64 {
        *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (*state >> 11) as f64 / (1u64 << 53) as f64
    }

    #[test]
    fn the_sparse_newton_fit_equals_hunters_mm_iteration() {
        // 60 models, every pair plays 3 games from known strengths (ties half a win each side): the
        // MLE by an independent method, Hunter's (2004) minorization–maximization, run to convergence.
        let n = 60;
        let mut state = 7u64;
        let truth: Vec<f64> = (0..n).map(|i| i as f64 / 20.0).collect();
        let mut pairs = Vec::new();
        for i in 0..n {
            for j in i + 1..n {
                let p = 1.0 / (1.0 + (truth[j] - truth[i]).exp());
                let wins_i: f64 = (0..3).map(|_| if lcg(&mut state) < p { 1.0 } else { 0.0 }).sum::<f64>() + 0.5;
                pairs.push(Pair { i, j, wins_i, wins_j: 4.0 - wins_i });
            }
        }
        let fit = fit_pairs(n, &pairs).unwrap();
        assert!(!fit.regularized);
        let mut pi = vec![1.0; n];
        for _ in 0..20_000 {
            let mut won = vec![0.0; n];
            let mut denom = vec![0.0; n];
            for p in &pairs {
                let games = p.wins_i + p.wins_j;
                won[p.i] += p.wins_i;
                won[p.j] += p.wins_j;
                denom[p.i] += games / (pi[p.i] + pi[p.j]);
                denom[p.j] += games / (pi[p.i] + pi[p.j]);
            }
            pi = (0..n).map(|k| won[k] / denom[k]).collect();
        }
        let mean = pi.iter().map(|p: &f64| p.ln()).sum::<f64>() / n as f64;
        for k in 0..n {
            let mm = INITIAL_RATING + ELO_PER_NAT * (pi[k].ln() - mean);
            assert!((fit.ratings[k] - mm).abs() < 1e-6, "model {k}: {} vs MM {mm}", fit.ratings[k]);
        }
    }

    #[test]
    fn twenty_thousand_models_in_a_ring_fit_in_linear_memory() {
        // A ring and one random opponent each: 40,000 pairs. The dense fit needed 20,000² cells.
        let n = 20_000;
        let mut state = 11u64;
        let mut pairs = Vec::new();
        for i in 0..n {
            let j = (i + 1) % n;
            let win = if lcg(&mut state) < 0.5 { 1.0 } else { 0.0 };
            let (a, b) = (i.min(j), i.max(j));
            pairs.push(Pair { i: a, j: b, wins_i: win, wins_j: 1.0 - win });
        }
        let fit = fit_pairs(n, &pairs).unwrap();
        assert!(fit.ratings.iter().all(|r| r.is_finite()));
        assert!((fit.ratings.iter().sum::<f64>() / n as f64 - INITIAL_RATING).abs() < 1e-6);
    }

    #[test]
    fn an_undefeated_model_stays_finite() {
        let f = fit(&[vec![0.0, 5.0, 5.0], vec![0.0, 0.0, 2.0], vec![0.0, 1.0, 0.0]]).unwrap();
        assert!(f.regularized);
        assert!(f.ratings.iter().all(|r| r.is_finite()));
        assert!(f.ratings[0] > f.ratings[1] && f.ratings[1] > f.ratings[2]);
    }
}
