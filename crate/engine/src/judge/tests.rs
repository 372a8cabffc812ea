//! Unit tests of the judge's prompt handling on a tiny SentencePiece vocabulary (one token per
//! character, plus "▁Yes" and "▁No"): the prefix split, the truncation search and the digit score.

use rocketjudge_core::formats::{Message, Query, Response, Role};
use rocketjudge_core::prompt::{grading_prompt_for, PairwiseScale, PromptStyle, TRUNCATION_MARKER};

use super::{DigitScore, PromptCodec};
use crate::chat::ChatTemplate;
use crate::gguf::{Gguf, Value, Writer};
use crate::tokenizer::Tokenizer;

fn codec() -> PromptCodec {
    let mut tokens: Vec<String> = ["<unk>", "<s>", "</s>"].map(String::from).to_vec();
    tokens.extend((0..=255u8).map(|b| format!("<0x{b:02X}>")));
    tokens.extend((' '..='~').filter(|&c| c != ' ').map(String::from));
    tokens.extend(["▁", "▁Y", "▁Ye", "▁Yes", "▁N", "▁No"].map(String::from));
    let n = tokens.len();
    // Longer pieces score higher, so "▁Yes" and "▁No" form; control types for the first three.
    let scores: Vec<Value> = tokens.iter().map(|t| Value::F32(t.chars().count() as f32)).collect();
    let types: Vec<Value> = (0..n)
        .map(|i| {
            Value::I32(if i < 3 {
                3
            } else if i < 259 {
                6
            } else {
                1
            })
        })
        .collect();
    let mut w = Writer::default();
    w.kv("general.architecture", Value::String("llama".into()))
        .kv("tokenizer.ggml.model", Value::String("llama".into()))
        .kv("tokenizer.ggml.tokens", Value::Array(tokens.into_iter().map(Value::String).collect()))
        .kv("tokenizer.ggml.scores", Value::Array(scores))
        .kv("tokenizer.ggml.token_type", Value::Array(types));
    let bytes = w.to_bytes();
    let g = Gguf::parse(&bytes, Some(bytes.len() as u64)).unwrap();
    let tokenizer = Tokenizer::from_gguf(&g).unwrap();
    let template = ChatTemplate::for_model(
        Some("{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}[end]{% endfor %}[assistant]"),
        "llama",
        "<s>",
        "</s>",
    );
    PromptCodec::new(tokenizer, template).unwrap()
}

fn query(items: &[&str]) -> Query {
    Query {
        session_id: "q1".into(),
        conversation_input: vec![Message::new(Role::User, "Name a prime number.")],
        checklist: items.iter().map(|s| s.to_string()).collect(),
        references: Default::default(),
        category: None,
    }
}

fn response(answer: &str) -> Response {
    Response {
        session_id: "q1".into(),
        chat_history: vec![Message::new(Role::User, "Name a prime number.")],
        output: vec![answer.into()],
        generator: "m".into(),
    }
}

#[test]
fn split_is_the_longest_common_prefix() {
    let c = codec();
    let items = ["Is the number prime?", "Is it a single number?", "Is the answer short?"];
    let q = query(&items);
    let r = response("7 is prime.");
    let prompt = grading_prompt_for(PromptStyle::RocketEval, &q, &r, r.answer());
    let (prefix, suffixes) = c.split(&prompt).unwrap();
    assert_eq!(suffixes.len(), items.len());
    for (i, s) in suffixes.iter().enumerate() {
        // Prefix + suffix is exactly the item's own prompt, and every suffix keeps a token.
        let whole = c.encode_user_message(&prompt.item(i)).unwrap();
        assert_eq!([prefix.as_slice(), s].concat(), whole, "item {i}");
        assert!(!s.is_empty(), "item {i} has an empty suffix");
    }
    // Longest: the suffixes do not all start with the same token.
    assert!(suffixes.iter().any(|s| s[0] != suffixes[0][0]), "the prefix could have been longer");
    // One item: the prefix still leaves its last token to the suffix (the row whose logits are read).
    let one = grading_prompt_for(PromptStyle::RocketEval, &query(&items[..1]), &r, r.answer());
    let (p1, s1) = c.split(&one).unwrap();
    assert_eq!(s1[0].len(), 1);
    assert_eq!(p1.len() + 1, c.encode_user_message(&one.item(0)).unwrap().len());
    // No items: a clear error.
    assert!(c.split(&grading_prompt_for(PromptStyle::RocketEval, &query(&[]), &r, r.answer())).is_err());
}

#[test]
fn truncation_keeps_the_longest_answer_that_fits() {
    let c = codec();
    let q = query(&["Is the number prime?", "Is the answer short?"]);
    let answer: String = (0..60).map(|i| format!("word{i} ")).collect();
    let r = response(&answer);
    let whole = c.prepare(&q, &r, 100_000).unwrap();
    assert_eq!(whole.truncated_chars, 0);
    let longest = |p: &super::PreparedResponse| p.prefix.len() + p.suffixes.iter().map(Vec::len).max().unwrap();
    let need = longest(&whole);
    let max_tokens = need - 100;
    let cut = c.prepare(&q, &r, max_tokens).unwrap();
    assert!(cut.truncated_chars > 0);
    assert!(longest(&cut) <= max_tokens, "the truncated prompt does not fit");
    // Maximal: keeping one more character would not fit.
    let kept = answer.len() - cut.truncated_chars;
    let one_more = format!("{}{TRUNCATION_MARKER}", &answer[..kept + 1]);
    let (p, s) = c.split(&grading_prompt_for(PromptStyle::RocketEval, &q, &r, &one_more)).unwrap();
    assert!(p.len() + s.iter().map(Vec::len).max().unwrap() > max_tokens, "one more character would have fit");
    // The kept text is what the prompt holds, marked as cut.
    let expect = c.split(&grading_prompt_for(PromptStyle::RocketEval, &q, &r, &format!("{}{TRUNCATION_MARKER}", &answer[..kept]))).unwrap();
    assert_eq!((cut.prefix, cut.suffixes), expect);
    // A context too small even for the empty answer is an input error, not a panic.
    assert!(c.prepare(&q, &r, 20).is_err());
}

#[test]
fn digit_score_is_the_expectation_over_renormalised_digits() {
    let logits: Vec<f32> = vec![0.0, 1.0, 2.0, 0.5, -1.0, 3.0, 0.0, 0.0, 1.5, -2.0];
    let d = DigitScore::from_logits(&logits);
    let z: f64 = logits.iter().map(|&l| (l as f64).exp()).sum();
    let expected: f64 = logits.iter().enumerate().map(|(i, &l)| i as f64 * (l as f64).exp() / z).sum();
    assert!((d.expected - expected).abs() < 1e-12, "{} vs {expected}", d.expected);
    assert!((d.probabilities.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    assert_eq!(d.argmax, 5);
    // Shifting every logit changes nothing; huge logits do not overflow.
    let shifted = DigitScore::from_logits(&logits.iter().map(|l| l + 1e4).collect::<Vec<_>>());
    assert!((shifted.expected - d.expected).abs() < 1e-6);
    assert!(shifted.probabilities.iter().all(|p| p.is_finite()));
    // All mass on one digit gives that digit.
    let mut one = vec![-1e9f32; 10];
    one[7] = 0.0;
    let d7 = DigitScore::from_logits(&one);
    assert_eq!((d7.argmax, d7.expected), (7, 7.0));
}

#[test]
fn explain_shows_the_text_that_was_tokenized() {
    let mut c = codec();
    let q = query(&["Is the number prime?", "Is the answer short?"]);
    let answer: String = (0..60).map(|i| format!("word{i} ")).collect();
    let r = response(&answer);
    for style in [PromptStyle::RocketEval, PromptStyle::Minimal] {
        c.style = style;
        let whole = c.prepare(&q, &r, 100_000).unwrap();
        let v = c.explain(&q, &r, 100_000).unwrap();
        assert_eq!((v.style, v.truncated_chars, v.kept_chars), (style, 0, answer.chars().count()));
        let prompt = grading_prompt_for(style, &q, &r, r.answer());
        for i in 0..2 {
            let rendered = c.template.render(&[Message::new(Role::User, prompt.item(i))], c.tokenizer.add_bos).unwrap().text();
            assert_eq!(format!("{}{}", v.prefix, v.suffixes[i]), rendered, "{style} item {i}");
        }
        assert!(v.prefix.contains(&answer) && !v.suffixes[0].contains("word0"));
        assert_eq!(v.suffix_tokens, whole.suffixes.iter().map(Vec::len).collect::<Vec<_>>());
        // Cut to fit: the view holds the kept characters and the marker, as the grade does.
        let max_tokens = whole.prefix.len() + whole.suffixes.iter().map(Vec::len).max().unwrap() - 60;
        let cut = c.prepare(&q, &r, max_tokens).unwrap();
        let v = c.explain(&q, &r, max_tokens).unwrap();
        assert_eq!(v.truncated_chars, cut.truncated_chars);
        assert_eq!(v.kept_chars + v.truncated_chars, answer.chars().count());
        assert!(v.prefix.contains(&format!("{}{TRUNCATION_MARKER}", &answer[..v.kept_chars])));
        assert_eq!(v.prefix_tokens, cut.prefix.len());
    }
    // Another wording is another prompt.
    c.style = PromptStyle::RocketEval;
    let a = c.prepare(&q, &r, 100_000).unwrap();
    c.style = PromptStyle::Reworded;
    assert_ne!(a.prefix, c.prepare(&q, &r, 100_000).unwrap().prefix);
}

#[test]
fn pairwise_tokens_keep_the_order_and_cut_both_to_fit() {
    let c = codec();
    let q = query(&["Is the number prime?"]);
    let long_a: String = (0..80).map(|i| format!("alpha{i} ")).collect();
    let long_b: String = (0..80).map(|i| format!("beta{i} ")).collect();
    let (ab, cut) = c.pairwise_tokens(&q, &long_a, &long_b, false, PairwiseScale::Binary, 100_000).unwrap();
    assert_eq!(cut, 0);
    let (ba, _) = c.pairwise_tokens(&q, &long_b, &long_a, false, PairwiseScale::Binary, 100_000).unwrap();
    assert_ne!(ab, ba, "the order shown is part of the prompt");
    let (fitted, cut) = c.pairwise_tokens(&q, &long_a, &long_b, false, PairwiseScale::Binary, ab.len() - 80).unwrap();
    assert!(fitted.len() <= ab.len() - 80 && cut > 0);
    assert!(c.pairwise_tokens(&q, &long_a, &long_b, false, PairwiseScale::Binary, 10).is_err());
    // Checklist-guided (seed 002): the query's items are read before the verdict.
    let (guided, _) = c.pairwise_tokens(&q, &long_a, &long_b, true, PairwiseScale::Binary, 100_000).unwrap();
    let item = c.tokenizer.encode_plain("Is the number prime?").unwrap();
    assert!(guided.len() > ab.len() + item.len() && guided.windows(item.len()).any(|w| w == item.as_slice()));
    assert_eq!(guided[guided.len() - 8..], ab[ab.len() - 8..], "both end on the answer cue");
}

#[test]
fn a_long_prompt_loses_its_middle_and_a_short_one_nothing() {
    let mut long: Vec<u32> = (0..10).collect();
    assert_eq!(super::cut_middle(&mut long, 6), 4);
    assert_eq!(long, [0, 1, 2, 7, 8, 9], "the beginning and the end (the instruction) stay");
    let mut short: Vec<u32> = (0..3).collect();
    assert_eq!(super::cut_middle(&mut short, 100), 0);
    assert_eq!(short, [0, 1, 2]);
}
