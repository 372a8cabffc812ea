//! Where the judge's forward passes become the records of the other evaluation designs (seeds
//! 000–004): a [`PairJudgment`] from two responses compared in both orders, a [`DirectScore`] from
//! one response scored 0–9 or by its perplexity — each with the query's checklist in the prompt
//! always, never, or where the plain prompt leaves the judge unsure (seed 002) — and a
//! [`ReasonedScore`] (one response) or [`ReasonedPair`] (two) from N written replies
//! (chain-of-thought judging). The command line and the browser worker both call these, so a line
//! means the same wherever it was made.

use rocketjudge_core::decoding::Decoding;
use rocketjudge_core::direct::{DirectScore, DirectSettings};
use rocketjudge_core::formats::{Query, Response};
use rocketjudge_core::pairwise::{self, ChecklistUse, PairJudgment, PairSettings};
use rocketjudge_core::prompt::{grading_history, DirectInstruction, PairwiseScale};
use rocketjudge_core::reasoned::{
    reasoned_pair_prompt, reasoned_prompt, PairSample, ReasonedPair, ReasonedSample, ReasonedScore, ReasonedSettings,
};

use crate::generate::GenerateSettings;
use crate::judge::{cut_middle, ends_within, fit_two_heads, AnyJudge, Judge};
use crate::EngineError;

fn no_checklist(query: &Query) -> EngineError {
    EngineError::Input(format!("`{}` has no checklist to put in the prompt (choose the checklist use `never`)", query.session_id))
}

impl AnyJudge {
    /// Compare `a`'s and `b`'s responses (`(model, response)`) to `query` in both orders, with or
    /// without the checklist as `settings` say (selective use: the plain comparison first).
    pub async fn compare_pair(
        &mut self,
        query: &Query,
        (model_a, a): (&str, &Response),
        (model_b, b): (&str, &Response),
        settings: &PairSettings,
    ) -> Result<PairJudgment, EngineError> {
        // p(A) asked as A, B and as B, A; the longer truncation of the two; both orders' 5-point verdicts.
        type BothOrders = (f64, f64, usize, Option<[[f64; 5]; 2]>);
        let both = async |judge: &mut AnyJudge, guided: bool| -> Result<BothOrders, EngineError> {
            let ab = judge.compare(query, a, b, guided, settings.scale).await?;
            let ba = judge.compare(query, b, a, guided, settings.scale).await?;
            let verdicts = ab.verdicts.zip(ba.verdicts).map(|(x, y)| [x, y]);
            Ok((ab.p_a, 1.0 - ba.p_a, ab.truncated_chars.max(ba.truncated_chars), verdicts))
        };
        let (mut orders, mut inconsistency) = (None, None);
        if settings.checklist == ChecklistUse::Selective {
            let plain = both(self, false).await?;
            inconsistency = Some(pairwise::inconsistency(plain.0, plain.1));
            orders = Some(plain);
        }
        let guided = orders.map_or(settings.checklist == ChecklistUse::Always, |(first, second, ..)| settings.guide(first, second));
        if guided && query.checklist.is_empty() {
            return Err(no_checklist(query));
        }
        if guided || orders.is_none() {
            orders = Some(both(self, guided).await?);
        }
        let (first, second, cut, verdicts) = orders.expect("compared above");
        Ok(PairJudgment {
            session_id: a.session_id.clone(),
            model_a: model_a.to_string(),
            model_b: model_b.to_string(),
            judge: self.name(),
            p_a_first: first,
            p_a_second: second,
            checklist: guided,
            checklist_use: Some(settings.checklist),
            inconsistency,
            reference: settings.reference.clone(),
            decoding: settings.decoding,
            prompt_version: Some(settings.scale.prompt_version(guided).to_string()),
            truncated_chars: (cut > 0).then_some(cut),
            scale: (settings.scale != PairwiseScale::Binary).then_some(settings.scale),
            verdicts,
        })
    }

    /// The Direct score of `model`'s `response` to `query` as `settings` say; `None` for an empty
    /// response under `perplexity` (no tokens, no score: it ranks as unanswered).
    pub async fn direct(
        &mut self,
        query: &Query,
        response: &Response,
        model: &str,
        settings: &DirectSettings,
    ) -> Result<Option<DirectScore>, EngineError> {
        let mut row = DirectScore {
            session_id: response.session_id.clone(),
            model_test: model.to_string(),
            score: 0.0,
            judge: self.name(),
            digits: None,
            prompt_version: Some(settings.instruction.version().to_string()),
            scale: settings.recorded_scale(),
            rubric: settings.rubric_for(&response.session_id).map(str::to_string),
            reference: settings.recorded_reference(),
            checklist: false,
            checklist_use: (settings.checklist != ChecklistUse::Never).then_some(settings.checklist),
            spread: None,
            decoding: settings.decoding,
            perplexity: None,
            tokens: None,
            truncated_tokens: None,
        };
        if settings.instruction == DirectInstruction::Perplexity {
            if response.answer().is_empty() {
                return Ok(None);
            }
            let lp = self.response_logprob(query, response).await?;
            (row.score, row.perplexity, row.tokens, row.truncated_tokens) =
                (lp.mean, Some((-lp.mean).exp()), Some(lp.tokens), (lp.truncated_tokens > 0).then_some(lp.truncated_tokens));
            return Ok(Some(row));
        }
        if settings.checklist == ChecklistUse::Always && query.checklist.is_empty() {
            return Err(no_checklist(query));
        }
        let mut d = self.direct_score(query, response, settings, settings.checklist == ChecklistUse::Always).await?;
        row.checklist = settings.guide(&d.probabilities);
        if settings.checklist == ChecklistUse::Selective {
            row.spread = Some(rocketjudge_core::decoding::score_spread(&d.probabilities));
            if row.checklist {
                if query.checklist.is_empty() {
                    return Err(no_checklist(query));
                }
                d = self.direct_score(query, response, settings, true).await?;
            }
        }
        row.score = settings.decoding.unwrap_or_default().score(&d.probabilities, &Decoding::response_key(model, &response.session_id));
        row.digits = Some(d.probabilities);
        Ok(Some(row))
    }

    /// `model`'s `response` to `query` judged by N written replies as `settings` (checked, a pointwise
    /// protocol) say: the protocol's prompt runs once, each reply is sampled from it (reply i with
    /// seed + i), parsed, and the readable scores aggregated. A prompt too long for the context and the
    /// reply loses the middle of its tokens (recorded). `on_sample` sees each reply as it is read.
    pub async fn reasoned(
        &mut self,
        query: &Query,
        response: &Response,
        model: &str,
        settings: &ReasonedSettings,
        on_sample: &mut dyn FnMut(usize, &ReasonedSample),
    ) -> Result<ReasonedScore, EngineError> {
        let protocol = settings.protocol;
        if protocol.is_pairwise() {
            return Err(EngineError::Input(format!("`{protocol}` compares two responses: judge pairs with it")));
        }
        let room = self.reply_room(query, settings)?;
        let reference = protocol.uses_reference().then(|| query.reference_answer()).flatten();
        let prompt = reasoned_prompt(
            protocol,
            &grading_history(query, response),
            query.user_query(),
            reference,
            &ends_within(response.answer(), room, self.tokenizer())?,
            &query.checklist,
        );
        let mut tokens = self.prompt_tokens(&prompt.text, true)?;
        let mut row = ReasonedScore::new(&response.session_id, model, &self.name(), settings, reference.is_some());
        row.truncated_tokens = Some(cut_middle(&mut tokens, room)).filter(|&cut| cut > 0);
        let shared = self.shared_tokens(prompt.query(), &tokens)?;
        let items = query.checklist.len();
        self.generate_replies(&tokens, shared, &reply_settings(settings, 0), settings.samples, &mut |i, reply| {
            on_sample(i, row.push(reply.text.clone(), reply.tokens.len(), reply.stop.as_str(), items));
        })
        .await?;
        Ok(row)
    }

    /// `a`'s and `b`'s responses (`(model, response)`) to `query` compared by written replies as
    /// `settings` (checked, a pairwise protocol) say: half the replies with `a` shown first (seeds
    /// seed + 0 …), half with `b` first (the next seeds), each prompt run once; every readable reply is
    /// a vote and the majority the verdict. Responses too long for the context and a reply are cut at
    /// the same share of their length (recorded). `on_sample` sees each reply as it is read.
    pub async fn reasoned_pair(
        &mut self,
        query: &Query,
        (model_a, a): (&str, &Response),
        (model_b, b): (&str, &Response),
        settings: &ReasonedSettings,
        on_sample: &mut dyn FnMut(usize, &PairSample),
    ) -> Result<ReasonedPair, EngineError> {
        let protocol = settings.protocol;
        if !protocol.is_pairwise() {
            return Err(EngineError::Input(format!("`{protocol}` scores one response: judge responses with it")));
        }
        let room = self.reply_room(query, settings)?;
        let mut row = ReasonedPair::new(&a.session_id, model_a, model_b, &self.name(), settings);
        let items = query.checklist.len();
        let per_order = settings.per_prompt();
        // Earlier turns are the benchmark's own: the same whichever response is shown first, so the
        // query's part is the same for both orders and every pair on the query.
        let prompt = |x: &str, y: &str| reasoned_pair_prompt(protocol, query.history(), query.user_query(), x, y, &query.checklist);
        let head = prompt("", "");
        for (order, a_first) in [true, false].into_iter().enumerate() {
            let (first, second) = if a_first { (a, b) } else { (b, a) };
            let (tokens, cut) = fit_two_heads(first.answer(), second.answer(), room, self.tokenizer(), |x, y| {
                self.prompt_tokens(&prompt(x, y).text, true)
            })?;
            row.truncated_chars = row.truncated_chars.max(Some(cut).filter(|&c| c > 0));
            let shared = self.shared_tokens(head.query(), &tokens)?;
            let settings = reply_settings(settings, (order * per_order) as u64);
            self.generate_replies(&tokens, shared, &settings, per_order, &mut |i, reply| {
                on_sample(order * per_order + i, row.push(a_first, reply.text.clone(), reply.tokens.len(), reply.stop.as_str(), items));
            })
            .await?;
        }
        Ok(row)
    }

    /// The prompt tokens left beside a reply of `settings.reply_tokens`; an error where the protocol
    /// lists a checklist the query lacks, or where no room is left.
    fn reply_room(&self, query: &Query, settings: &ReasonedSettings) -> Result<usize, EngineError> {
        let protocol = settings.protocol;
        if protocol.needs_checklist() && query.checklist.is_empty() {
            return Err(EngineError::Input(format!("`{}` has no checklist for the `{protocol}` protocol to list", query.session_id)));
        }
        let room = self.context_tokens().saturating_sub(settings.reply_tokens);
        if room < 64 {
            return Err(EngineError::Input(format!(
                "a reply of {} tokens leaves the judge's context of {} no room for the prompt",
                settings.reply_tokens,
                self.context_tokens()
            )));
        }
        Ok(room)
    }
}

/// How each reply of `settings` is written, the first with seed + `offset`.
fn reply_settings(settings: &ReasonedSettings, offset: u64) -> GenerateSettings {
    GenerateSettings {
        max_tokens: settings.reply_tokens,
        temperature: settings.temperature as f32,
        top_p: 1.0,
        seed: settings.seed + offset,
        stop: Vec::new(),
    }
}
