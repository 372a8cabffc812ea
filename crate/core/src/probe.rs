//! Bias probes: change one thing, regrade, and see how much the judge moves.
//!
//! A probe is named by [`Probe`] (one spelling shared by the CLI and JavaScript). Three probes change
//! the response text and are computed here, deterministically:
//!
//! - [`pad`] (verbosity): appends a final paragraph of content-free filler, [`FILLER`], cycling
//!   through the list until about `fraction` of the text's length has been added. The sentences only
//!   restate that an answer was given or hedge in general terms; they add no fact, step or claim a
//!   checklist item could reward, and contradict nothing one could penalise. A judge whose scores
//!   rise with them rewards length.
//! - [`reorder`]: reverses the paragraphs (blank-line separated); a single paragraph has its sentences
//!   reversed; a single sentence cannot be reordered (`None`). Content is unchanged, only its order.
//! - [`truncate`]: keeps the first `keep_fraction` of the characters, cut back to a word boundary.
//!
//! The other probes (position swap in a pairwise comparison, a dropped or added checklist item, the
//! grading prompt's wording or instruction level, another judge) are run by the engine and the app;
//! their outcomes are summarised here like the others: [`summarize`] turns per-response outcomes
//! (score before, score after) into the mean change with a bootstrap CI, the shares raised, lowered
//! and unchanged, and the largest changes. For [`Probe::Position`] an outcome holds probabilities
//! instead, and the summary adds the position-consistency rate and the shift toward the first position.

use serde::{Deserialize, Serialize};

use crate::error::{invalid, Result};
use crate::rank::{DEFAULT_BOOTSTRAP, DEFAULT_SEED};
use crate::score::SCALE;
use crate::stats::{self, Interval};

crate::named_enum!(
    /// What a bias probe changes.
    pub enum Probe, "the probe" {
        Pad = "pad",
        Reorder = "reorder",
        Truncate = "truncate",
        Position = "position",
        DropItem = "drop_item",
        AddItem = "add_item",
        PromptWording = "prompt_wording",
        InstructionLevel = "instruction_level",
        Judge = "judge",
    }
);

impl Probe {
    /// Every probe, in the order of [`Probe::NAMES`].
    pub const ALL: [Probe; 9] = [
        Probe::Pad,
        Probe::Reorder,
        Probe::Truncate,
        Probe::Position,
        Probe::DropItem,
        Probe::AddItem,
        Probe::PromptWording,
        Probe::InstructionLevel,
        Probe::Judge,
    ];

    /// One line saying what the probe changes.
    pub fn description(self) -> &'static str {
        match self {
            Probe::Pad => "Verbosity: lengthen the response with content-free filler; a fair judge's score does not move.",
            Probe::Reorder => "Order: reverse the response's paragraphs (or sentences); the content is unchanged.",
            Probe::Truncate => "Truncation: keep only the start of the response; a fair judge's score falls.",
            Probe::Position => "Position: swap which response comes first in a pairwise comparison; a fair judge's verdict does not flip.",
            Probe::DropItem => "Checklist: remove one checklist item and regrade.",
            Probe::AddItem => "Checklist: add one checklist item and regrade.",
            Probe::PromptWording => "Prompt: reword the grading prompt without changing what it asks.",
            Probe::InstructionLevel => "Prompt: give the judge more or less detailed grading instructions.",
            Probe::Judge => "Judge: grade the same responses with another judge model.",
        }
    }

    /// Whether [`apply`] computes this probe's text.
    pub fn transforms_text(self) -> bool {
        matches!(self, Probe::Pad | Probe::Reorder | Probe::Truncate)
    }
}

/// The filler [`pad`] appends, in order, cycling. Restating and generic hedging only: no fact, step,
/// example or claim about the question, so no checklist item can be met or failed by it.
pub const FILLER: [&str; 6] = [
    "In summary, the points above cover the question.",
    "To restate, the answer is as given above.",
    "Of course, the details may vary depending on the specific situation.",
    "It is worth keeping each of the points above in mind.",
    "As noted, the explanation above addresses the main request.",
    "I hope this overview is helpful.",
];

/// The largest padding [`pad`] accepts (ten times the text's length).
pub const MAX_PAD_FRACTION: f64 = 10.0;

/// `text` with a final paragraph of [`FILLER`] sentences at least `fraction` of its length (in
/// characters) long: whole sentences are added until the target is reached. `fraction` ≤ 0 or an
/// empty text: unchanged. Trailing whitespace of `text` is replaced by the paragraph break.
pub fn pad(text: &str, fraction: f64) -> Result<String> {
    if !(fraction.is_finite() && (0.0..=MAX_PAD_FRACTION).contains(&fraction)) {
        return invalid!("the padding fraction must be a number from 0 to {MAX_PAD_FRACTION}, not {fraction}");
    }
    let target = (fraction * text.chars().count() as f64).round() as usize;
    if target == 0 {
        return Ok(text.to_string());
    }
    let mut filler = String::new();
    for s in FILLER.iter().cycle() {
        if filler.chars().count() >= target {
            break;
        }
        if !filler.is_empty() {
            filler.push(' ');
        }
        filler.push_str(s);
    }
    Ok(format!("{}\n\n{filler}", text.trim_end()))
}

/// The text with its order reversed: paragraphs (separated by blank lines) when there are two or more,
/// joined by one blank line; otherwise the sentences of the one paragraph, each separator (a space or a
/// line break) staying where it was. `None` when there is nothing to reorder: one sentence, or none.
///
/// A sentence ends after `.`, `!`, `?`, `…` (and closing quotes or brackets) followed by whitespace,
/// after `。！？`, or at a line break; abbreviations such as "e.g. " therefore also end one.
/// A blank line inside a code block also separates paragraphs.
pub fn reorder(text: &str) -> Option<String> {
    let paragraphs = paragraphs(text);
    if paragraphs.len() >= 2 {
        return Some(paragraphs.into_iter().rev().collect::<Vec<_>>().join("\n\n"));
    }
    let (units, seps) = sentences(paragraphs.first()?);
    if units.len() < 2 {
        return None;
    }
    let mut out = String::new();
    for (k, u) in units.iter().rev().enumerate() {
        if k > 0 {
            out.push_str(seps[k - 1]);
        }
        out.push_str(u);
    }
    Some(out)
}

/// Paragraphs: runs of non-blank lines, trimmed.
fn paragraphs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.trim().is_empty() {
            if !current.is_empty() {
                out.push(current.join("\n"));
                current.clear();
            }
        } else {
            current.push(line);
        }
    }
    if !current.is_empty() {
        out.push(current.join("\n"));
    }
    out.into_iter().map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect()
}

/// The sentences of a paragraph and the separators between them: `"\n"` where the whitespace between
/// two sentences has a line break, `" "` where it has none, `""` where there is none (`。`).
fn sentences(p: &str) -> (Vec<&str>, Vec<&'static str>) {
    const END: [char; 4] = ['.', '!', '?', '…'];
    const CJK_END: [char; 3] = ['。', '！', '？'];
    const CLOSE: [char; 6] = ['"', '\'', ')', ']', '”', '’'];
    let chars: Vec<(usize, char)> = p.char_indices().collect();
    let byte = |j: usize| chars.get(j).map_or(p.len(), |c| c.0);
    let (mut units, mut seps) = (Vec::new(), Vec::new());
    let (mut start, mut i, mut sep_before) = (0, 0, "");
    while i < chars.len() {
        let c = chars[i].1;
        // Where the sentence ends (exclusive) and where the whitespace after it starts, if it ends here.
        let end = if c == '\n' {
            Some(i)
        } else if END.contains(&c) || CJK_END.contains(&c) {
            let mut j = i + 1;
            while j < chars.len() && (END.contains(&chars[j].1) || CLOSE.contains(&chars[j].1)) {
                j += 1;
            }
            (j == chars.len() || CJK_END.contains(&c) || chars[j].1.is_whitespace()).then_some(j)
        } else {
            None
        };
        let Some(e) = end else {
            i += 1;
            continue;
        };
        let mut j = e;
        let mut sep = "";
        while j < chars.len() && chars[j].1.is_whitespace() {
            sep = if chars[j].1 == '\n' || sep == "\n" { "\n" } else { " " };
            j += 1;
        }
        let unit = p[start..byte(e)].trim();
        if unit.is_empty() {
            sep_before = if sep == "\n" || sep_before == "\n" { "\n" } else { sep.max(sep_before) };
        } else {
            if !units.is_empty() {
                seps.push(sep_before);
            }
            units.push(unit);
            sep_before = sep;
        }
        start = byte(j);
        i = j;
    }
    let rest = p[start..].trim();
    if !rest.is_empty() {
        if !units.is_empty() {
            seps.push(sep_before);
        }
        units.push(rest);
    }
    (units, seps)
}

/// The first `keep_fraction` of the text's characters, cut back to the last whitespace before the cut
/// when the cut falls inside a word (or kept at the character when the kept part has no whitespace, as
/// in scripts without spaces), trailing whitespace removed. `keep_fraction` ≥ 1: unchanged.
pub fn truncate(text: &str, keep_fraction: f64) -> Result<String> {
    if !(keep_fraction.is_finite() && keep_fraction >= 0.0) {
        return invalid!("the fraction to keep must be a number from 0 to 1, not {keep_fraction}");
    }
    let n = text.chars().count();
    let keep = (keep_fraction.min(1.0) * n as f64).floor() as usize;
    if keep >= n {
        return Ok(text.to_string());
    }
    let cut = text.char_indices().nth(keep).map_or(text.len(), |(b, _)| b);
    let (head, tail) = text.split_at(cut);
    let inside_word =
        head.chars().next_back().is_some_and(|c| !c.is_whitespace()) && tail.chars().next().is_some_and(|c| !c.is_whitespace());
    let head = match head.rfind(char::is_whitespace) {
        Some(ws) if inside_word => &head[..ws],
        _ => head,
    };
    Ok(head.trim_end().to_string())
}

/// A transformed text and whether it differs from the original.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Transformed {
    pub text: String,
    pub changed: bool,
}

/// Apply a text probe: `amount` is the padding fraction (pad), the fraction kept (truncate), unused
/// for reorder. Other probes do not transform text and are an error.
pub fn apply(probe: Probe, text: &str, amount: f64) -> Result<Transformed> {
    let out = match probe {
        Probe::Pad => pad(text, amount)?,
        Probe::Truncate => truncate(text, amount)?,
        Probe::Reorder => reorder(text).unwrap_or_else(|| text.to_string()),
        other => return invalid!("the {other} probe does not transform the response text (pad, reorder and truncate do)"),
    };
    Ok(Transformed { changed: out != text, text: out })
}

/// One response (or, for [`Probe::Position`], one pair) graded before and after a probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeOutcome {
    pub session_id: String,
    /// The model whose response it is (for position: model A, whose side the probabilities take).
    pub model: String,
    /// The score on 1–10 before the probe; for position, p(A better) with A shown first.
    pub before: f64,
    /// The score on 1–10 after it; for position, p(A better) with B shown first.
    pub after: f64,
}

/// A change, for the list of the largest.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub session_id: String,
    pub model: String,
    pub before: f64,
    pub after: f64,
    pub delta: f64,
}

/// Position probes: how often the verdict survives swapping the order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PositionSummary {
    /// Share of pairs whose preferred side (A if p(A better) > ½, B if < ½, a tie at ½) is the same in
    /// both orders.
    pub consistency: f64,
    /// Pairs whose verdict changed with the order.
    pub flips: usize,
    /// Mean of `(before − after) / 2`: how far the first-shown response's probability of being
    /// preferred exceeds ½ on average (positive: the judge favours the first position).
    pub first_position_shift: f64,
}

/// What a probe did over many responses.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeSummary {
    pub probe: Probe,
    pub n: usize,
    /// Mean of `after − before`.
    pub mean_delta: f64,
    /// Percentile bootstrap 95% interval of the mean change (outcomes resampled; `null` for n < 2).
    pub mean_delta_ci: Option<Interval>,
    pub mean_abs_delta: f64,
    /// A change smaller than this in absolute value counts as unchanged: 0.05 on the 1–10 scale, and
    /// the same amount on the probability scale (0.05 / 9) for position.
    pub threshold: f64,
    /// Shares of outcomes with `delta ≥ threshold`, `≤ −threshold`, and in between.
    pub raised: f64,
    pub lowered: f64,
    pub unchanged: f64,
    /// The (up to) five largest changes in absolute value, largest first.
    pub largest: Vec<Change>,
    /// Position probes only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<PositionSummary>,
}

/// Changes of at least this (on 1–10) count as a change.
pub const UNCHANGED_BELOW: f64 = 0.05;
/// How many of the largest changes a summary lists.
pub const LARGEST: usize = 5;

/// Summarise a probe's outcomes (see [`ProbeSummary`]). The bootstrap uses the ranking defaults:
/// 1000 replicates, seed 42. Values outside their scale (1–10, or 0–1 for position) are an error
/// naming the outcome.
pub fn summarize(probe: Probe, outcomes: &[ProbeOutcome]) -> Result<ProbeSummary> {
    if outcomes.is_empty() {
        return invalid!("no {probe} probe outcomes to summarise");
    }
    let (lo, hi, threshold) = if probe == Probe::Position { (0.0, 1.0, UNCHANGED_BELOW / SCALE) } else { (1.0, 10.0, UNCHANGED_BELOW) };
    for (i, o) in outcomes.iter().enumerate() {
        for (field, v) in [("before", o.before), ("after", o.after)] {
            if !(lo..=hi).contains(&v) {
                let scale = if probe == Probe::Position { "a probability from 0 to 1" } else { "a score from 1 to 10" };
                return invalid!(
                    "outcome {i} (session `{}`, model `{}`): field `{field}`: expected {scale}, found {v}",
                    o.session_id,
                    o.model
                );
            }
        }
    }
    let deltas: Vec<f64> = outcomes.iter().map(|o| o.after - o.before).collect();
    let n = deltas.len();
    let share = |f: &dyn Fn(f64) -> bool| deltas.iter().filter(|&&d| f(d)).count() as f64 / n as f64;
    let mean_delta_ci = (n >= 2)
        .then(|| {
            stats::bootstrap_ci(n, DEFAULT_BOOTSTRAP, 0.95, DEFAULT_SEED, |idx| {
                idx.iter().map(|&i| deltas[i]).sum::<f64>() / idx.len() as f64
            })
        })
        .flatten();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        deltas[b]
            .abs()
            .total_cmp(&deltas[a].abs())
            .then_with(|| (&outcomes[a].session_id, &outcomes[a].model).cmp(&(&outcomes[b].session_id, &outcomes[b].model)))
    });
    let largest = order
        .into_iter()
        .take(LARGEST)
        .map(|i| {
            let o = &outcomes[i];
            Change { session_id: o.session_id.clone(), model: o.model.clone(), before: o.before, after: o.after, delta: deltas[i] }
        })
        .collect();
    let position = (probe == Probe::Position).then(|| {
        let side = |p: f64| p.partial_cmp(&0.5);
        let flips = outcomes.iter().filter(|o| side(o.before) != side(o.after)).count();
        PositionSummary {
            consistency: 1.0 - flips as f64 / n as f64,
            flips,
            first_position_shift: outcomes.iter().map(|o| (o.before - o.after) / 2.0).sum::<f64>() / n as f64,
        }
    });
    Ok(ProbeSummary {
        probe,
        n,
        mean_delta: stats::mean(&deltas),
        mean_delta_ci,
        mean_abs_delta: deltas.iter().map(|d| d.abs()).sum::<f64>() / n as f64,
        threshold,
        raised: share(&|d| d >= threshold),
        lowered: share(&|d| d <= -threshold),
        unchanged: share(&|d| d.abs() < threshold),
        largest,
        position,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_descriptions() {
        assert_eq!(Probe::ALL.map(Probe::as_str), Probe::NAMES);
        for p in Probe::ALL {
            assert_eq!(p.as_str().parse::<Probe>().unwrap(), p);
            assert!(!p.description().is_empty());
        }
        assert!("verbosity".parse::<Probe>().is_err());
        assert_eq!(Probe::ALL.iter().filter(|p| p.transforms_text()).count(), 3);
    }

    #[test]
    fn pad_appends_whole_filler_sentences_up_to_the_target() {
        // 12 characters · 0.3 → 4 characters wanted: one sentence.
        assert_eq!(pad("Hello world.\n", 0.3).unwrap(), format!("Hello world.\n\n{}", FILLER[0]));
        let text = "x".repeat(200);
        for fraction in [0.1, 0.5, 1.0, 2.5] {
            let out = pad(&text, fraction).unwrap();
            let filler = out.strip_prefix(&format!("{text}\n\n")).unwrap();
            let target = (fraction * 200.0_f64).round() as usize;
            assert!(filler.chars().count() >= target, "{fraction}");
            // One sentence fewer would be short of the target.
            let last = filler.rfind(". ").map_or(0, |i| i + 1);
            assert!(filler[..last].chars().count() < target, "{fraction}: {filler}");
            // The sentences cycle through the list in order.
            assert!(filler.starts_with(FILLER[0]));
        }
        assert!(pad(&text, 2.5).unwrap().contains(&format!("{} {}", FILLER[5], FILLER[0])));
        assert_eq!(pad("abc", 0.0).unwrap(), "abc");
        assert_eq!(pad("", 1.0).unwrap(), "");
        assert!(pad("abc", -0.1).is_err());
        assert!(pad("abc", f64::NAN).is_err());
        assert!(pad("abc", 11.0).is_err());
    }

    #[test]
    fn reorder_paragraphs_then_sentences() {
        assert_eq!(reorder("A.\n\nB one.\nB two.\n \n\nC.\n").unwrap(), "C.\n\nB one.\nB two.\n\nA.");
        assert_eq!(reorder("First one. Second one!  Third?").unwrap(), "Third? Second one! First one.");
        assert_eq!(reorder("It costs 3.5 dollars. Yes.").unwrap(), "Yes. It costs 3.5 dollars.");
        assert_eq!(reorder(r#"He said "Stop." Then he left"#).unwrap(), r#"Then he left He said "Stop.""#);
        // Separators stay in place: a line break, then a space.
        assert_eq!(reorder("Line a\nLine b. Next").unwrap(), "Next\nLine b. Line a");
        assert_eq!(reorder("你好。再见。").unwrap(), "再见。你好。");
        assert_eq!(reorder("One sentence only."), None);
        assert_eq!(reorder("  no end mark  "), None);
        assert_eq!(reorder(" \n\n "), None);
        assert_eq!(apply(Probe::Reorder, "Just one.", 0.0).unwrap(), Transformed { text: "Just one.".into(), changed: false });
        assert!(apply(Probe::Reorder, "A. B.", 0.0).unwrap().changed);
        assert!(apply(Probe::Judge, "A. B.", 0.0).is_err());
    }

    #[test]
    fn truncate_at_a_word_boundary() {
        // 21 characters, keep 10 ("hello wond") → back to the space.
        assert_eq!(truncate("hello wonderful world", 0.5).unwrap(), "hello");
        // The cut after "ab " is at a boundary already.
        assert_eq!(truncate("ab cd", 0.6).unwrap(), "ab");
        assert_eq!(truncate("ab cd", 0.4).unwrap(), "ab");
        // Characters, not bytes: 15 characters, keep 7 ("héllo w").
        assert_eq!(truncate("héllo wörld ünd", 0.5).unwrap(), "héllo");
        // No space to cut back to: the character cut stays.
        assert_eq!(truncate("日本語のテキスト", 0.5).unwrap(), "日本語の");
        assert_eq!(truncate("abc", 1.0).unwrap(), "abc");
        assert_eq!(truncate("abc", 3.0).unwrap(), "abc");
        assert_eq!(truncate("abc", 0.0).unwrap(), "");
        assert!(truncate("abc", -1.0).is_err());
        assert!(!apply(Probe::Truncate, "abc", 1.0).unwrap().changed);
    }

    fn outcome(s: &str, m: &str, before: f64, after: f64) -> ProbeOutcome {
        ProbeOutcome { session_id: s.into(), model: m.into(), before, after }
    }

    #[test]
    fn summary_of_score_changes() {
        let o = [outcome("q1", "a", 5.0, 6.0), outcome("q2", "a", 7.0, 7.02), outcome("q1", "b", 8.0, 5.0), outcome("q2", "b", 4.0, 4.5)];
        let s = summarize(Probe::Pad, &o).unwrap();
        // Δ = 1, 0.02, −3, 0.5.
        assert_eq!(s.n, 4);
        assert!((s.mean_delta - (-0.37)).abs() < 1e-12, "{}", s.mean_delta);
        assert!((s.mean_abs_delta - 1.13).abs() < 1e-12);
        assert_eq!((s.raised, s.lowered, s.unchanged), (0.5, 0.25, 0.25));
        let order: Vec<(&str, &str)> = s.largest.iter().map(|c| (c.session_id.as_str(), c.model.as_str())).collect();
        assert_eq!(order, [("q1", "b"), ("q1", "a"), ("q2", "b"), ("q2", "a")]);
        assert!((s.largest[0].delta + 3.0).abs() < 1e-12);
        let ci = s.mean_delta_ci.unwrap();
        assert!(-3.0 <= ci.lower && ci.lower < s.mean_delta && s.mean_delta < ci.upper && ci.upper <= 1.0, "{ci:?}");
        assert!(s.position.is_none());
        // Equal changes: the interval is that change.
        let same: Vec<ProbeOutcome> = (0..6).map(|i| outcome(&format!("q{i}"), "m", 5.0, 5.5)).collect();
        let s = summarize(Probe::Truncate, &same).unwrap();
        assert_eq!(s.mean_delta_ci.map(|c| (c.lower, c.upper)), Some((0.5, 0.5)));
        // At most five largest; ties in |Δ| in session, then model order.
        let many: Vec<ProbeOutcome> = (0..7).rev().map(|i| outcome(&format!("q{i}"), "m", 5.0, 6.0)).collect();
        let s = summarize(Probe::Judge, &many).unwrap();
        assert_eq!(s.largest.iter().map(|c| c.session_id.as_str()).collect::<Vec<_>>(), ["q0", "q1", "q2", "q3", "q4"]);
        assert!(summarize(Probe::Pad, &[outcome("q", "m", 5.0, 6.0)]).unwrap().mean_delta_ci.is_none());
    }

    #[test]
    fn summary_of_position_swaps() {
        // p(A better) with A first, then with B first. A flip; consistent; a tie both ways; consistent.
        let o = [outcome("q1", "a", 0.8, 0.3), outcome("q2", "a", 0.7, 0.6), outcome("q3", "a", 0.5, 0.5), outcome("q4", "a", 0.2, 0.1)];
        let s = summarize(Probe::Position, &o).unwrap();
        let p = s.position.unwrap();
        assert_eq!((p.consistency, p.flips), (0.75, 1));
        // ((0.8−0.3) + (0.7−0.6) + 0 + (0.2−0.1)) / 2 / 4 = 0.0875
        assert!((p.first_position_shift - 0.0875).abs() < 1e-12);
        assert!((s.threshold - 0.05 / 9.0).abs() < 1e-15);
        assert_eq!((s.raised, s.lowered, s.unchanged), (0.0, 0.75, 0.25));
    }

    #[test]
    fn summary_refuses_values_off_the_scale() {
        let e = summarize(Probe::Position, &[outcome("q", "m", 0.5, 1.2)]).unwrap_err().to_string();
        assert!(e.contains("outcome 0 (session `q`, model `m`): field `after`: expected a probability from 0 to 1, found 1.2"), "{e}");
        let e = summarize(Probe::Pad, &[outcome("q", "m", 0.5, 5.0)]).unwrap_err().to_string();
        assert!(e.contains("field `before`: expected a score from 1 to 10"), "{e}");
        assert!(summarize(Probe::Pad, &[outcome("q", "m", f64::NAN, 5.0)]).is_err());
        assert!(summarize(Probe::Pad, &[]).is_err());
    }
}
