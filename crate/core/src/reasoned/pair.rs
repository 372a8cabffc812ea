//! Where written replies about two responses become a verdict: seed 002's pairwise protocols
//! (Figures 20 and 21). The judge sees both responses to a query, writes a reason (`pair-reason`) or
//! answers every checklist item for each response (`pair-checklist-guided`), and names the better
//! one, 1 or 2. Half the replies show model A's response first, half model B's (seed 002: "to
//! mitigate position bias ... we use each order five times"); each readable reply is a vote, and
//! the majority is the verdict, a tie when the votes split evenly (seed 002 §4.4). A [`ReasonedPair`]
//! is a battle for the pairwise rankings ([`ReasonedPair::as_battle`]).

use serde::{Deserialize, Serialize};

use super::{item_answers, push_seed_002_input, ReasonedProtocol, ReasonedSettings};
use crate::error::FormatError;
use crate::formats::{Battle, Lined, Message, Winner};
use crate::prompt::OnePassPrompt;

/// A checklist's answers for both responses of a pair (in checklist order; null where a reply gave
/// none), whichever was shown first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairItems {
    pub a: Vec<Option<super::ItemAnswer>>,
    pub b: Vec<Option<super::ItemAnswer>>,
}

/// One reply about a pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairSample {
    /// Whether model A's response was shown first (as "Response 1").
    pub a_first: bool,
    /// The response the reply prefers (`model_a` or `model_b`); absent where it could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vote: Option<Winner>,
    /// The reply as written.
    pub text: String,
    /// `pair-checklist-guided`: each item's answer for each response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<PairItems>,
    /// Tokens written, and why the reply ended (the engine's stop reason).
    pub tokens: usize,
    pub stop: String,
}

/// One pair's verdict from written replies: a line of `rocketjudge reason` with a pairwise protocol
/// (`<out>/pairs.jsonl`) and of the page's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReasonedPair {
    pub session_id: String,
    pub model_a: String,
    pub model_b: String,
    /// The majority of the votes, `tie` when they split evenly; absent when no reply could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub winner: Option<Winner>,
    pub votes_a: usize,
    pub votes_b: usize,
    pub judge: String,
    pub prompt_version: String,
    pub settings: ReasonedSettings,
    /// Replies whose verdict could not be read.
    pub unparsed: usize,
    /// Characters cut from the ends of the two responses so that the prompt and a reply fit the
    /// context (the larger count of the two orders).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated_chars: Option<usize>,
    pub samples: Vec<PairSample>,
}

impl ReasonedPair {
    /// A line without replies, to fill.
    pub fn new(session_id: &str, model_a: &str, model_b: &str, judge: &str, settings: &ReasonedSettings) -> Self {
        ReasonedPair {
            session_id: session_id.to_string(),
            model_a: model_a.to_string(),
            model_b: model_b.to_string(),
            winner: None,
            votes_a: 0,
            votes_b: 0,
            judge: judge.to_string(),
            prompt_version: settings.protocol.version().to_string(),
            settings: settings.clone(),
            unparsed: 0,
            truncated_chars: None,
            samples: Vec::new(),
        }
    }

    /// Add one reply, written with A's response first or not: read its verdict and items, count the
    /// vote (or the unreadable reply) and take the majority again.
    pub fn push(&mut self, a_first: bool, text: String, tokens: usize, stop: &str, checklist_len: usize) -> &PairSample {
        let (shown, items) = parse_pair_reply(self.settings.protocol, &text, checklist_len);
        // "1" is the response shown first.
        let vote = shown.map(|first| if first == a_first { Winner::A } else { Winner::B });
        let items =
            items.map(|[first, second]| if a_first { PairItems { a: first, b: second } } else { PairItems { a: second, b: first } });
        match vote {
            Some(Winner::A) => self.votes_a += 1,
            Some(_) => self.votes_b += 1,
            None => self.unparsed += 1,
        }
        self.winner = majority(self.votes_a, self.votes_b);
        self.samples.push(PairSample { a_first, vote, text, items, tokens, stop: stop.to_string() });
        self.samples.last().expect("just pushed")
    }

    /// As a battle for the pairwise rankings (Bradley–Terry, win rate, Elo); `None` when no reply
    /// could be read.
    pub fn as_battle(&self) -> Option<Battle> {
        self.winner.map(|winner| Battle {
            model_a: self.model_a.clone(),
            model_b: self.model_b.clone(),
            winner,
            question_id: Some(self.session_id.clone()),
        })
    }
}

/// Seed 002's majority vote: the response with more votes, a tie for an even split; `None` for no votes.
pub fn majority(votes_a: usize, votes_b: usize) -> Option<Winner> {
    match votes_a.cmp(&votes_b) {
        _ if votes_a + votes_b == 0 => None,
        std::cmp::Ordering::Greater => Some(Winner::A),
        std::cmp::Ordering::Less => Some(Winner::B),
        std::cmp::Ordering::Equal => Some(Winner::Tie),
    }
}

/// A reply's item answers for the first and the second response shown.
pub type ShownItems = [Vec<Option<super::ItemAnswer>>; 2];

/// What a pairwise reply said: whether it prefers the response shown first (`"judge": 1`), and for
/// `pair-checklist-guided` each item's answer for the first and the second response shown (the
/// answers before the `response_2` key are the first's).
pub fn parse_pair_reply(protocol: ReasonedProtocol, reply: &str, checklist_len: usize) -> (Option<bool>, Option<ShownItems>) {
    let verdict = super::parse_reply(protocol, reply, 0).score.map(|v| v == 1.0);
    let items = (protocol == ReasonedProtocol::PairChecklistGuided).then(|| {
        let split = reply.find("response_2").unwrap_or(reply.len());
        [item_answers(&reply[..split], checklist_len), item_answers(&reply[split..], checklist_len)]
    });
    (verdict, items)
}

/// The user message that asks for one reply about `first` and `second` (as Response 1 and 2) under a
/// pairwise `protocol` (seed 002, Figures 20 and 21; `checklist` is listed by the guided one only),
/// and the byte where its query's part ends: at `first`. Earlier turns are the benchmark's own, so
/// what comes before the responses is the same for every pair on the query.
pub fn reasoned_pair_prompt(
    protocol: ReasonedProtocol,
    history: &[Message],
    user_query: &str,
    first: &str,
    second: &str,
    checklist: &[String],
) -> OnePassPrompt {
    let (text, _, query_part) = pair_prompt(protocol, history, user_query, first, second, checklist);
    OnePassPrompt { text, query_part }
}

/// [`reasoned_pair_prompt`]'s text, the byte where its earlier turns begin and the byte where `first` does.
pub(super) fn pair_prompt(
    protocol: ReasonedProtocol,
    history: &[Message],
    user_query: &str,
    first: &str,
    second: &str,
    checklist: &[String],
) -> (String, usize, usize) {
    let guided = protocol.needs_checklist();
    let mut p =
        String::from("Please evaluate the answers according to the following procedure:\n\n- Evaluate the two responses to the input.\n");
    if guided {
        p.push_str("- Use the given checklist for your evaluation.\n- For each item in the checklist, output “yes”, “no”, or “n/a” if it does not apply.\n- Compare the two responses based on the checklist.\n- Decide which answer is better: 1 or 2.\n- Output your response in the following JSON format:\n```json\n{\n  \"checklist\": {\n    \"response_1\": {\n      \"1\": \"yes\",\n      \"2\": \"no\",\n      \"3\": \"n/a\"\n    },\n    \"response_2\": {\n      \"1\": \"no\",\n      \"2\": \"n/a\",\n      \"3\": \"yes\"\n    }\n  },\n  \"judge\": 1\n}\n```\n- Do not output anything other than the JSON format.\n\n");
    } else {
        p.push_str("- First, state the reason for your evaluation. Then decide which answer is better: 1 or 2.\n- Output your response in the following JSON format:\n```json\n{\n  \"reason\": \"Please state the reason for evaluation\",\n  \"judge\": 1\n}\n```\n- Do NOT output anything other than the JSON format.\n\n");
    }
    let history_at = push_seed_002_input(&mut p, history, user_query, guided.then_some(checklist));
    p.push_str("[Start of Response 1]\n");
    let first_at = p.len();
    p.push_str(&format!("{first}\n[End of Response 1]\n\n[Start of Response 2]\n{second}\n[End of Response 2]"));
    (p, history_at, first_at)
}

/// Read reasoned pairs (JSONL), checking what a hand-edited line could break: a pairwise protocol,
/// two models, and the votes, the unread count and the verdict the replies' own.
pub fn read_reasoned_pairs(file: &str, bytes: &[u8]) -> Result<Vec<Lined<ReasonedPair>>, FormatError> {
    let rows = crate::formats::jsonl::read_jsonl::<ReasonedPair>(file, bytes)?;
    for r in &rows {
        let p = &r.value;
        let fail = |field: &str, expected: &str| Err(FormatError::new(file, r.line, field, expected));
        if !p.settings.protocol.is_pairwise() {
            return fail("settings.protocol", "a pairwise protocol (pair-reason or pair-checklist-guided)");
        }
        if p.model_a == p.model_b {
            return fail("model_b", "another model than model_a");
        }
        let count = |w: Winner| p.samples.iter().filter(|s| s.vote == Some(w)).count();
        let unread = p.samples.iter().filter(|s| s.vote.is_none()).count();
        if p.samples.iter().any(|s| s.vote == Some(Winner::Tie)) {
            return fail("samples", "votes for model_a or model_b (a reply's vote is not a tie)");
        }
        if (p.votes_a, p.votes_b, p.unparsed) != (count(Winner::A), count(Winner::B), unread) || p.winner != majority(p.votes_a, p.votes_b)
        {
            return fail("winner", "the replies' majority, with their counts of votes and of unread replies");
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reasoned::ItemAnswer;

    fn settings() -> ReasonedSettings {
        ReasonedSettings { samples: 4, ..ReasonedSettings::paper(ReasonedProtocol::PairChecklistGuided) }
    }

    #[test]
    fn votes_follow_the_order_shown_and_the_majority_decides() {
        let mut p = ReasonedPair::new("s", "x", "y", "j", &settings());
        // Shown x first, the reply prefers Response 1: a vote for x; shown y first, "1" is y.
        p.push(true, "{\"judge\": 1}".into(), 5, "end-of-generation", 0);
        assert_eq!((p.winner, p.votes_a), (Some(Winner::A), 1));
        p.push(false, "```json\n{\"reason\": \"2 is clearer\", \"judge\": \"1\"}\n```".into(), 9, "end-of-generation", 0);
        assert_eq!((p.winner, p.votes_b), (Some(Winner::Tie), 1));
        p.push(false, "Response 2 is better, but I cannot say.".into(), 9, "max-tokens", 0);
        assert_eq!((p.winner, p.unparsed), (Some(Winner::Tie), 1));
        p.push(true, "The judge is response 2.".into(), 6, "end-of-generation", 0);
        assert_eq!((p.winner, p.votes_a, p.votes_b), (Some(Winner::B), 1, 2));
        let battle = p.as_battle().unwrap();
        assert_eq!((battle.winner, battle.question_id.as_deref()), (Winner::B, Some("s")));
        // Out of range and placeholders are not verdicts.
        assert_eq!(parse_pair_reply(ReasonedProtocol::PairReason, "\"judge\": 3", 0).0, None);
        assert_eq!(parse_pair_reply(ReasonedProtocol::PairReason, "\"judge\": 1.5", 0).0, None);
        let none = ReasonedPair::new("s", "x", "y", "j", &settings());
        assert_eq!((none.winner, none.as_battle()), (None, None));
    }

    #[test]
    fn guided_items_are_each_responses_own() {
        let reply = "{\"checklist\": {\"response_1\": {\"1\": \"yes\", \"2\": \"no\"}, \"response_2\": {\"1\": \"n/a\"}}, \"judge\": 2}";
        let mut p = ReasonedPair::new("s", "x", "y", "j", &settings());
        // y was shown first: response_1's answers are y's.
        let s = p.push(false, reply.into(), 30, "end-of-generation", 2).clone();
        assert_eq!(s.vote, Some(Winner::A));
        let items = s.items.unwrap();
        assert_eq!(items.b, vec![Some(ItemAnswer::Yes), Some(ItemAnswer::No)]);
        assert_eq!(items.a, vec![Some(ItemAnswer::NotApplicable), None]);
    }

    #[test]
    fn lines_read_back_and_hand_edits_do_not() {
        let mut p = ReasonedPair::new("s", "x", "y", "j", &settings());
        p.push(true, "\"judge\": 2".into(), 3, "end-of-generation", 0);
        p.push(false, "?".into(), 1, "max-tokens", 0);
        let line = crate::formats::jsonl::to_jsonl_line(&p);
        assert_eq!(read_reasoned_pairs("p.jsonl", line.as_bytes()).unwrap()[0].value, p);
        assert!(super::super::looks_reasoned_pair(line.as_bytes()) && !super::super::looks_reasoned(line.as_bytes()));
        let e = read_reasoned_pairs("p.jsonl", line.replace("\"winner\":\"model_b\"", "\"winner\":\"model_a\"").as_bytes()).unwrap_err();
        assert_eq!((e.line, e.field.as_str()), (1, "winner"));
        let e = read_reasoned_pairs("p.jsonl", line.replace("\"model_b\":\"y\"", "\"model_b\":\"x\"").as_bytes()).unwrap_err();
        assert_eq!(e.field, "model_b");
    }

    #[test]
    fn settings_split_replies_between_the_orders() {
        let paper = ReasonedSettings::paper(ReasonedProtocol::PairReason);
        assert_eq!((paper.samples, paper.per_prompt(), paper.aggregate), (10, 5, super::super::Aggregate::Majority));
        assert!(ReasonedSettings { samples: 3, ..paper.clone() }.checked().is_err());
        assert!(ReasonedSettings { aggregate: super::super::Aggregate::Mean, ..paper.clone() }.checked().is_err());
        // Greedy: one reply per order.
        assert!(ReasonedSettings { samples: 2, temperature: 0.0, ..paper.clone() }.checked().is_ok());
        assert!(ReasonedSettings { samples: 4, temperature: 0.0, ..paper }.checked().is_err());
    }

    #[test]
    fn prompts_carry_the_papers_parts() {
        let items = ["Is it short?".to_string()];
        let plain = reasoned_pair_prompt(ReasonedProtocol::PairReason, &[], "Q?", "ONE", "TWO", &items).text;
        assert!(plain.contains("Then decide which answer is better: 1 or 2.") && plain.contains("\"judge\": 1\n}"));
        assert!(plain.ends_with("[Start of Response 1]\nONE\n[End of Response 1]\n\n[Start of Response 2]\nTWO\n[End of Response 2]"));
        assert!(!plain.contains("Is it short?"));
        let guided = reasoned_pair_prompt(ReasonedProtocol::PairChecklistGuided, &[], "Q?", "ONE", "TWO", &items);
        assert!(
            guided.text.contains("[Start of Checklist]\n1. Is it short?\n[End of Checklist]") && guided.text.contains("\"response_2\": {")
        );
        // The query's part ends at the first response, after the benchmark's earlier turns: the same
        // for every pair, in either order.
        let history = [Message::new(crate::formats::Role::User, "Hi"), Message::new(crate::formats::Role::Assistant, "Hello")];
        let p = reasoned_pair_prompt(ReasonedProtocol::PairChecklistGuided, &history, "Q?", "ONE", "TWO", &items);
        let swapped = reasoned_pair_prompt(ReasonedProtocol::PairChecklistGuided, &history, "Q?", "TWO", "ONE", &items);
        assert!(p.text[p.query_part..].starts_with("ONE\n") && p.query().contains("Hello") && swapped.query() == p.query());
    }
}
