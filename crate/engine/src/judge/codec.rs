//! Prompt rendering and tokenization for one model: the chat template, the tokenizer and the answer ids;
//! a response cut to fit the context.

use std::borrow::Cow;

use rocketjudge_core::formats::{AnswerTokens, Message, Query, Response, Role};
use rocketjudge_core::prompt::{
    grading_prompt_for, pairwise_prompt, GradingPrompt, OnePassPrompt, PairwiseScale, PromptStyle, TRUNCATION_MARKER,
};

use crate::chat::ChatTemplate;
use crate::tokenizer::{head_chars, Tokenizer};
use crate::EngineError;

use super::*;

/// Prompt rendering and tokenization for one model: chat template + tokenizer + answer ids.
pub struct PromptCodec {
    pub tokenizer: Tokenizer,
    pub template: ChatTemplate,
    pub answers: AnswerTokens,
    /// The grading prompt's wording: RocketEval's unless a flag or a probe chooses another.
    pub style: PromptStyle,
}

impl PromptCodec {
    pub fn new(tokenizer: Tokenizer, template: ChatTemplate) -> Result<Self, EngineError> {
        let (yes, no) = (single_tokens(&tokenizer, &YES)?, single_tokens(&tokenizer, &NO)?);
        for (word, set) in [("Yes", &yes), ("No", &no)] {
            let primary = tokenizer.encode_plain(word)?;
            if primary.len() != 1 || set.first() != primary.first() {
                return Err(EngineError::Unsupported(format!(
                    "this judge's tokenizer splits \"{word}\" into {} tokens; a judge needs single-token Yes and No answers",
                    primary.len()
                )));
            }
        }
        Ok(PromptCodec { tokenizer, template, answers: AnswerTokens { yes, no }, style: PromptStyle::RocketEval })
    }

    /// Token ids of a user message, wrapped in the chat template with the generation prompt.
    pub fn encode_user_message(&self, content: &str) -> Result<Vec<u32>, EngineError> {
        let rendered = self.template.render(&[Message::new(Role::User, content)], self.tokenizer.add_bos)?;
        self.tokenizer.encode(&rendered.segments(), true)
    }

    /// Tokenize every item of `prompt` and split at the longest common prefix.
    pub fn split(&self, prompt: &GradingPrompt) -> Result<(Vec<u32>, Vec<Vec<u32>>), EngineError> {
        if prompt.suffixes.is_empty() {
            return Err(EngineError::Input("the query has no checklist items to grade".into()));
        }
        let items: Vec<Vec<u32>> =
            (0..prompt.suffixes.len()).map(|i| self.encode_user_message(&prompt.item(i))).collect::<Result<_, _>>()?;
        let shortest = items.iter().map(Vec::len).min().unwrap_or(0);
        let mut lcp = 0;
        while lcp + 1 < shortest && items.iter().all(|t| t[lcp] == items[0][lcp]) {
            lcp += 1;
        }
        let prefix = items[0][..lcp].to_vec();
        Ok((prefix, items.into_iter().map(|t| t[lcp..].to_vec()).collect()))
    }

    /// Prepare a response, cutting its answer when the longest item exceeds `max_tokens`.
    pub fn prepare(&self, query: &Query, response: &Response, max_tokens: usize) -> Result<PreparedResponse, EngineError> {
        Ok(self.fit(query, response, max_tokens)?.0)
    }

    /// [`Self::prepare`], with the answer as the prompt holds it (whole, or cut and marked).
    fn fit<'r>(&self, query: &Query, response: &'r Response, max_tokens: usize) -> Result<(PreparedResponse, Cow<'r, str>), EngineError> {
        let whole_answer = response.answer();
        let all = whole_answer.chars().count();
        // What lies beyond the answer's first `max_tokens` tokens can never be kept: it is left out
        // before the prompt is tokenized, so a 10 MB answer costs what a context's worth does.
        let answer = self.tokenizer.head_of(whole_answer, max_tokens)?;
        let fits = |(p, s): &(Vec<u32>, Vec<Vec<u32>>)| p.len() + s.iter().map(Vec::len).max().unwrap_or(0) <= max_tokens;
        let chars: Vec<usize> = answer.char_indices().map(|(i, _)| i).chain([answer.len()]).collect();
        if answer.len() == whole_answer.len() {
            let whole = self.split(&grading_prompt_for(self.style, query, response, answer))?;
            if fits(&whole) {
                let shared = self.query_tokens(query, response, &whole.0)?;
                return Ok((PreparedResponse { prefix: whole.0, suffixes: whole.1, truncated_chars: 0, shared }, Cow::Borrowed(answer)));
            }
        }
        // Binary search on the kept length (in characters) of the answer.
        let kept = longest_fit(chars.len() - 1, |mid| {
            let s = self.split(&grading_prompt_for(self.style, query, response, &cut(answer, chars[mid])))?;
            Ok(fits(&s).then_some(s))
        })?;
        match kept {
            Some((kept, (prefix, suffixes))) => {
                let shared = self.query_tokens(query, response, &prefix)?;
                Ok((PreparedResponse { prefix, suffixes, truncated_chars: all - kept, shared }, Cow::Owned(cut(answer, chars[kept]))))
            }
            None => Err(EngineError::Input(format!(
                "even without the response the prompt exceeds the judge's context of {max_tokens} tokens (is the query or a checklist item very long?)"
            ))),
        }
    }

    /// How many of `prefix`'s first tokens are the query's part of the prompt
    /// ([`GradingPrompt::query_part`], tokenized on its own): [`PreparedResponse::shared`]. The
    /// longest common prefix, so a token the answer's first characters merge into is left out.
    fn query_tokens(&self, query: &Query, response: &Response, prefix: &[u32]) -> Result<usize, EngineError> {
        let p = grading_prompt_for(self.style, query, response, "");
        self.shared_tokens(&p.prefix[..p.query_part], prefix)
    }

    /// How many of `tokens`' first tokens are those of the user message `head` tokenized on its
    /// own (a prompt's query part): the longest common prefix.
    pub fn shared_tokens(&self, head: &str, tokens: &[u32]) -> Result<usize, EngineError> {
        let head = self.encode_user_message(head)?;
        Ok(head.iter().zip(tokens).take_while(|(a, b)| a == b).count())
    }

    /// What the judge reads for `response`, as text (see [`PromptView`]).
    pub fn explain(&self, query: &Query, response: &Response, max_tokens: usize) -> Result<PromptView, EngineError> {
        let (prepared, output) = self.fit(query, response, max_tokens)?;
        let prompt = grading_prompt_for(self.style, query, response, &output);
        let items: Vec<String> = (0..prompt.suffixes.len())
            .map(|i| Ok(self.template.render(&[Message::new(Role::User, prompt.item(i))], self.tokenizer.add_bos)?.text()))
            .collect::<Result<_, EngineError>>()?;
        let common = items[1..].iter().fold(items[0].len(), |n, other| {
            let differ = items[0][..n].char_indices().zip(other.chars()).find(|((_, a), b)| a != b);
            differ.map_or(n.min(other.len()), |((i, _), _)| i)
        });
        Ok(PromptView {
            template: self.template.name(),
            style: self.style,
            prefix: items[0][..common].to_string(),
            suffixes: items.iter().map(|t| t[common..].to_string()).collect(),
            prefix_tokens: prepared.prefix.len(),
            suffix_tokens: prepared.suffixes.iter().map(Vec::len).collect(),
            kept_chars: response.answer().chars().count() - prepared.truncated_chars,
            truncated_chars: prepared.truncated_chars,
            truncation_marker: TRUNCATION_MARKER,
        })
    }

    /// The tokens of a pairwise comparison of two answers to `query`, both cut by the same share of
    /// their length when together they do not fit `max_tokens`; and the characters cut.
    /// With `checklist`, the query's checklist guides the verdict (seed 002); `scale` picks the verdict asked for.
    pub fn pairwise_tokens(
        &self,
        query: &Query,
        a: &str,
        b: &str,
        checklist: bool,
        scale: PairwiseScale,
        max_tokens: usize,
    ) -> Result<(Vec<u32>, usize), EngineError> {
        fit_two_heads(a, b, max_tokens, &self.tokenizer, |a, b| {
            self.encode_user_message(&pairwise_text(query, a, b, checklist, scale).text)
        })
    }

    /// How many of a comparison's first `tokens` ([`Self::pairwise_tokens`]) are its query's: the
    /// same for every comparison of two answers to `query` on `scale`.
    pub fn pairwise_shared(&self, query: &Query, scale: PairwiseScale, tokens: &[u32]) -> Result<usize, EngineError> {
        self.shared_tokens(pairwise_text(query, "", "", false, scale).query(), tokens)
    }
}

/// A comparison of answers `a` and `b` to `query`. Earlier turns are the benchmark's own (the
/// reference's), the same whichever response is shown first: each response's own earlier turns
/// would differ between the two.
fn pairwise_text(query: &Query, a: &str, b: &str, checklist: bool, scale: PairwiseScale) -> OnePassPrompt {
    let items = checklist.then_some(query.checklist.as_slice());
    pairwise_prompt(query.history(), query.user_query(), a, b, items, scale)
}

/// A prompt longer than `room` tokens loses the middle: the end (the instruction and its answer cue)
/// and as much of the beginning as fits stay. The tokens cut.
pub(crate) fn cut_middle(tokens: &mut Vec<u32>, room: usize) -> usize {
    let cut = tokens.len().saturating_sub(room);
    if cut > 0 {
        tokens.drain(room / 2..room / 2 + cut);
    }
    cut
}

/// The tokens `encode` makes of two responses, both cut at the same share of their characters
/// (marked) where needed to fit `max_tokens`, and the characters cut; an error where even empty
/// responses do not fit.
fn fit_two(
    a: &str,
    b: &str,
    max_tokens: usize,
    encode: impl Fn(&str, &str) -> Result<Vec<u32>, EngineError>,
) -> Result<(Vec<u32>, usize), EngineError> {
    let whole = encode(a, b)?;
    if whole.len() <= max_tokens {
        return Ok((whole, 0));
    }
    let keep = |text: &str, per_mille: usize| {
        let n = text.chars().count() * per_mille / 1000;
        (cut(text, head_chars(text, n).len()), text.chars().count() - n)
    };
    let fitted = longest_fit(1000, |m| {
        let ((ca, la), (cb, lb)) = (keep(a, m), keep(b, m));
        let t = encode(&ca, &cb)?;
        Ok((t.len() <= max_tokens).then_some((t, la + lb)))
    })?;
    fitted.map(|(_, t)| t).ok_or_else(|| {
        EngineError::Input(format!("even without the responses the comparison exceeds the judge's context of {max_tokens} tokens"))
    })
}

/// `text` as a prompt cut in its middle (or at its end) can use it: whole, or when its beginning
/// and end of `max_tokens` tokens each ([`Tokenizer::head_of`], [`Tokenizer::tail_of`]) leave a
/// middle out, those two around the truncation marker. Whatever such a context keeps of the text
/// lies in them, and the middle is never tokenized.
pub(crate) fn ends_within<'t>(text: &'t str, max_tokens: usize, tokenizer: &Tokenizer) -> Result<Cow<'t, str>, EngineError> {
    let head = tokenizer.head_of(text, max_tokens)?;
    let rest = &text[head.len()..];
    let tail = tokenizer.tail_of(rest, max_tokens)?;
    Ok(if tail.len() == rest.len() { Cow::Borrowed(text) } else { Cow::Owned(format!("{head}{TRUNCATION_MARKER}{tail}")) })
}

/// [`fit_two`] on the beginnings of the responses that a context of `max_tokens` can keep
/// ([`Tokenizer::head_of`]: nothing beyond is tokenized), the characters left out counted as cut.
pub(crate) fn fit_two_heads(
    a: &str,
    b: &str,
    max_tokens: usize,
    tokenizer: &Tokenizer,
    encode: impl Fn(&str, &str) -> Result<Vec<u32>, EngineError>,
) -> Result<(Vec<u32>, usize), EngineError> {
    let (ha, hb) = (tokenizer.head_of(a, max_tokens)?, tokenizer.head_of(b, max_tokens)?);
    let left_out = |whole: &str, head: &str| whole[head.len()..].chars().count();
    let (tokens, cut) = fit_two(ha, hb, max_tokens, encode)?;
    Ok((tokens, cut + left_out(a, ha) + left_out(b, hb)))
}

/// The answer cut after byte `end`, marked as cut.
pub(super) fn cut(answer: &str, end: usize) -> String {
    format!("{}{}", &answer[..end], TRUNCATION_MARKER)
}

/// The largest `k` in `0..=max` for which `try_fit(k)` gives something, with it; `try_fit` must
/// succeed for every `k` below one that succeeds (a shorter text fits whenever a longer one does).
pub(super) fn longest_fit<T>(
    max: usize,
    mut try_fit: impl FnMut(usize) -> Result<Option<T>, EngineError>,
) -> Result<Option<(usize, T)>, EngineError> {
    let (mut lo, mut hi) = (0usize, max);
    let mut best = None;
    while lo <= hi {
        let mid = (lo + hi) / 2;
        match try_fit(mid)? {
            Some(t) => {
                best = Some((mid, t));
                lo = mid + 1;
            }
            None if mid == 0 => break,
            None => hi = mid - 1,
        }
    }
    Ok(best)
}

/// The ids of those `variants` that are one token for `tokenizer`, without repeats.
pub(super) fn single_tokens(tokenizer: &Tokenizer, variants: &[&str]) -> Result<Vec<u32>, EngineError> {
    let mut out = Vec::new();
    for v in variants {
        let t = tokenizer.encode_plain(v)?;
        if t.len() == 1 && !out.contains(&t[0]) {
            out.push(t[0]);
        }
    }
    Ok(out)
}
