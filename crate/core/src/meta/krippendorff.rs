//! Krippendorff's α for a units × raters table with missing values, at the nominal, ordinal,
//! interval and ratio levels (coincidence-matrix form; seed 003 appendix A defines the interval level,
//! seed 002 uses α without naming a level). Matches the `krippendorff` Python package.

use std::collections::BTreeMap;
use std::str::FromStr;

use crate::error::{invalid, Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Nominal,
    Ordinal,
    Interval,
    Ratio,
}

impl FromStr for Level {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "nominal" => Ok(Self::Nominal),
            "ordinal" => Ok(Self::Ordinal),
            "interval" => Ok(Self::Interval),
            "ratio" => Ok(Self::Ratio),
            _ => invalid!("Krippendorff level must be nominal, ordinal, interval or ratio; not `{s}`"),
        }
    }
}

/// α for `units[u][r]` = rater r's value for unit u (`None` = missing). Units with fewer than two
/// values are not pairable and are left out. Fails when no unit is pairable or every value is the same
/// (expected disagreement 0: α is undefined).
pub fn alpha(units: &[Vec<Option<f64>>], level: Level) -> Result<f64> {
    // The value domain, ordered.
    let mut values: Vec<f64> = units.iter().flatten().flatten().copied().collect();
    if values.iter().any(|v| !v.is_finite()) {
        return invalid!("Krippendorff's alpha needs finite values");
    }
    values.sort_by(f64::total_cmp);
    values.dedup();
    let index: BTreeMap<u64, usize> = values.iter().enumerate().map(|(i, v)| (v.to_bits(), i)).collect();
    let k = values.len();
    // Coincidence matrix o[c][k].
    let mut o = vec![vec![0.0; k]; k];
    let mut pairable = 0;
    for unit in units {
        let vals: Vec<usize> = unit.iter().flatten().map(|v| index[&v.to_bits()]).collect();
        let m = vals.len();
        if m < 2 {
            continue;
        }
        pairable += 1;
        for i in 0..m {
            for j in 0..m {
                if i != j {
                    o[vals[i]][vals[j]] += 1.0 / (m as f64 - 1.0);
                }
            }
        }
    }
    if pairable == 0 {
        return invalid!("Krippendorff's alpha needs at least one unit rated by two or more raters");
    }
    let nc: Vec<f64> = o.iter().map(|row| row.iter().sum()).collect();
    let n: f64 = nc.iter().sum();
    let delta2 = |c: usize, d: usize| -> f64 {
        match level {
            Level::Nominal => f64::from(u8::from(c != d)),
            Level::Interval => (values[c] - values[d]).powi(2),
            Level::Ratio => {
                let s = values[c] + values[d];
                if s == 0.0 {
                    0.0
                } else {
                    ((values[c] - values[d]) / s).powi(2)
                }
            }
            Level::Ordinal => {
                let (lo, hi) = (c.min(d), c.max(d));
                let between: f64 = nc[lo..=hi].iter().sum();
                (between - (nc[lo] + nc[hi]) / 2.0).powi(2)
            }
        }
    };
    let (mut d_o, mut d_e) = (0.0, 0.0);
    for c in 0..k {
        for d in 0..k {
            let w = delta2(c, d);
            d_o += o[c][d] * w;
            d_e += nc[c] * nc[d] * w;
        }
    }
    d_o /= n;
    d_e /= n * (n - 1.0);
    if d_e == 0.0 {
        return invalid!("Krippendorff's alpha is undefined when every value is the same");
    }
    Ok(1.0 - d_o / d_e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn krippendorff_2011_reliability_example() {
        // 4 coders × 12 units with missing values; the published α values.
        let coders: [[Option<f64>; 12]; 4] = {
            let n = None;
            let s = |v: f64| Some(v);
            [
                [s(1.), s(2.), s(3.), s(3.), s(2.), s(1.), s(4.), s(1.), s(2.), n, n, n],
                [s(1.), s(2.), s(3.), s(3.), s(2.), s(2.), s(4.), s(1.), s(2.), s(5.), n, s(3.)],
                [n, s(3.), s(3.), s(3.), s(2.), s(3.), s(4.), s(2.), s(2.), s(5.), s(1.), n],
                [s(1.), s(2.), s(3.), s(3.), s(2.), s(4.), s(4.), s(1.), s(2.), s(5.), s(1.), n],
            ]
        };
        let units: Vec<Vec<Option<f64>>> = (0..12).map(|u| coders.iter().map(|c| c[u]).collect()).collect();
        for (level, want) in [(Level::Nominal, 0.7434), (Level::Ordinal, 0.8154), (Level::Interval, 0.8491), (Level::Ratio, 0.7974)] {
            let a = alpha(&units, level).unwrap();
            assert!((a - want).abs() < 5e-5, "{level:?}: {a}");
        }
    }

    #[test]
    fn undefined_cases_are_errors() {
        assert!(alpha(&[vec![Some(1.0), Some(1.0)]], Level::Interval).is_err());
        assert!(alpha(&[vec![Some(1.0), None]], Level::Interval).is_err());
    }
}
