//! Where a judge's written reply becomes a score: chain-of-thought judging, the evaluation type the
//! papers compare checklist grading against. The judge writes (the engine's generation), the reply is
//! parsed here, and N sampled replies are aggregated into one score per response.
//!
//! The protocols, each with its paper's prompt and defaults ([`ReasonedSettings::paper`]):
//! - `rocketeval-cot` — seed 000's CoT baseline (appendix A.1, "CoT enabled", checklist disabled): an
//!   analysis, strengths and weaknesses, then `"score"` 1–10 in JSON; one greedy reply.
//! - `feedback` / `feedback-direct` — seed 003's comparison: feedback against a score rubric, then
//!   `[RESULT]` 1–5 (w/ CoT), or the same prompt ending on `[RESULT]` so that only the score is
//!   written (Direct); five replies at temperature 1.0, averaged (its best aggregation).
//! - `reason-rating` / `checklist-guided` — seed 002's direct-scoring prompts (Figures 22 and 23): a
//!   reason then a rating 1–5, or yes / no / n/a for each checklist item then the rating; ten replies,
//!   majority vote.
//! - `pair-reason` / `pair-checklist-guided` — seed 002's pairwise prompts (Figures 20 and 21): two
//!   responses, a reason (or each item answered for each response), then which is better; ten replies,
//!   five per presentation order, majority vote with ties ([`pair`]).
//!
//! A reply the protocol cannot read stays in the record with its text and no score; it is counted
//! (`unparsed`) and the aggregate is taken over the others. A response none of whose replies could be
//! read has no score and ranks as unanswered.

use serde::{Deserialize, Serialize};

use crate::error::{invalid, FormatError};
use crate::formats::{Lined, Message, Score};
use crate::prompt::{format_history, push_direct_conversation, query_part, OnePassPrompt, BANDS, DIRECT_HEAD, MT_BENCH_CRITERIA};

pub mod pair;
pub use pair::{read_reasoned_pairs, reasoned_pair_prompt, PairItems, PairSample, ReasonedPair};

crate::named_enum!(
    /// How the judge is asked to reason before its score (see the module documentation).
    #[derive(Default)]
    pub enum ReasonedProtocol, "the reasoned protocol" {
        /// Seed 000's CoT baseline: analysis, strengths, weaknesses, score 1–10 (JSON).
        #[default]
        RocketEvalCot = "rocketeval-cot",
        /// Seed 003, w/ CoT: feedback against the rubric, then `[RESULT]` 1–5.
        Feedback = "feedback",
        /// Seed 003, Direct: the same prompt ending on `[RESULT]`; only the score is written.
        FeedbackDirect = "feedback-direct",
        /// Seed 002, Figure 22: a reason, then a rating 1–5 (JSON).
        ReasonRating = "reason-rating",
        /// Seed 002, Figure 23: yes / no / n/a for each checklist item, then a rating 1–5 (JSON).
        ChecklistGuided = "checklist-guided",
        /// Seed 002, Figure 20: two responses, a reason, then which is better (JSON `"judge"`: 1 or 2).
        PairReason = "pair-reason",
        /// Seed 002, Figure 21: yes / no / n/a per checklist item for each response, then which is better.
        PairChecklistGuided = "pair-checklist-guided",
    }
);

crate::named_enum!(
    /// How N replies' scores become one (seed 003's three).
    pub enum Aggregate, "the aggregation of sampled scores" {
        /// The most frequent score (seed 002's majority vote); a tie between the most frequent gives
        /// their mean.
        Majority = "majority",
        /// The median (the mean of the two middle scores for an even count).
        Median = "median",
        /// The mean (seed 003's best).
        Mean = "mean",
    }
);

crate::named_enum!(
    /// A checklist item's answer in seed 002's guided protocol.
    pub enum ItemAnswer, "a checklist item's answer" {
        Yes = "yes",
        No = "no",
        /// The item does not apply to the response.
        NotApplicable = "n/a",
    }
);

impl ReasonedProtocol {
    /// The prompt's version, recorded with each score.
    pub fn version(self) -> &'static str {
        match self {
            ReasonedProtocol::RocketEvalCot => "rocketeval-cot-v1",
            ReasonedProtocol::Feedback => "feedback-cot-v1",
            ReasonedProtocol::FeedbackDirect => "feedback-direct-v1",
            ReasonedProtocol::ReasonRating => "reason-rating-v1",
            ReasonedProtocol::ChecklistGuided => "checklist-guided-v1",
            ReasonedProtocol::PairReason => "pair-reason-v1",
            ReasonedProtocol::PairChecklistGuided => "pair-checklist-guided-v1",
        }
    }

    /// The scores a reply may give (a pairwise protocol's: the better response, 1 or 2, as shown).
    pub fn range(self) -> std::ops::RangeInclusive<i64> {
        match self {
            ReasonedProtocol::RocketEvalCot => 1..=10,
            ReasonedProtocol::PairReason | ReasonedProtocol::PairChecklistGuided => 1..=2,
            _ => 1..=5,
        }
    }

    /// Whether the prompt lists the query's checklist (the query must have one).
    pub fn needs_checklist(self) -> bool {
        matches!(self, ReasonedProtocol::ChecklistGuided | ReasonedProtocol::PairChecklistGuided)
    }

    /// Whether the judge compares two responses to a query (a [`pair::ReasonedPair`] per pair)
    /// rather than scoring one (a [`ReasonedScore`] per response).
    pub fn is_pairwise(self) -> bool {
        matches!(self, ReasonedProtocol::PairReason | ReasonedProtocol::PairChecklistGuided)
    }

    /// Whether the prompt carries the query's reference answer where it has one (as each paper does:
    /// RocketEval's MT-Bench prompt and seed 003's default do, seed 002's prompts do not).
    pub fn uses_reference(self) -> bool {
        matches!(self, ReasonedProtocol::RocketEvalCot | ReasonedProtocol::Feedback | ReasonedProtocol::FeedbackDirect)
    }

    /// What one line of the page's menu says about it.
    pub fn description(self) -> &'static str {
        match self {
            ReasonedProtocol::RocketEvalCot => "RocketEval's CoT baseline: analysis, strengths, weaknesses, score 1–10 (seed 000)",
            ReasonedProtocol::Feedback => "feedback against a rubric, then [RESULT] 1–5 (seed 003, with CoT)",
            ReasonedProtocol::FeedbackDirect => "the same prompt, only [RESULT] 1–5 written (seed 003, Direct)",
            ReasonedProtocol::ReasonRating => "a reason, then a rating 1–5 (seed 002, no checklist)",
            ReasonedProtocol::ChecklistGuided => "yes / no / n/a per checklist item, then a rating 1–5 (seed 002)",
            ReasonedProtocol::PairReason => "two responses: a reason, then which is better (seed 002, pairwise, no checklist)",
            ReasonedProtocol::PairChecklistGuided => {
                "two responses: yes / no / n/a per checklist item for each, then which is better (seed 002)"
            }
        }
    }
}

/// The most replies one response may get.
pub const MAX_SAMPLES: usize = 64;

/// How reasoned scores are made; recorded whole in every line (what a resumed run compares).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReasonedSettings {
    pub protocol: ReasonedProtocol,
    /// Replies per response.
    pub samples: usize,
    /// 0: greedy (one reply: every greedy reply is the same).
    pub temperature: f64,
    pub aggregate: Aggregate,
    /// The most tokens a reply may have.
    pub reply_tokens: usize,
    /// Reply i is sampled with seed + i.
    pub seed: u64,
}

impl Default for ReasonedSettings {
    /// RocketEval's CoT baseline as its paper runs it.
    fn default() -> Self {
        ReasonedSettings::paper(ReasonedProtocol::default())
    }
}

impl ReasonedSettings {
    /// The protocol as its paper runs it: seed 000 one greedy reply; seed 003 five at temperature 1.0,
    /// averaged; seed 002 ten, majority vote (its temperature is not stated: 1.0, as seed 003's), a
    /// pair's five in each presentation order.
    pub fn paper(protocol: ReasonedProtocol) -> Self {
        let (samples, temperature, aggregate) = match protocol {
            ReasonedProtocol::RocketEvalCot => (1, 0.0, Aggregate::Mean),
            ReasonedProtocol::Feedback | ReasonedProtocol::FeedbackDirect => (5, 1.0, Aggregate::Mean),
            ReasonedProtocol::ReasonRating
            | ReasonedProtocol::ChecklistGuided
            | ReasonedProtocol::PairReason
            | ReasonedProtocol::PairChecklistGuided => (10, 1.0, Aggregate::Majority),
        };
        let reply_tokens = if protocol == ReasonedProtocol::FeedbackDirect { 8 } else { 512 };
        ReasonedSettings { protocol, samples, temperature, aggregate, reply_tokens, seed: 0 }
    }

    /// Replies per prompt: all of them, or for a pair half in each presentation order.
    pub fn per_prompt(&self) -> usize {
        if self.protocol.is_pairwise() {
            self.samples / 2
        } else {
            self.samples
        }
    }

    /// The settings, checked: at least one reply and at most [`MAX_SAMPLES`] (a pair's split evenly
    /// between the two orders, counted by majority); several greedy replies to one prompt would all be
    /// the same; a reply needs room for its score.
    pub fn checked(self) -> crate::Result<Self> {
        if !(1..=MAX_SAMPLES).contains(&self.samples) {
            return invalid!("samples must be between 1 and {MAX_SAMPLES}, not {}", self.samples);
        }
        if self.protocol.is_pairwise() && self.samples % 2 == 1 {
            return invalid!(
                "a pair's replies are split evenly between the two presentation orders: ask for an even number, not {}",
                self.samples
            );
        }
        if self.protocol.is_pairwise() && self.aggregate != Aggregate::Majority {
            return invalid!("a pair's replies are votes for one response: they are counted by majority, not by {}", self.aggregate);
        }
        if !(self.temperature.is_finite() && self.temperature >= 0.0) {
            return invalid!("the temperature must be 0 (greedy) or positive, not {}", self.temperature);
        }
        if self.temperature == 0.0 && self.per_prompt() > 1 {
            return invalid!(
                "{} greedy replies would all be the same: sample at a temperature above 0, or ask for one{}",
                self.per_prompt(),
                if self.protocol.is_pairwise() { " per order (2 in all)" } else { "" }
            );
        }
        if !(1..=8192).contains(&self.reply_tokens) {
            return invalid!("a reply may have 1 to 8192 tokens, not {}", self.reply_tokens);
        }
        Ok(self)
    }
}

/// One reply of the judge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReasonedSample {
    /// The score read from the reply; absent where it could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// The reply as written.
    pub text: String,
    /// `checklist-guided`: each item's answer, in checklist order (null where the reply gave none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<Vec<Option<ItemAnswer>>>,
    /// Tokens written, and why the reply ended (the engine's stop reason).
    pub tokens: usize,
    pub stop: String,
}

/// One response's reasoned score: a line of `rocketjudge reason` and of the page's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReasonedScore {
    pub session_id: String,
    pub model_test: String,
    /// The aggregate of the replies' scores; absent when no reply could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    pub judge: String,
    pub prompt_version: String,
    pub settings: ReasonedSettings,
    /// Whether the prompt carried the query's reference answer.
    pub reference: bool,
    /// Replies whose score could not be read.
    pub unparsed: usize,
    /// Prompt tokens cut from the middle of the response to leave room for the reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated_tokens: Option<usize>,
    pub samples: Vec<ReasonedSample>,
}

impl ReasonedScore {
    /// A line without samples, to fill (the engine's starting point).
    pub fn new(session_id: &str, model: &str, judge: &str, settings: &ReasonedSettings, reference: bool) -> Self {
        ReasonedScore {
            session_id: session_id.to_string(),
            model_test: model.to_string(),
            score: None,
            judge: judge.to_string(),
            prompt_version: settings.protocol.version().to_string(),
            settings: settings.clone(),
            reference,
            unparsed: 0,
            truncated_tokens: None,
            samples: Vec::new(),
        }
    }

    /// Add one reply: parse it, count it if unreadable, and aggregate again.
    pub fn push(&mut self, text: String, tokens: usize, stop: &str, checklist_len: usize) -> &ReasonedSample {
        let parsed = parse_reply(self.settings.protocol, &text, checklist_len);
        self.unparsed += usize::from(parsed.score.is_none());
        self.samples.push(ReasonedSample { score: parsed.score, text, items: parsed.items, tokens, stop: stop.to_string() });
        let scores: Vec<f64> = self.samples.iter().filter_map(|s| s.score).collect();
        self.score = aggregate(&scores, self.settings.aggregate);
        self.samples.last().expect("just pushed")
    }

    /// As a response score for ranking; `None` when no reply could be read (ranked as unanswered).
    pub fn as_score(&self) -> Option<Score> {
        self.score.map(|score| Score {
            session_id: self.session_id.clone(),
            model_test: self.model_test.clone(),
            score,
            judge: Some(self.judge.clone()),
        })
    }
}

/// Scores aggregated as `how` says; `None` for none.
pub fn aggregate(scores: &[f64], how: Aggregate) -> Option<f64> {
    if scores.is_empty() {
        return None;
    }
    Some(match how {
        Aggregate::Mean => crate::stats::mean(scores),
        Aggregate::Median => crate::stats::median(scores),
        Aggregate::Majority => {
            let mut counts: Vec<(f64, usize)> = Vec::new();
            for &s in scores {
                match counts.iter_mut().find(|(v, _)| *v == s) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((s, 1)),
                }
            }
            let most = counts.iter().map(|&(_, n)| n).max().expect("not empty");
            let tied: Vec<f64> = counts.iter().filter(|&&(_, n)| n == most).map(|&(v, _)| v).collect();
            crate::stats::mean(&tied)
        }
    })
}

/// What a reply said: its score and, for `checklist-guided`, each item's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedReply {
    pub score: Option<f64>,
    pub items: Option<Vec<Option<ItemAnswer>>>,
}

/// Read a reply as `protocol` asks it to be written, leniently (small judges break JSON): the score
/// after the last `score` / `rating` key or `[RESULT]` marker that is followed by an integer in the
/// protocol's range (directly or after a few linking words: "has a score of 6"); for
/// `feedback-direct` (the prompt already ends on `[RESULT]`) the first integer.
pub fn parse_reply(protocol: ReasonedProtocol, reply: &str, checklist_len: usize) -> ParsedReply {
    let range = protocol.range();
    let score = match protocol {
        ReasonedProtocol::Feedback => integer_after(reply, &["[result]"], &range),
        ReasonedProtocol::FeedbackDirect => integer_after(reply, &["[result]"], &range).or_else(|| leading_integer(reply, &range)),
        ReasonedProtocol::PairReason | ReasonedProtocol::PairChecklistGuided => integer_after(reply, &["judge"], &range),
        // The JSON protocols: the key asked for, or the other one (judges mix the words).
        _ => integer_after(reply, &["score", "rating"], &range),
    };
    let items = (protocol == ReasonedProtocol::ChecklistGuided).then(|| item_answers(reply, checklist_len));
    ParsedReply { score: score.map(|s| s as f64), items }
}

/// The score after the last occurrence of one of `keys` (ASCII case ignored) that is followed by an
/// integer in `range`: right after it (`"score": "8"`, `[RESULT] 4`) or after a few linking words, as
/// judges that drop the JSON write it ("has a score of 6", "the rating for this response is 1").
fn integer_after(text: &str, keys: &[&str], range: &std::ops::RangeInclusive<i64>) -> Option<i64> {
    let lower = text.to_ascii_lowercase();
    let mut at: Vec<usize> = keys.iter().flat_map(|k| lower.match_indices(k).map(|(i, _)| i + k.len())).collect();
    at.sort_unstable_by(|a, b| b.cmp(a));
    at.into_iter().find_map(|i| number_after_words(&text[i..], range))
}

/// Words a judge puts between "score" / "rating" and the number.
const LINKING_WORDS: &[&str] = &[
    "a",
    "an",
    "as",
    "assessment",
    "be",
    "final",
    "for",
    "give",
    "given",
    "i",
    "is",
    "it",
    "my",
    "of",
    "overall",
    "response",
    "that",
    "the",
    "this",
    "to",
    "would",
];

/// The integer at the start of `text`, or after at most eight [`LINKING_WORDS`].
fn number_after_words(mut text: &str, range: &std::ops::RangeInclusive<i64>) -> Option<i64> {
    for _ in 0..=8 {
        if let Some(v) = leading_integer(text, range) {
            return Some(v);
        }
        let rest = text.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ':' | '[' | '(' | '=' | '*'));
        let word = &rest[..rest.find(|c: char| !c.is_alphanumeric()).unwrap_or(rest.len())];
        if word.is_empty() || !LINKING_WORDS.contains(&word.to_ascii_lowercase().as_str()) {
            return None;
        }
        text = &rest[word.len()..];
    }
    None
}

/// The integer at the start of `text` after quotes, colons, brackets and spaces, if in `range`.
fn leading_integer(text: &str, range: &std::ops::RangeInclusive<i64>) -> Option<i64> {
    let rest = text.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ':' | '[' | '(' | '=' | '*'));
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    // Not a decimal (`7.5`) or a range (`1~10`, `1-10`: the placeholder left as it was).
    let mut after = rest[digits.len()..].chars();
    let joined = matches!(after.next(), Some('.' | '~' | '-')) && after.next().is_some_and(|d| d.is_ascii_digit());
    if digits.is_empty() || digits.len() > 2 || joined {
        return None;
    }
    digits.parse().ok().filter(|v| range.contains(v))
}

/// Seed 002's `"1": "yes"` pairs for items 1..=n (the last answer given for an item counts).
fn item_answers(reply: &str, n: usize) -> Vec<Option<ItemAnswer>> {
    let mut answers = vec![None; n];
    let b = reply.as_bytes();
    let mut i = 0;
    while let Some(q) = reply[i..].find('"').map(|q| q + i) {
        let digits: String = reply[q + 1..].chars().take_while(char::is_ascii_digit).collect();
        i = q + 1;
        if digits.is_empty() || b.get(q + 1 + digits.len()) != Some(&b'"') {
            continue;
        }
        let rest = reply[q + 2 + digits.len()..].trim_start();
        let Some(value) = rest.strip_prefix(':').map(str::trim_start).and_then(|v| v.strip_prefix('"')) else { continue };
        let word: String = value.chars().take_while(|&c| c != '"').collect();
        let answer = match word.trim().trim_end_matches([',', '.']).to_ascii_lowercase().as_str() {
            "yes" => ItemAnswer::Yes,
            "no" => ItemAnswer::No,
            "n/a" | "na" => ItemAnswer::NotApplicable,
            _ => continue,
        };
        if let Some(slot) = digits.parse::<usize>().ok().filter(|&k| (1..=n).contains(&k)) {
            answers[slot - 1] = Some(answer);
        }
    }
    answers
}

/// The user message that asks for one reply under a pointwise `protocol`, and the byte where its
/// query's part ends (the first text an assistant wrote: an earlier turn's answer, else the answer
/// judged), which every answer to the query shares. `history` is the conversation before the user
/// query; `checklist` is listed by `checklist-guided` only.
pub fn reasoned_prompt(
    protocol: ReasonedProtocol,
    history: &[Message],
    user_query: &str,
    reference: Option<&str>,
    model_output: &str,
    checklist: &[String],
) -> OnePassPrompt {
    let mut p = String::new();
    let query_part = match protocol {
        ReasonedProtocol::RocketEvalCot => {
            p.push_str(DIRECT_HEAD);
            let at = push_direct_conversation(&mut p, history, user_query, reference, model_output);
            p.push_str("# Evaluation\n\n## Rules\n");
            p.push_str(if reference.is_some() {
                "You should first compare the AI response and reference response based on your analysis of the user queries and the conversation history, and then provide your assessment by scoring the AI response.\n\n"
            } else {
                "You should first analyze the AI response based on your analysis of the user queries and the conversation history, and then provide your assessment by scoring the AI response.\n\n"
            });
            p.push_str(ROCKETEVAL_COT);
            at
        }
        ReasonedProtocol::Feedback | ReasonedProtocol::FeedbackDirect => {
            p.push_str("###Task Description:\nAn instruction (which may include an Input), a response to evaluate, ");
            if reference.is_some() {
                p.push_str("a reference answer that gets a score of 5, ");
            }
            p.push_str("and a score rubric representing evaluation criteria are provided.\n1. Write detailed feedback assessing the response strictly based on the score rubric.\n2. After the feedback, provide an integer score from 1 to 5, referring to the rubric.\n3. The output format should be: \"(write feedback for criteria) [RESULT] (an integer between 1 and 5)\"\n4. Do not include any additional introductions, conclusions, or explanations.\n\n###The instruction to evaluate:\n");
            let history_at = p.len();
            p.push_str(&instruction(history, user_query));
            p.push_str("\n\n###Response to evaluate:\n");
            let at = query_part(history, history_at, p.len());
            p.push_str(model_output);
            if let Some(r) = reference {
                p.push_str("\n\n###Reference Answer (Score 5):\n");
                p.push_str(r);
            }
            p.push_str(&format!("\n\n###Score Rubrics:\n[{MT_BENCH_CRITERIA}]\n"));
            for (i, band) in BANDS.iter().enumerate() {
                p.push_str(&format!("Score {}: The response is {band}\n", i + 1));
            }
            p.push_str(if protocol == ReasonedProtocol::Feedback { "\n###Feedback:" } else { "\n###Feedback: [RESULT]" });
            at
        }
        // A pairwise protocol's prompt shows two responses ([`reasoned_pair_prompt`]); given one, it
        // is compared with itself (after its own earlier turns, which end the query's part).
        ReasonedProtocol::PairReason | ReasonedProtocol::PairChecklistGuided => {
            let (text, history_at, first_at) = pair::pair_prompt(protocol, history, user_query, model_output, model_output, checklist);
            p = text;
            query_part(history, history_at, first_at)
        }
        ReasonedProtocol::ReasonRating | ReasonedProtocol::ChecklistGuided => {
            let guided = protocol == ReasonedProtocol::ChecklistGuided;
            p.push_str("Please evaluate the following response according to the procedure below:\n\n- Evaluate the response to the input on a size of 1 (lowest) to 5 (highest).\n");
            p.push_str(if guided {
                "- Use the given checklist for your evaluation.\n- For each item in the checklist, output \"yes,\" \"no,\" or \"n/a\" if it does not apply.\n- Evaluate the response based on the checklist.\n"
            } else {
                "- First, state the reason for your evaluation. Then provide the overall rating (1-5).\n"
            });
            p.push_str(SEED_002_RATINGS);
            p.push_str("- Output your response in the following JSON format:\n```json\n{\n");
            if guided {
                p.push_str("  \"checklist\": {\n    \"1\": \"yes\",\n    \"2\": \"no\",\n    \"3\": \"n/a\"\n  },\n");
            } else {
                p.push_str("  \"reason\": \"Explain the rationale for the rating\",\n");
            }
            p.push_str("  \"rating\": 3\n}\n```\n- Do NOT output anything other than the JSON format.\n\n");
            let history_at = push_seed_002_input(&mut p, history, user_query, guided.then_some(checklist));
            p.push_str("[Start of Response]\n");
            let at = query_part(history, history_at, p.len());
            p.push_str(model_output);
            p.push_str("\n[End of Response]");
            at
        }
    };
    OnePassPrompt { text: p, query_part }
}

/// Seed 002's input block (Figures 20–23): the query, then the numbered checklist where the prompt
/// lists it; the byte of `p` where the earlier turns begin (see [`query_part`]).
fn push_seed_002_input(p: &mut String, history: &[Message], user_query: &str, checklist: Option<&[String]>) -> usize {
    p.push_str("[Start of Input]\n");
    let history_at = p.len();
    p.push_str(&instruction(history, user_query));
    p.push_str("\n[End of Input]\n\n");
    if let Some(items) = checklist {
        p.push_str("[Start of Checklist]\n");
        for (i, q) in items.iter().enumerate() {
            p.push_str(&format!("{}. {q}\n", i + 1));
        }
        p.push_str("[End of Checklist]\n\n");
    }
    history_at
}

/// The query as seeds 002 and 003 show it: the user query, after the earlier turns where there are.
fn instruction(history: &[Message], user_query: &str) -> String {
    if history.is_empty() {
        user_query.to_string()
    } else {
        format!("{}USER: {user_query}", format_history(history))
    }
}

/// Seed 000, appendix A.1, "CoT enabled" (the score bands 1~10 and the JSON reply).
const ROCKETEVAL_COT: &str = "The scores are in the range of 1~10, where 1 means the response is very poor and 10 means the response is perfect.\nHere are more detailed criteria for the scores:\n\n- Score 1~2: The response is very poor and does not make sense at all.\n- Score 3~4: The response is poor and does help user solve the problem in a meaningful way.\n- Score 5~6: The response is fair but has some issues (e.g., factual errors, hallucinations, missing key information).\n- Score 7~8: The response is good enough but could be improved in some ways.\n- Score 9~10: The response is perfect and provides helpful information that can help user solve the problem.\n\n## Output Format\nFirst, please output your analysis for the model response, and then summarize your assessment to two aspects: \"strengths\" and \"weaknesses\"; Finally, please write down your rating for the assessment.\n\nPlease provide your evaluation results in the following json format by filling in the placeholders in []:\n```\n{\n    \"strengths\": \"[analysis for the strengths of the response]\",\n    \"weaknesses\": \"[analysis for the weaknesses of the response]\",\n    \"score\": \"[1~10]\"\n}\n```";

/// Seed 002, Figures 22 and 23: what each rating means.
const SEED_002_RATINGS: &str = "- Use the following guidelines for each rating:\n  - Rating-1 (Very Bad): The model's response is entirely irrelevant to the input posed. It demonstrates no understanding of the requested task.\n  - Rating-2 (Bad): While there is a minimal degree of relevance to the original input, the response is predominantly incorrect, confusing, or both.\n  - Rating-3 (Okay): The response shows some relation to the posed input but lacks critical details or includes inaccuracies.\n  - Rating-4 (Good): This rating is given when the response is mostly accurate and comprehensive. However, it might include slight errors or omit minor details.\n  - Rating-5 (Excellent): A response receiving this rating is entirely accurate, detailed, and aligns perfectly with the requirements of the input.\n";

/// Read reasoned scores (JSONL), checking what a hand-edited line could break: the scores are in the
/// protocol's range and the aggregate is the samples' own.
pub fn read_reasoned_scores(file: &str, bytes: &[u8]) -> std::result::Result<Vec<Lined<ReasonedScore>>, FormatError> {
    let rows = crate::formats::jsonl::read_jsonl::<ReasonedScore>(file, bytes)?;
    for r in &rows {
        let s = &r.value;
        if s.settings.protocol.is_pairwise() {
            return Err(FormatError::new(
                file,
                r.line,
                "settings.protocol",
                "a pointwise protocol (a pair's line has model_a and model_b)",
            ));
        }
        let range = s.settings.protocol.range();
        if let Some(i) = s.samples.iter().position(|x| x.score.is_some_and(|v| !(*range.start() as f64..=*range.end() as f64).contains(&v)))
        {
            return Err(FormatError::new(file, r.line, format!("samples[{i}].score"), format!("expected a score in {range:?}")));
        }
        let scores: Vec<f64> = s.samples.iter().filter_map(|x| x.score).collect();
        let expected = aggregate(&scores, s.settings.aggregate);
        let same = match (s.score, expected) {
            (Some(a), Some(b)) => (a - b).abs() < 1e-9,
            (None, None) => true,
            _ => false,
        };
        if !same || s.unparsed != s.samples.len() - scores.len() {
            return Err(FormatError::new(file, r.line, "score", "expected the samples' aggregate and their count of unread replies"));
        }
    }
    Ok(rows)
}

/// Whether a JSONL file's first line is a reasoned score (what `rank --scores` reads them by).
pub fn looks_reasoned(bytes: &[u8]) -> bool {
    first_reasoned_line(bytes).is_some_and(|v| v.get("model_a").is_none())
}

/// Whether a JSONL file's first line is a reasoned pair (what `rank --battles` reads them by).
pub fn looks_reasoned_pair(bytes: &[u8]) -> bool {
    first_reasoned_line(bytes).is_some_and(|v| v.get("model_a").is_some())
}

/// The first line of a JSONL file, if it is a reasoned record (it has `samples` and `settings`).
fn first_reasoned_line(bytes: &[u8]) -> Option<serde_json::Value> {
    crate::formats::jsonl::first_record(bytes).filter(|v| v.get("samples").is_some_and(|s| s.is_array()) && v.get("settings").is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(role: crate::formats::Role, content: &str) -> Message {
        Message { role, content: content.into() }
    }

    #[test]
    fn each_protocol_reads_its_own_reply_format() {
        let p = |protocol, text| parse_reply(protocol, text, 3).score;
        let cot = "The response is clear.\n```\n{\n  \"strengths\": \"clear, a score of 9 would be fair\",\n  \"weaknesses\": \"none\",\n  \"score\": \"8\"\n}\n```";
        assert_eq!(p(ReasonedProtocol::RocketEvalCot, cot), Some(8.0));
        // The placeholder left as it was, a decimal and an out-of-range score are not scores.
        assert_eq!(p(ReasonedProtocol::RocketEvalCot, "{\"score\": \"[1~10]\"}"), None);
        assert_eq!(p(ReasonedProtocol::RocketEvalCot, "\"score\": 7.5"), None);
        assert_eq!(p(ReasonedProtocol::RocketEvalCot, "\"score\": 11"), None);
        assert_eq!(p(ReasonedProtocol::RocketEvalCot, "Score: 10"), Some(10.0));
        // Prose where the JSON was asked for (the 1.5B's replies), and what is not a score.
        assert_eq!(
            p(ReasonedProtocol::RocketEvalCot, "## Rating\n\nBased on the analysis, the AI response has a score of 6. It is clear."),
            Some(6.0)
        );
        assert_eq!(p(ReasonedProtocol::RocketEvalCot, "Therefore, the rating for the assessment is 10."), Some(10.0));
        assert_eq!(p(ReasonedProtocol::RocketEvalCot, "## Rating\nThe AI response is perfect and provides helpful information."), None);
        assert_eq!(p(ReasonedProtocol::RocketEvalCot, "The score reflects 3 problems."), None);
        assert_eq!(p(ReasonedProtocol::RocketEvalCot, "I give it a score of 8/10, the score of 2 was too low"), Some(2.0));
        assert_eq!(p(ReasonedProtocol::Feedback, "Good but terse. [RESULT] 4"), Some(4.0));
        assert_eq!(p(ReasonedProtocol::Feedback, "Good but terse. 4"), None);
        assert_eq!(p(ReasonedProtocol::FeedbackDirect, " 3"), Some(3.0));
        assert_eq!(p(ReasonedProtocol::FeedbackDirect, "[RESULT] 2"), Some(2.0));
        assert_eq!(p(ReasonedProtocol::FeedbackDirect, "The response"), None);
        assert_eq!(p(ReasonedProtocol::ReasonRating, "```json\n{\"reason\": \"ok\", \"rating\": 5}\n```"), Some(5.0));
        assert_eq!(p(ReasonedProtocol::ReasonRating, "{\"reason\": \"ok\", \"rating\": 6}"), None);
    }

    #[test]
    fn the_guided_reply_gives_each_items_answer() {
        let reply = "```json\n{\"checklist\": {\"1\": \"yes\", \"2\": \"N/A\", \"4\": \"no\", \"3\": \"maybe\"}, \"rating\": 4}\n```";
        let r = parse_reply(ReasonedProtocol::ChecklistGuided, reply, 3);
        assert_eq!(r.score, Some(4.0));
        assert_eq!(r.items, Some(vec![Some(ItemAnswer::Yes), Some(ItemAnswer::NotApplicable), None]));
        assert_eq!(parse_reply(ReasonedProtocol::ReasonRating, reply, 3).items, None);
    }

    #[test]
    fn aggregates_follow_seed_003() {
        let s = [4.0, 4.0, 5.0, 2.0, 5.0];
        assert_eq!(aggregate(&s, Aggregate::Mean), Some(4.0));
        assert_eq!(aggregate(&s, Aggregate::Median), Some(4.0));
        // 4 and 5 tie as the most frequent: their mean.
        assert_eq!(aggregate(&s, Aggregate::Majority), Some(4.5));
        assert_eq!(aggregate(&[3.0, 3.0, 1.0], Aggregate::Majority), Some(3.0));
        assert_eq!(aggregate(&[1.0, 2.0], Aggregate::Median), Some(1.5));
        assert_eq!(aggregate(&[], Aggregate::Mean), None);
    }

    #[test]
    fn unreadable_replies_are_kept_counted_and_left_out_of_the_score() {
        let settings = ReasonedSettings { samples: 3, ..ReasonedSettings::paper(ReasonedProtocol::Feedback) };
        let mut row = ReasonedScore::new("s", "m", "j", &settings, true);
        row.push("Fine. [RESULT] 4".into(), 5, "end-of-generation", 0);
        row.push("I cannot judge this.".into(), 6, "end-of-generation", 0);
        row.push("Weak. [RESULT] 2".into(), 4, "max-tokens", 0);
        assert_eq!((row.score, row.unparsed, row.samples.len()), (Some(3.0), 1, 3));
        assert_eq!(row.samples[1].text, "I cannot judge this.");
        // The line reads back; a hand-edited aggregate does not.
        let line = serde_json::to_string(&row).unwrap();
        assert_eq!(read_reasoned_scores("r.jsonl", line.as_bytes()).unwrap()[0].value, row);
        assert!(looks_reasoned(line.as_bytes()));
        let edited = line.replace("\"score\":3.0", "\"score\":5.0");
        let e = read_reasoned_scores("r.jsonl", edited.as_bytes()).unwrap_err();
        assert_eq!((e.line, e.field.as_str()), (1, "score"));
        // No reply read: no score, and no ranking score.
        let mut none = ReasonedScore::new("s", "m", "j", &settings, true);
        none.push("?".into(), 1, "max-tokens", 0);
        assert_eq!((none.score, none.as_score()), (None, None));
    }

    #[test]
    fn settings_refuse_what_means_nothing() {
        let paper = ReasonedSettings::paper(ReasonedProtocol::RocketEvalCot);
        assert_eq!((paper.samples, paper.temperature), (1, 0.0));
        assert!(paper.clone().checked().is_ok());
        assert!(ReasonedSettings { samples: 3, ..paper.clone() }.checked().is_err());
        assert!(ReasonedSettings { samples: 0, temperature: 1.0, ..paper.clone() }.checked().is_err());
        assert!(ReasonedSettings { temperature: -1.0, ..paper.clone() }.checked().is_err());
        assert!(ReasonedSettings { reply_tokens: 0, ..paper }.checked().is_err());
        let direct = ReasonedSettings::paper(ReasonedProtocol::FeedbackDirect);
        assert_eq!((direct.samples, direct.reply_tokens, direct.aggregate), (5, 8, Aggregate::Mean));
        assert_eq!(ReasonedSettings::paper(ReasonedProtocol::ChecklistGuided).aggregate, Aggregate::Majority);
    }

    #[test]
    fn prompts_carry_the_papers_parts() {
        use crate::formats::Role;
        let history = [msg(Role::User, "Hi"), msg(Role::Assistant, "Hello")];
        let items = ["Is it short?".to_string(), "Is it polite?".to_string()];
        let cot = reasoned_prompt(ReasonedProtocol::RocketEvalCot, &history, "Q?", Some("REF"), "ANS", &items).text;
        assert!(cot.contains("compare the AI response and reference response") && cot.contains("REF") && cot.ends_with("}\n```"));
        assert!(cot.contains("\"score\": \"[1~10]\"") && !cot.contains("Is it short?"));
        let no_ref = reasoned_prompt(ReasonedProtocol::Feedback, &[], "Q?", None, "ANS", &items).text;
        assert!(!no_ref.contains("reference answer") && no_ref.ends_with("###Feedback:"));
        let direct = reasoned_prompt(ReasonedProtocol::FeedbackDirect, &history, "Q?", Some("REF"), "ANS", &items).text;
        assert!(direct.contains("USER: Hi") && direct.contains("Reference Answer (Score 5):\nREF") && direct.ends_with("[RESULT]"));
        let guided = reasoned_prompt(ReasonedProtocol::ChecklistGuided, &[], "Q?", None, "ANS", &items).text;
        assert!(guided.contains("[Start of Checklist]\n1. Is it short?\n2. Is it polite?\n[End of Checklist]"));
        assert!(guided.ends_with("[Start of Response]\nANS\n[End of Response]"));
        let plain = reasoned_prompt(ReasonedProtocol::ReasonRating, &[], "Q?", None, "ANS", &items).text;
        assert!(plain.contains("state the reason") && !plain.contains("Checklist"));
    }

    /// Every protocol's query part ends at the first text an assistant wrote (an earlier turn's answer,
    /// else the answer judged), and is the same for another answer to the same query.
    #[test]
    fn prompts_end_their_query_part_at_the_first_assistant_text() {
        use crate::formats::Role;
        let turns = |answer: &str| [msg(Role::User, "Hi"), msg(Role::Assistant, answer)];
        let items = ["Does it say 42?".to_string()];
        for protocol in ReasonedProtocol::NAMES.iter().map(|n| n.parse::<ReasonedProtocol>().unwrap()) {
            for (history, first, other_history) in
                [(vec![], "It is 42.", vec![]), (turns("Hello").to_vec(), "Hello", turns("Howdy").to_vec())]
            {
                for reference in [None, Some("42")] {
                    let p = reasoned_prompt(protocol, &history, "What is 6*7?", reference, "It is 42.", &items);
                    assert!(p.text[p.query_part..].starts_with(first), "{protocol}: {:?}", &p.text[p.query_part..]);
                    let other = reasoned_prompt(protocol, &other_history, "What is 6*7?", reference, "41", &items);
                    assert_eq!(other.query(), p.query(), "{protocol}");
                }
            }
        }
    }
}
