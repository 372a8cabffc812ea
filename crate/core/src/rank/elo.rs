//! Online Elo (Chatbot Arena's original `compute_online_elo`): battles are replayed in order and each
//! moves the two ratings by `K·(outcome − expected)`. The result depends on the order of the battles;
//! it is offered for comparison with older leaderboards, and marked order-dependent wherever shown.

use super::bradley_terry::INITIAL_RATING;
use crate::formats::Winner;

/// Arena's K factor.
pub const DEFAULT_K: f64 = 4.0;

/// Replay `battles` (pairs of model indices and the outcome, each with a weight scaling its K; 1 for
/// a whole battle) from equal ratings.
pub fn online_elo(n_models: usize, battles: impl IntoIterator<Item = ((usize, usize, Winner), f64)>, k: f64) -> Vec<f64> {
    let mut r = vec![INITIAL_RATING; n_models];
    for ((a, b, w), weight) in battles {
        let expected_a = 1.0 / (1.0 + 10f64.powf((r[b] - r[a]) / 400.0));
        let score_a = w.score_a();
        r[a] += weight * k * (score_a - expected_a);
        r[b] += weight * k * ((1.0 - score_a) - (1.0 - expected_a));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_win_moves_k_over_two() {
        let r = online_elo(2, [((0, 1, Winner::A), 1.0)], 4.0);
        assert_eq!(r, [1002.0, 998.0]);
        let tie = online_elo(2, [((0, 1, Winner::Tie), 1.0)], 4.0);
        assert_eq!(tie, [1000.0, 1000.0]);
    }
}
