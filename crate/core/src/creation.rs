//! How a checklist is written: RocketEval's creation prompt, or one of seed 002's generation
//! policies (its appendix A.8, Figures 15–19), as a sequence of prompts and replies that any writer
//! runs — a strong model behind an endpoint, or the judge on this device.
//!
//! - **Baseline**: yes/no questions, comprehensive but concise, precise; an analysis, then the items
//!   in double square brackets.
//! - **Specify**: the baseline, also "considerate of expected answers" (content-specific items).
//! - **Length ×0.5 / ×1.5**: the baseline first; then a checklist of that many items × 0.5 or × 1.5
//!   (rounded, at least one).
//! - **Self-refine**: the baseline first; then the writer rates each item on a 1–5 scale with feedback
//!   and refines the list (the items after "Refined Checklist").
//! - **Ticking**: TICK's prompt (Cook et al., 2024) without its in-context examples, as seed 002 used it.
//!
//! `{question}` is the query's last user turn, after its earlier turns in RocketEval's rendering.

use crate::formats::Query;
use crate::prompt::{creation_prompt, format_history, parse_checklist_reply, CREATION_PROMPT_VERSION};

crate::named_enum!(
    /// Which prompt writes a checklist.
    #[derive(Default)]
    pub enum CreationPolicy, "the checklist creation policy" {
        /// RocketEval's creation prompt (the bundled checklists' own).
        #[default]
        RocketEval = "rocketeval",
        /// Seed 002's Baseline (Figure 15).
        Baseline = "baseline",
        /// Seed 002's Specify (Figure 16).
        Specify = "specify",
        /// Seed 002's Checklist Length × 0.5 (Figure 17).
        LengthHalf = "length-0.5",
        /// Seed 002's Checklist Length × 1.5 (Figure 17).
        LengthOneAndHalf = "length-1.5",
        /// Seed 002's Self-refine (Figure 18).
        SelfRefine = "self-refine",
        /// TICK's prompt as seed 002 used it (Figure 19).
        Ticking = "ticking",
    }
);

impl CreationPolicy {
    /// What a usable reply holds (for the message when one does not).
    pub fn expected_reply(self) -> &'static str {
        match self {
            CreationPolicy::RocketEval => "numbered questions",
            _ => "checklist items in double square brackets (or a bulleted list of questions)",
        }
    }

    /// The version recorded with checklists written under this policy.
    pub fn version(self) -> &'static str {
        match self {
            CreationPolicy::RocketEval => CREATION_PROMPT_VERSION,
            CreationPolicy::Baseline => "seed002-baseline-v1",
            CreationPolicy::Specify => "seed002-specify-v1",
            CreationPolicy::LengthHalf => "seed002-length-0.5-v1",
            CreationPolicy::LengthOneAndHalf => "seed002-length-1.5-v1",
            CreationPolicy::SelfRefine => "seed002-self-refine-v1",
            CreationPolicy::Ticking => "seed002-ticking-v1",
        }
    }
}

const INTRO: &str = "In order to evaluate the AI's response to the input, please create a checklist based on the input.\n\n";
const RULES: &str = "Checklist questions should:\n\n- **Be answerable by \"yes\" or \"no\"**, with \"yes\" meaning that the response successfully met the corresponding requirement.\n- **Be comprehensive, but concise**, meaning that all criteria directly relevant to the input should be represented by a question, but only questions that are very clearly relevant should be included.\n- **Be precise**, meaning that checklist questions should avoid vague wording and evaluate specific aspects of a response, directly using the phrasing of the input where appropriate.\n";
const SPECIFY_RULE: &str = "- **Be considerate of expected answers**, meaning that checklist questions should be designed while taking into account possible answers to the input.\n";
const OUTPUT: &str = "\nYou should always analyze the input before providing an evaluation checklist.\n\nPlease enclose each checklist item in double square brackets and output in the following format:\n\nAnalysis: Please state the analysis for the input\n\nChecklist:\n\n- [[Item 1]]\n- [[Item 2]]\n\n[Start of Input]\n\n{question}\n\n[End of Input]";
const REFINE: &str = "Please refine the given checklist for evaluating the AI's response according to the following steps:\n\n1. Evaluate each checklist item based on the requirements below.\n\n{rules}\n2. Rate each checklist item on a 5-point size (1 = lowest, 5 = highest) and provide feedback. Present your evaluation using the format below:\n\nChecklist Evaluation:\n\n1. [Item 1] - [Rating]: [Feedback]\n2. [Item 2] - [Rating]: [Feedback]\n\n3. Refine the checklist based on this feedback. Enclose each checklist item in double square brackets and output them in the following format:\n\nRefined Checklist:\n\n- [[Item 1]]\n- [[Item 2]]\n\n[Start of Input]\n{question}\n[End of Input]\n\n[Start of Base Checklist]\n{checklist}\n[End of Base Checklist]";
const TICKING: &str = "Please help judge an AI assistant's response to an instruction by providing an evaluation checklist.\n\nTo write a specific evaluation checklist, you get given the following entity each time:\n\nINSTRUCTION: An instruction that has been given to an AI assistant.\n\n## Task Details\n\nYour task is to come up with an evaluation checklist list for a given INSTRUCTION.\n\nThis evaluation checklist should be a list of questions that ask whether or not specific criteria relevant to the INSTRUCTION were met by an AI assistant's response. Criteria covered by your checklist could be explicitly stated in the INSTRUCTION, or be generally sensible criteria for the problem domain.\n\nYou should, however, try to be concise and not include unnecessary entries in your checklist.\n\nChecklist questions should:\n\n- **Be answerable by \"yes\" or \"no\"**, with \"yes\" meaning that the response successfully met the corresponding requirement.\n- **Be comprehensive, but concise**, meaning that all criteria directly relevant to the INSTRUCTION should be represented by a question, but only questions that are very clearly relevant should be included.\n- **Be precise**, meaning that checklist questions should avoid vague wording and evaluate specific aspects of a response, directly using the phrasing of the INSTRUCTION where appropriate.\n\nYou should always analyze the INSTRUCTION before providing an evaluation checklist.\n\n## Response Format\n\nAnalysis: xxx\n\nChecklists:\n\n- [[item1]]\n- [[item2]]\n\n## Real Task\n\n### INSTRUCTION\n{question}\n\n## Response\n\nPlease analyze the instruction and provide an answer in the correct format.\n\nRemember that each question should be phrased such that answering with \"yes\" would mean that the response **successfully** fulfilled the criteria being assessed by the question.\n\nIn most cases, your checklist should contain at least two questions, but no more than eight.";

/// The query as seed 002's `{question}`: earlier turns (RocketEval's rendering), then the last user turn.
fn question(query: &Query) -> String {
    format!("{}{}", format_history(query.history()), query.user_query())
}

/// Seed 002's baseline-style prompt: the rules, an extra rule, the output format, the query.
fn listed(query: &Query, extra_rule: &str) -> String {
    format!("{INTRO}{RULES}{extra_rule}{OUTPUT}").replace("{question}", &question(query))
}

/// Figure 17's rule for `n` items.
fn length_rule(n: usize) -> String {
    format!("- **Be comprised of {n} items**, meaning that the checklist must contain {n} questions.\n")
}

/// The items in double square brackets of a seed-002-style reply, after the last occurrence of
/// `heading` when given and present that are questions (end with `?`), each once, trimmed. Where
/// there are none, the questions of a bulleted list there (`- [Is it …?]`, `* Is it …?`: small judges
/// drop a bracket). `None` when there is neither.
pub fn parse_bracketed_items(reply: &str, heading: Option<&str>) -> Option<Vec<String>> {
    let start = heading.and_then(|h| reply.rfind(h)).unwrap_or(0);
    let mut items: Vec<String> = Vec::new();
    let mut rest = &reply[start..];
    while let Some(open) = rest.find("[[") {
        let after = &rest[open + 2..];
        let Some(close) = after.find("]]") else { break };
        let item = after[..close].trim().to_string();
        // Items are yes/no questions: the format's placeholders ("Item 1") and answers ("Yes") are not.
        if item.len() > 1 && item.ends_with('?') && !items.contains(&item) {
            items.push(item);
        }
        rest = &after[close + 2..];
    }
    if items.is_empty() {
        for line in reply[start..].lines() {
            let Some(bullet) = line.trim().strip_prefix("- ").or_else(|| line.trim().strip_prefix("* ")) else { continue };
            let q = bullet.trim().trim_start_matches('[').trim_end_matches(']').trim().to_string();
            if q.len() > 1 && q.ends_with('?') && !items.contains(&q) {
                items.push(q);
            }
        }
    }
    (!items.is_empty()).then_some(items)
}

/// What a writer does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Send this prompt as the user's message and give the reply to [`CreationRun::reply`].
    Ask(String),
    /// The checklist (`None`: the last reply held no items; the writer may start again).
    Done(Option<Vec<String>>),
}

/// One checklist being written under a policy: prompts out, replies in.
#[derive(Debug, Clone)]
pub struct CreationRun {
    policy: CreationPolicy,
    query: Query,
    /// The baseline's items, once the first step of a two-step policy has them.
    base: Option<Vec<String>>,
}

impl CreationRun {
    pub fn new(policy: CreationPolicy, query: &Query) -> Self {
        CreationRun { policy, query: query.clone(), base: None }
    }

    /// The first prompt.
    pub fn start(&mut self) -> Step {
        self.base = None;
        Step::Ask(match self.policy {
            CreationPolicy::RocketEval => creation_prompt(&self.query),
            CreationPolicy::Specify => listed(&self.query, SPECIFY_RULE),
            CreationPolicy::Ticking => TICKING.replace("{question}", &question(&self.query)),
            CreationPolicy::Baseline | CreationPolicy::LengthHalf | CreationPolicy::LengthOneAndHalf | CreationPolicy::SelfRefine => {
                listed(&self.query, "")
            }
        })
    }

    /// The writer's reply to the last prompt.
    pub fn reply(&mut self, text: &str) -> Step {
        let two_step = matches!(self.policy, CreationPolicy::LengthHalf | CreationPolicy::LengthOneAndHalf | CreationPolicy::SelfRefine);
        match (&self.base, self.policy) {
            (_, CreationPolicy::RocketEval) => Step::Done(parse_checklist_reply(text)),
            (None, _) if !two_step => Step::Done(parse_bracketed_items(text, Some("Checklist"))),
            (None, _) => match parse_bracketed_items(text, Some("Checklist")) {
                None => Step::Done(None),
                Some(base) => {
                    let prompt = self.second_prompt(&base);
                    self.base = Some(base);
                    Step::Ask(prompt)
                }
            },
            (Some(_), CreationPolicy::SelfRefine) => Step::Done(parse_bracketed_items(text, Some("Refined Checklist"))),
            (Some(_), _) => Step::Done(parse_bracketed_items(text, Some("Checklist"))),
        }
    }

    fn second_prompt(&self, base: &[String]) -> String {
        let scaled = |f: f64| ((base.len() as f64 * f).round() as usize).max(1);
        match self.policy {
            CreationPolicy::LengthHalf => listed(&self.query, &length_rule(scaled(0.5))),
            CreationPolicy::LengthOneAndHalf => listed(&self.query, &length_rule(scaled(1.5))),
            _ => {
                let checklist: Vec<String> = base.iter().map(|i| format!("- [[{i}]]")).collect();
                REFINE.replace("{rules}", RULES).replace("{question}", &question(&self.query)).replace("{checklist}", &checklist.join("\n"))
            }
        }
    }
}

/// Run a policy to its end with a synchronous `ask` (a prompt in, the reply out).
pub fn write_checklist<E>(
    policy: CreationPolicy,
    query: &Query,
    mut ask: impl FnMut(&str) -> Result<String, E>,
) -> Result<Option<Vec<String>>, E> {
    let mut run = CreationRun::new(policy, query);
    let mut step = run.start();
    loop {
        match step {
            Step::Ask(prompt) => step = run.reply(&ask(&prompt)?),
            Step::Done(items) => return Ok(items),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query() -> Query {
        serde_json::from_value(serde_json::json!({
            "session_id": "q",
            "conversation_input": [
                {"role": "user", "content": "Name a prime."},
                {"role": "assistant", "content": "7."},
                {"role": "user", "content": "Name an even one."}
            ]
        }))
        .unwrap()
    }

    #[test]
    fn bracketed_items_are_read_after_the_heading_once_each() {
        let reply =
            "Analysis: the user wants X.\n\nChecklist:\n\n- [[Does it name 2?]]\n- [[ Is it brief? ]]\n- [[Does it name 2?]]\n- [[Item 3]]";
        assert_eq!(parse_bracketed_items(reply, Some("Checklist")).unwrap(), ["Does it name 2?", "Is it brief?"]);
        // Self-refine: only the refined list counts, not the rated base items before it.
        let refine = "Checklist Evaluation:\n1. [[Old?]] - 2: vague\n\nRefined Checklist:\n- [[New one?]]";
        assert_eq!(parse_bracketed_items(refine, Some("Refined Checklist")).unwrap(), ["New one?"]);
        assert_eq!(parse_bracketed_items("no items here", Some("Checklist")), None);
        assert_eq!(parse_bracketed_items("- [[Item 1]]\n- [[item2]]\n- [[Yes]]\n- [[Yes]]", None), None);
        // A bracket dropped: the bulleted questions after the heading.
        let single = "Analysis: x\n- [Not this?]\nChecklist:\n- [Is it a blog?]\n* Does it name Maui?\n- Hawaii is nice.";
        assert_eq!(parse_bracketed_items(single, Some("Checklist")).unwrap(), ["Is it a blog?", "Does it name Maui?"]);
    }

    #[test]
    fn prompts_are_the_papers_with_the_query_in_place() {
        let q = query();
        let Step::Ask(p) = CreationRun::new(CreationPolicy::Baseline, &q).start() else { panic!() };
        assert!(p.starts_with("In order to evaluate the AI's response to the input, please create a checklist based on the input."));
        assert!(p.ends_with("[Start of Input]\n\nUSER: Name a prime.\n\nASSISTANT: 7.\n\nName an even one.\n\n[End of Input]"), "{p}");
        assert!(!p.contains("expected answers"));
        let Step::Ask(s) = CreationRun::new(CreationPolicy::Specify, &q).start() else { panic!() };
        assert!(s.contains("- **Be considerate of expected answers**, meaning"));
        let Step::Ask(t) = CreationRun::new(CreationPolicy::Ticking, &q).start() else { panic!() };
        assert!(t.contains("### INSTRUCTION\nUSER: Name a prime.") && t.ends_with("at least two questions, but no more than eight."));
        let Step::Ask(r) = CreationRun::new(CreationPolicy::RocketEval, &q).start() else { panic!() };
        assert_eq!(r, creation_prompt(&q));
    }

    /// The two-step policies: the baseline's count scaled (rounded, at least 1), and self-refine's
    /// second prompt holding the base checklist.
    #[test]
    fn two_step_policies_build_on_the_baseline() {
        let q = query();
        let base = "Checklist:\n- [[A?]]\n- [[B?]]\n- [[C?]]";
        for (policy, n) in [(CreationPolicy::LengthHalf, 2), (CreationPolicy::LengthOneAndHalf, 5)] {
            let mut asked = Vec::new();
            let items = write_checklist::<()>(policy, &q, |p| {
                asked.push(p.to_string());
                Ok(if asked.len() == 1 { base.to_string() } else { "Checklist:\n- [[X?]]".to_string() })
            })
            .unwrap();
            assert_eq!(items.unwrap(), ["X?"]);
            assert_eq!(asked.len(), 2);
            assert!(
                asked[1].contains(&format!("- **Be comprised of {n} items**, meaning that the checklist must contain {n} questions.")),
                "{policy}"
            );
        }
        let mut asked = Vec::new();
        let items = write_checklist::<()>(CreationPolicy::SelfRefine, &q, |p| {
            asked.push(p.to_string());
            Ok(if asked.len() == 1 { base.to_string() } else { "1. [A?] - 2: vague\nRefined Checklist:\n- [[A, sharper?]]".to_string() })
        })
        .unwrap();
        assert_eq!(items.unwrap(), ["A, sharper?"]);
        assert!(asked[1].contains("[Start of Base Checklist]\n- [[A?]]\n- [[B?]]\n- [[C?]]\n[End of Base Checklist]"), "{}", asked[1]);
        // A baseline without items ends the run without a second prompt.
        let mut n = 0;
        let none = write_checklist::<()>(CreationPolicy::SelfRefine, &q, |_| {
            n += 1;
            Ok("I cannot.".into())
        })
        .unwrap();
        assert_eq!((none, n), (None, 1));
        // RocketEval's prompt takes numbered questions.
        assert_eq!(write_checklist::<()>(CreationPolicy::RocketEval, &q, |_| Ok("1. Is it 2?".into())).unwrap().unwrap(), ["Is it 2?"]);
    }
}
