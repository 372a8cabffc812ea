//! Bradley–Terry maximum likelihood on a matrix of pairwise win weights.
//!
//! `P(i beats j) = 1 / (1 + 10^((R_j − R_i)/400))`, ratings on the Elo scale `R = 1000 + 400·β/ln 10`
//! with mean 1000, as Chatbot Arena's `compute_mle_elo` (logistic regression without intercept, whose
//! solution from a zero start has coefficients summing to zero). A tie counts as half a win for each side.
//!
//! The MLE exists only when the "has taken points from" graph is strongly connected; otherwise a model
//! that won (or lost) every comparison would drift to ±∞. In that case — and only then — each model
//! also plays one virtual tie against a virtual opponent of average strength (a weak logistic prior
//! centred on the mean), which keeps every rating finite; affected models are reported.

use crate::error::{invalid, Result};

/// Elo points per natural-log unit of strength.
pub const ELO_PER_NAT: f64 = 400.0 / std::f64::consts::LN_10;
pub const INITIAL_RATING: f64 = 1000.0;

/// The result of a fit: ratings and which models needed the prior.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    pub ratings: Vec<f64>,
    /// True when the comparison graph was not strongly connected and the virtual-tie prior was used.
    pub regularized: bool,
}

/// Fit ratings from `wins[i][j]`, the points model i took from model j (wins + ½ ties).
pub fn fit(wins: &[Vec<f64>]) -> Result<Fit> {
    let n = wins.len();
    if n < 2 {
        return invalid!("ranking needs at least two models, found {n}");
    }
    if wins.iter().any(|r| r.len() != n || r.iter().any(|w| !w.is_finite() || *w < 0.0)) {
        return invalid!("win matrix must be square with finite non-negative entries");
    }
    let games: f64 = (0..n).flat_map(|i| (0..n).map(move |j| (i, j))).map(|(i, j)| wins[i][j]).sum();
    if games == 0.0 {
        return invalid!("no comparisons between the models");
    }
    let regularized = !strongly_connected(wins);
    let prior = if regularized { 1.0 } else { 0.0 };
    let beta = newton(wins, prior);
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
fn objective(wins: &[Vec<f64>], beta: &[f64], prior: f64) -> f64 {
    let n = beta.len();
    let mut f = 0.0;
    for i in 0..n {
        for j in 0..n {
            if wins[i][j] > 0.0 {
                f -= wins[i][j] * log_sigmoid(beta[i] - beta[j]);
            }
        }
        if prior > 0.0 {
            f -= prior * 0.5 * (log_sigmoid(beta[i]) + log_sigmoid(-beta[i]));
        }
    }
    if prior == 0.0 {
        let s: f64 = beta.iter().sum();
        f += 0.5 * s * s;
    }
    f
}

fn newton(wins: &[Vec<f64>], prior: f64) -> Vec<f64> {
    let n = wins.len();
    let mut beta = vec![0.0; n];
    let mut f = objective(wins, &beta, prior);
    for _ in 0..200 {
        let mut g = vec![0.0; n];
        let mut h = vec![vec![0.0; n]; n];
        for i in 0..n {
            for j in 0..n {
                let games = wins[i][j] + wins[j][i];
                if i == j || games == 0.0 {
                    continue;
                }
                let p = sigmoid(beta[i] - beta[j]);
                g[i] -= wins[i][j] - games * p;
                let w = games * p * (1.0 - p);
                h[i][i] += w;
                h[i][j] -= w;
            }
            if prior > 0.0 {
                let p = sigmoid(beta[i]);
                g[i] -= prior * (0.5 - p);
                h[i][i] += prior * p * (1.0 - p);
            }
        }
        if prior == 0.0 {
            let s: f64 = beta.iter().sum();
            for i in 0..n {
                g[i] += s;
                for j in 0..n {
                    h[i][j] += 1.0;
                }
            }
        }
        let Some(step) = solve_spd(h, &g) else { break };
        // Backtracking line search on the convex objective.
        let mut t = 1.0;
        let mut next;
        loop {
            next = beta.iter().zip(&step).map(|(b, d)| b - t * d).collect::<Vec<_>>();
            let fn_ = objective(wins, &next, prior);
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

/// Solve `A x = b` for symmetric positive definite `A` by Cholesky; `None` if `A` is not SPD.
fn solve_spd(mut a: Vec<Vec<f64>>, b: &[f64]) -> Option<Vec<f64>> {
    let n = b.len();
    for j in 0..n {
        let mut d = a[j][j];
        for k in 0..j {
            d -= a[j][k] * a[j][k];
        }
        if d <= 0.0 || !d.is_finite() {
            return None;
        }
        let d = d.sqrt();
        a[j][j] = d;
        for i in j + 1..n {
            let mut s = a[i][j];
            for k in 0..j {
                s -= a[i][k] * a[j][k];
            }
            a[i][j] = s / d;
        }
    }
    let mut y = vec![0.0; n];
    for i in 0..n {
        let mut s = b[i];
        for k in 0..i {
            s -= a[i][k] * y[k];
        }
        y[i] = s / a[i][i];
    }
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        let mut s = y[i];
        for k in i + 1..n {
            s -= a[k][i] * x[k];
        }
        x[i] = s / a[i][i];
    }
    Some(x)
}

/// Whether every model can be reached from every other along "took points from" edges.
pub fn strongly_connected(wins: &[Vec<f64>]) -> bool {
    let n = wins.len();
    let reach = |forward: bool| {
        let mut seen = vec![false; n];
        let mut stack = vec![0];
        seen[0] = true;
        while let Some(i) = stack.pop() {
            for j in 0..n {
                let w = if forward { wins[i][j] } else { wins[j][i] };
                if w > 0.0 && !seen[j] {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        seen.into_iter().all(|s| s)
    };
    reach(true) && reach(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_models_match_the_closed_form() {
        // 3 wins of A over B, 1 of B over A: p = 0.75, ΔR = 400·log10(3).
        let f = fit(&[vec![0.0, 3.0], vec![1.0, 0.0]]).unwrap();
        assert!(!f.regularized);
        assert!((f.ratings[0] - f.ratings[1] - 400.0 * 3f64.log10()).abs() < 1e-8);
        assert!((f.ratings[0] + f.ratings[1] - 2000.0).abs() < 1e-8);
    }

    #[test]
    fn an_undefeated_model_stays_finite() {
        let f = fit(&[vec![0.0, 5.0, 5.0], vec![0.0, 0.0, 2.0], vec![0.0, 1.0, 0.0]]).unwrap();
        assert!(f.regularized);
        assert!(f.ratings.iter().all(|r| r.is_finite()));
        assert!(f.ratings[0] > f.ratings[1] && f.ratings[1] > f.ratings[2]);
    }
}
