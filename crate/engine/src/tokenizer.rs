//! The judge's tokenizer, built from GGUF metadata so that token ids match llama.cpp's exactly.
//!
//! - Special tokens (control, user-defined, unknown) are split out of the text first, longest first,
//!   every occurrence, as llama.cpp's `tokenizer_st_partition` does. Control tokens are only recognised
//!   in text the caller marks as trusted (the chat template), never inside message contents, so a
//!   response that contains `<|im_end|>` cannot end the judge's turn. Token types are corrected by
//!   text as llama.cpp does (every end-of-generation spelling is a control token; Phi-3's RSTRIP).
//! - BPE vocabularies (`tokenizer.ggml.model = gpt2`: SmolLM2, Qwen2, Llama 3): the HF `tokenizers`
//!   BPE model with llama.cpp's pre-tokenizer regexes per `tokenizer.ggml.pre`, then byte-level encoding.
//! - SentencePiece vocabularies (`llama`: Gemma): llama.cpp's greedy bigram merge by score, with
//!   `<0xXX>` byte fallback — not HF's Unigram, which segments differently.

use std::cmp::Ordering;
use std::collections::{BTreeSet, BinaryHeap, HashMap};

use tokenizers::models::bpe::BPE;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::{PreTokenizerWrapper, SplitDelimiterBehavior, Tokenizer as HfTokenizer};

use crate::gguf::{Gguf, Value};
use crate::EngineError;

const TYPE_NORMAL: i32 = 1;
const TYPE_UNKNOWN: i32 = 2;
const TYPE_CONTROL: i32 = 3;
const TYPE_USER_DEFINED: i32 = 4;
const TYPE_BYTE: i32 = 6;

/// Token texts at which llama.cpp ends generation whatever the GGUF says (src/llama-vocab.cpp); each
/// also becomes a control token, so `</s>` typed as normal (Qwen2.5) or user-defined is never taken
/// from uploaded text.
const EOG_TEXTS: &[&str] = &[
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<|return|>",
    "<|call|>",
    "<|flush|>",
    "<|calls|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "</s>",
    "<|eom_id|>",
    "<EOT>",
    "_<EOT>",
    "[EOT]",
    "[EOS]",
    "<|end_of_text|>",
    "<end_of_utterance>",
    "<eos>",
    "<turn|>",
    "<|tool_response>",
    "<｜end▁of▁sentence｜>",
    "[e~[",
];

/// Fill-in-the-middle tokens llama.cpp finds by text where the GGUF names none: (metadata key, ends
/// generation, spellings). The first found (here: the lowest id) becomes a control token.
const FIM_TEXTS: &[(&str, bool, &[&str])] = &[
    (
        "tokenizer.ggml.fim_pre_token_id",
        false,
        &["<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>", "<|prefix|>"],
    ),
    (
        "tokenizer.ggml.fim_suf_token_id",
        false,
        &["<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>", "<|suffix|>"],
    ),
    (
        "tokenizer.ggml.fim_mid_token_id",
        false,
        &["<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>", "<|middle|>"],
    ),
    ("tokenizer.ggml.fim_pad_token_id", true, &["<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"]),
    ("tokenizer.ggml.fim_rep_token_id", true, &["<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"]),
    ("tokenizer.ggml.fim_sep_token_id", true, &["<|file_sep|>"]),
];

/// gpt-oss's markers, which llama.cpp always renders: user-defined whatever the GGUF says.
const USER_DEFINED_TEXTS: &[&str] = &["<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"];

// llama.cpp's pre-tokenizer regexes (src/llama-vocab.cpp), applied in order.
const R_GPT2: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)";
const R_QWEN2: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const R_LLAMA3: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const R_D1: &str = r"[\p{P}\$\+<=>\^~\|]+";

enum Model {
    Bpe(Box<HfTokenizer>),
    Spm { scores: Vec<f32>, byte_tokens: Vec<Option<u32>> },
}

/// A piece of text to tokenize, and whether control tokens may be recognised in it.
#[derive(Debug, Clone, Copy)]
pub struct Segment<'a> {
    pub text: &'a str,
    pub trusted: bool,
}

/// A token split out of text before tokenizing, as llama.cpp's `tokenizer_st_partition` does.
struct Special {
    id: u32,
    text: String,
    /// Taken from untrusted text too (a user-defined token); control tokens only from the template.
    user_defined: bool,
    /// Whitespace after it is dropped (llama.cpp's RSTRIP attribute: Phi-3's special tokens).
    rstrip: bool,
}

pub struct Tokenizer {
    model: Model,
    tokens: Vec<String>,
    ids: HashMap<String, u32>,
    /// Control/user-defined/unknown tokens, longest text first.
    specials: Vec<Special>,
    pub bos: Option<u32>,
    pub eos: Option<u32>,
    pub add_bos: bool,
    /// The tokens that end a generated reply, as llama.cpp decides them, in id order.
    end_of_generation: Vec<u32>,
    add_space_prefix: bool,
    /// `tokenizer.ggml.pre` (BPE) or "spm".
    pub kind: String,
    /// Each token's type after llama.cpp's corrections (what decoding renders it as).
    types: Vec<i32>,
    /// The most characters of text one token stands for (see [`Tokenizer::longest_token_chars`]).
    longest_token_chars: usize,
}

/// The first `n` characters of `text` (all of it when shorter).
pub fn head_chars(text: &str, n: usize) -> &str {
    text.char_indices().nth(n).map_or(text, |(i, _)| &text[..i])
}

/// The last `n` characters of `text` (all of it when shorter).
pub fn tail_chars(text: &str, n: usize) -> &str {
    match n.checked_sub(1).and_then(|k| text.char_indices().rev().nth(k)) {
        Some((i, _)) => &text[i..],
        None if n == 0 => "",
        None => text,
    }
}

fn strings(g: &Gguf, key: &str) -> Result<Vec<String>, EngineError> {
    let arr = g.get(key).and_then(Value::as_array).ok_or_else(|| EngineError::Model(format!("GGUF has no `{key}` array")))?;
    arr.iter().map(|v| v.as_str().map(str::to_string).ok_or_else(|| EngineError::Model(format!("`{key}` holds a non-string")))).collect()
}

impl Tokenizer {
    pub fn from_gguf(g: &Gguf) -> Result<Self, EngineError> {
        let model_kind = g.get("tokenizer.ggml.model").and_then(Value::as_str).unwrap_or("");
        let tokens = strings(g, "tokenizer.ggml.tokens")?;
        if tokens.is_empty() {
            return Err(EngineError::Model("the GGUF vocabulary is empty".into()));
        }
        let mut types: Vec<i32> = match g.get("tokenizer.ggml.token_type").and_then(Value::as_array) {
            Some(a) if a.len() == tokens.len() => a.iter().map(|v| v.as_f64().unwrap_or(1.0) as i32).collect(),
            Some(a) => return Err(EngineError::Model(format!("{} token types for {} tokens", a.len(), tokens.len()))),
            None => vec![TYPE_NORMAL; tokens.len()],
        };
        let id_key = |k: &str| g.get(k).and_then(Value::as_u64).map(|v| v as u32).filter(|&v| (v as usize) < tokens.len());
        let flag = |k: &str| g.get(k).and_then(Value::as_bool);
        let mut ids = HashMap::with_capacity(tokens.len());
        for (i, t) in tokens.iter().enumerate() {
            ids.entry(t.clone()).or_insert(i as u32);
        }
        let mut end_of_generation = llama_cpp_corrections(&tokens, &ids, &mut types, &id_key);
        // llama.cpp gives Phi-3's special tokens (by the model's name) the RSTRIP attribute.
        let name = g.get("general.name").and_then(Value::as_str).unwrap_or("").to_lowercase();
        let phi3 = name.contains("phi-3") || name.contains("phi3");
        let mut specials: Vec<Special> = tokens
            .iter()
            .enumerate()
            .filter_map(|(i, t)| {
                let ty = types[i];
                let control = ty == TYPE_CONTROL || ty == TYPE_UNKNOWN;
                let user_defined = ty == TYPE_USER_DEFINED;
                let rstrip = phi3 && !matches!(t.as_str(), "<unk>" | "<s>" | "<|endoftext|>");
                (!t.is_empty() && (control || user_defined)).then(|| Special { id: i as u32, text: t.clone(), user_defined, rstrip })
            })
            .collect();
        // Longest first; ties by id, a deterministic stand-in for llama.cpp's unstable sort.
        specials.sort_by(|a, b| b.text.len().cmp(&a.text.len()).then(a.id.cmp(&b.id)));

        let (model, kind, add_bos_default, add_space_prefix_default) = match model_kind {
            "gpt2" => {
                let pre = g.get("tokenizer.ggml.pre").and_then(Value::as_str).unwrap_or("default").to_string();
                let (regexes, ignore_merges, add_bos): (Vec<&str>, bool, bool) = match pre.as_str() {
                    "smollm" | "starcoder" | "refact" | "command-r" | "codeshell" | "exaone" | "minerva-7b" => {
                        (vec![r"\p{N}", R_GPT2], false, false)
                    }
                    "qwen2" | "deepseek-r1-qwen" | "stablelm2" | "megrez" => (vec![R_QWEN2], false, false),
                    "llama3" | "llama-v3" | "llama-bpe" | "falcon3" | "pixtral" => (vec![R_LLAMA3], true, true),
                    "gpt-2" | "phi-2" | "mpt" | "olmo" | "jais" => (vec![R_GPT2], false, false),
                    "default" => (vec![R_D1, R_GPT2, r"\p{N}+", "[0-9][0-9][0-9]"], false, false),
                    other => return Err(EngineError::Unsupported(format!("BPE pre-tokenizer `{other}` is not supported"))),
                };
                let merges_raw = strings(g, "tokenizer.ggml.merges")?;
                let mut seen = std::collections::HashSet::new();
                let mut merges = Vec::with_capacity(merges_raw.len());
                for m in &merges_raw {
                    // llama.cpp splits at the first space after byte 0 and keeps the first of duplicates.
                    let Some(pos) = m.bytes().skip(1).position(|b| b == b' ').map(|p| p + 1) else {
                        continue;
                    };
                    let (a, b) = (&m[..pos], &m[pos + 1..]);
                    if !ids.contains_key(a) || !ids.contains_key(b) || !ids.contains_key(&format!("{a}{b}")) {
                        continue;
                    }
                    if seen.insert((a.to_string(), b.to_string())) {
                        merges.push((a.to_string(), b.to_string()));
                    }
                }
                let vocab: tokenizers::models::bpe::Vocab = tokens.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect();
                let bpe = BPE::builder()
                    .vocab_and_merges(vocab, merges)
                    .ignore_merges(ignore_merges)
                    // No BPE word cache: tokenizers 0.23 keeps it in a thread-local map that outlives the
                    // BPE, so every tokenizer built and dropped leaked its cache (found by fuzzing; see
                    // crate/cli/tests/fuzz_regressions.rs). Token ids are the same without it.
                    .cache_capacity(0)
                    .build()
                    .map_err(|e| EngineError::Model(format!("cannot build the BPE tokenizer: {e}")))?;
                let mut tk = HfTokenizer::new(bpe);
                let mut pts: Vec<PreTokenizerWrapper> = Vec::new();
                for r in regexes {
                    let split = Split::new(SplitPattern::Regex(r.to_string()), SplitDelimiterBehavior::Isolated, false)
                        .map_err(|e| EngineError::Model(format!("pre-tokenizer regex: {e}")))?;
                    pts.push(split.into());
                }
                pts.push(ByteLevel::new(false, false, false).into());
                tk.with_pre_tokenizer(Some(Sequence::new(pts)));
                (Model::Bpe(Box::new(tk)), pre, add_bos, false)
            }
            "llama" => {
                let scores: Vec<f32> = match g.get("tokenizer.ggml.scores").and_then(Value::as_array) {
                    Some(a) if a.len() == tokens.len() => a.iter().map(|v| v.as_f64().unwrap_or(0.0) as f32).collect(),
                    _ => return Err(EngineError::Model("SentencePiece vocabulary without matching `tokenizer.ggml.scores`".into())),
                };
                let byte_tokens = (0..=255u8)
                    .map(|b| ids.get(&format!("<0x{b:02X}>")).or_else(|| ids.get(&String::from_utf8_lossy(&[b]).to_string())).copied())
                    .collect();
                (Model::Spm { scores, byte_tokens }, "spm".to_string(), true, true)
            }
            other => {
                return Err(EngineError::Unsupported(format!(
                    "tokenizer model `{other}` is not supported (gpt2 BPE and llama SentencePiece are)"
                )))
            }
        };
        let (def_bos, def_eos) = if model_kind == "llama" { (Some(1), Some(2)) } else { (None, None) };
        let eos = id_key("tokenizer.ggml.eos_token_id").or(def_eos);
        end_of_generation.extend(eos);
        // A token's text spells each character it stands for with at least one of its own (byte-level
        // BPE: one per byte; SentencePiece: `▁` for a space; a byte token one for a byte).
        let longest_token_chars = tokens.iter().map(|t| t.chars().count()).max().unwrap_or(1).max(1);
        Ok(Tokenizer {
            longest_token_chars,
            bos: id_key("tokenizer.ggml.bos_token_id").or(def_bos),
            eos,
            end_of_generation: end_of_generation.into_iter().collect(),
            add_bos: flag("tokenizer.ggml.add_bos_token").unwrap_or(add_bos_default),
            add_space_prefix: flag("tokenizer.ggml.add_space_prefix").unwrap_or(add_space_prefix_default),
            model,
            tokens,
            ids,
            specials,
            kind,
            types,
        })
    }

    /// The tokens that end a generated reply, as llama.cpp decides them (EOS, the end-of-turn and
    /// end-of-text spellings, FIM padding/repository/separator), in id order.
    pub fn end_of_generation(&self) -> &[u32] {
        &self.end_of_generation
    }

    pub fn vocab_size(&self) -> usize {
        self.tokens.len()
    }

    /// The most characters of text one token can stand for: a text of `n × this` characters is at
    /// least `n` tokens (Qwen2.5: 128; SmolLM2: 81; Gemma 3: 31).
    pub fn longest_token_chars(&self) -> usize {
        self.longest_token_chars
    }

    /// A beginning of `text` that is at least `tokens` tokens, or all of `text` when it is fewer:
    /// everything a context of `tokens` can keep of the text's beginning lies in it, so the rest
    /// need never be tokenized or copied (a 10 MB answer costs what a context's worth does). Tried
    /// on `4 ×` as many characters as tokens, four times more each time that is too few, and never
    /// more than [`Self::longest_token_chars`] per token, which always suffices. Eight tokens more
    /// than asked allow for how the text joins the prompt around it.
    pub fn head_of<'t>(&self, text: &'t str, tokens: usize) -> Result<&'t str, EngineError> {
        self.end_of(text, tokens, head_chars)
    }

    /// [`Self::head_of`] for the end of `text`.
    pub fn tail_of<'t>(&self, text: &'t str, tokens: usize) -> Result<&'t str, EngineError> {
        self.end_of(text, tokens, tail_chars)
    }

    fn end_of<'t>(&self, text: &'t str, tokens: usize, take: fn(&'t str, usize) -> &'t str) -> Result<&'t str, EngineError> {
        let want = tokens.saturating_add(8);
        let most = want.saturating_mul(self.longest_token_chars);
        let mut chars = want.saturating_mul(4).min(most);
        loop {
            let part = take(text, chars);
            if part.len() == text.len() || chars >= most || self.encode_plain(part)?.len() >= want {
                return Ok(part);
            }
            chars = chars.saturating_mul(4).min(most);
        }
    }

    pub fn token_text(&self, id: u32) -> Option<&str> {
        self.tokens.get(id as usize).map(String::as_str)
    }

    /// The bytes token `id` stands for in generated text, as llama.cpp's `token_to_piece` renders
    /// it without special tokens: control tokens are empty, user-defined ones their text, byte-level
    /// BPE tokens their bytes, SentencePiece pieces with `▁` as a space and `<0xXX>` as that byte.
    /// An id outside the vocabulary is empty.
    pub fn token_bytes(&self, id: u32) -> Vec<u8> {
        let (Some(text), Some(&ty)) = (self.tokens.get(id as usize), self.types.get(id as usize)) else {
            return Vec::new();
        };
        match (ty, &self.model) {
            (TYPE_CONTROL, _) => Vec::new(),
            (TYPE_USER_DEFINED, _) => text.as_bytes().to_vec(),
            (_, Model::Bpe(_)) => text.chars().filter_map(byte_level_byte).collect(),
            (TYPE_UNKNOWN, Model::Spm { .. }) => "\u{2585}".as_bytes().to_vec(),
            (TYPE_BYTE, Model::Spm { .. }) => {
                let hex = text.strip_prefix("<0x").and_then(|t| t.strip_suffix('>'));
                hex.and_then(|h| u8::from_str_radix(h, 16).ok()).map_or_else(|| text.as_bytes().to_vec(), |b| vec![b])
            }
            (_, Model::Spm { .. }) => text.replace('\u{2581}', " ").into_bytes(),
        }
    }

    /// The text of `ids` (see [`Self::token_bytes`]); bytes that are not UTF-8 become U+FFFD.
    pub fn decode(&self, ids: &[u32]) -> String {
        String::from_utf8_lossy(&ids.iter().flat_map(|&id| self.token_bytes(id)).collect::<Vec<u8>>()).into_owned()
    }

    /// Tokenize segments in order. `add_special` adds BOS when the model asks for it.
    pub fn encode(&self, segments: &[Segment<'_>], add_special: bool) -> Result<Vec<u32>, EngineError> {
        enum Frag {
            Raw(String),
            Tok(u32),
        }
        // Partition each segment, then join neighbouring raw text across segments so that text is
        // tokenized exactly as if it were one string (what llama.cpp sees).
        let mut frags: Vec<Frag> = Vec::new();
        for seg in segments {
            let mut parts: Vec<Result<&str, u32>> = if seg.text.is_empty() { vec![] } else { vec![Ok(seg.text)] };
            for sp in &self.specials {
                if !seg.trusted && !sp.user_defined {
                    continue;
                }
                let text = sp.text.as_str();
                if !parts.iter().any(|p| matches!(p, Ok(s) if s.contains(text))) {
                    continue;
                }
                let mut out = Vec::with_capacity(parts.len() + 2);
                for p in parts {
                    match p {
                        Ok(mut rest) => {
                            while let Some(at) = rest.find(text) {
                                if at > 0 {
                                    out.push(Ok(&rest[..at]));
                                }
                                out.push(Err(sp.id));
                                rest = &rest[at + text.len()..];
                                if sp.rstrip {
                                    // C's isspace: space, \t, \n, \v, \f, \r.
                                    rest = rest.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
                                }
                            }
                            if !rest.is_empty() {
                                out.push(Ok(rest));
                            }
                        }
                        tok => out.push(tok),
                    }
                }
                parts = out;
            }
            for p in parts {
                match (p, frags.last_mut()) {
                    (Ok(s), Some(Frag::Raw(prev))) => prev.push_str(s),
                    (Ok(s), _) => frags.push(Frag::Raw(s.to_string())),
                    (Err(id), _) => frags.push(Frag::Tok(id)),
                }
            }
        }
        let mut out = Vec::new();
        if add_special && self.add_bos {
            if let Some(b) = self.bos {
                out.push(b);
            }
        }
        let mut prev_special = true;
        for f in frags {
            match f {
                Frag::Tok(id) => {
                    out.push(id);
                    prev_special = true;
                }
                Frag::Raw(s) => {
                    self.encode_raw(&s, prev_special, &mut out)?;
                    prev_special = false;
                }
            }
        }
        Ok(out)
    }

    /// Tokenize plain text (no special tokens recognised except user-defined ones, no BOS).
    pub fn encode_plain(&self, text: &str) -> Result<Vec<u32>, EngineError> {
        self.encode(&[Segment { text, trusted: false }], false)
    }

    fn encode_raw(&self, text: &str, after_special: bool, out: &mut Vec<u32>) -> Result<(), EngineError> {
        match &self.model {
            Model::Bpe(tk) => {
                let enc = tk.encode_fast(text, false).map_err(|e| EngineError::Tokenizer(e.to_string()))?;
                out.extend_from_slice(enc.get_ids());
            }
            Model::Spm { scores, byte_tokens } => {
                let mut t = String::with_capacity(text.len() + 3);
                if self.add_space_prefix && after_special {
                    t.push(' ');
                }
                t.push_str(text);
                let t = t.replace(' ', "\u{2581}");
                spm(&t, &self.ids, scores, byte_tokens, out)?;
            }
        }
        Ok(())
    }
}

/// The byte a byte-level BPE character stands for (GPT-2's `bytes_to_unicode` inverted): printable
/// bytes are themselves, the other 68 were moved to U+0100 onwards in byte order.
fn byte_level_byte(c: char) -> Option<u8> {
    let printable = |b: u32| (33..=126).contains(&b) || (161..=172).contains(&b) || (174..=255).contains(&b);
    let c = c as u32;
    if c < 256 {
        return printable(c).then_some(c as u8);
    }
    (0u32..256).filter(|&b| !printable(b)).nth((c - 256) as usize).map(|b| b as u8)
}

/// llama.cpp's corrections of token types by their text (`llama_vocab::impl::load`): FIM tokens the
/// GGUF does not name and every end-of-generation spelling become control tokens, gpt-oss's markers
/// user-defined, and `<|end|>` is not an end of generation where `<|return|>` and `<|call|>` (or
/// `<|calls|>` and `<|flush|>`) are. Returns the end-of-generation tokens found so far (without EOS).
fn llama_cpp_corrections(
    tokens: &[String],
    ids: &HashMap<String, u32>,
    types: &mut [i32],
    id_key: &impl Fn(&str) -> Option<u32>,
) -> BTreeSet<u32> {
    let mut eog = BTreeSet::new();
    for (key, ends, texts) in FIM_TEXTS {
        let id = id_key(key).or_else(|| {
            let found = tokens.iter().enumerate().filter(|(_, t)| texts.contains(&t.as_str())).map(|(i, _)| i as u32).min();
            if let Some(i) = found {
                types[i as usize] = TYPE_CONTROL;
            }
            found
        });
        if *ends {
            eog.extend(id);
        }
    }
    for text in EOG_TEXTS {
        if let Some(&id) = ids.get(*text) {
            types[id as usize] = TYPE_CONTROL;
            eog.insert(id);
        }
    }
    for text in USER_DEFINED_TEXTS {
        if let Some(&id) = ids.get(*text) {
            types[id as usize] = TYPE_USER_DEFINED;
        }
    }
    eog.extend(["tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"].iter().filter_map(|k| id_key(k)));
    let has = |t: &str| ids.get(t).is_some_and(|id| eog.contains(id));
    if let Some(&end) = ids.get("<|end|>").filter(|id| eog.contains(id)) {
        if (has("<|return|>") && has("<|call|>")) || (has("<|calls|>") && has("<|flush|>")) {
            eog.remove(&end);
            types[end as usize] = TYPE_USER_DEFINED;
        }
    }
    eog
}

struct Bigram {
    score: f32,
    left: usize,
    right: usize,
    size: usize,
}

impl PartialEq for Bigram {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Bigram {}
impl PartialOrd for Bigram {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Bigram {
    // Max-heap: higher score first, then the leftmost pair.
    fn cmp(&self, o: &Self) -> Ordering {
        self.score.total_cmp(&o.score).then(o.left.cmp(&self.left))
    }
}

/// llama.cpp's SentencePiece session: greedily merge the adjacent pair whose concatenation is the
/// highest-scoring vocabulary token; characters that never become tokens fall back to byte tokens.
fn spm(t: &str, ids: &HashMap<String, u32>, scores: &[f32], byte_tokens: &[Option<u32>], out: &mut Vec<u32>) -> Result<(), EngineError> {
    struct Sym {
        start: usize,
        len: usize,
        prev: isize,
        next: isize,
    }
    let mut sym: Vec<Sym> = t
        .char_indices()
        .enumerate()
        .map(|(i, (b, c))| Sym { start: b, len: c.len_utf8(), prev: i as isize - 1, next: i as isize + 1 })
        .collect();
    if sym.is_empty() {
        return Ok(());
    }
    let last = sym.len() - 1;
    sym[last].next = -1;
    let mut heap = BinaryHeap::new();
    let try_add = |heap: &mut BinaryHeap<Bigram>, sym: &[Sym], l: isize, r: isize| {
        if l < 0 || r < 0 {
            return;
        }
        let (a, b) = (&sym[l as usize], &sym[r as usize]);
        let s = &t[a.start..a.start + a.len + b.len];
        if let Some(&id) = ids.get(s) {
            heap.push(Bigram { score: scores[id as usize], left: l as usize, right: r as usize, size: s.len() });
        }
    };
    for i in 1..sym.len() {
        try_add(&mut heap, &sym, i as isize - 1, i as isize);
    }
    while let Some(bg) = heap.pop() {
        let (ln, rn) = (sym[bg.left].len, sym[bg.right].len);
        if ln == 0 || rn == 0 || ln + rn != bg.size {
            continue;
        }
        sym[bg.left].len += rn;
        sym[bg.right].len = 0;
        let nx = sym[bg.right].next;
        sym[bg.left].next = nx;
        if nx >= 0 {
            sym[nx as usize].prev = bg.left as isize;
        }
        let pv = sym[bg.left].prev;
        try_add(&mut heap, &sym, pv, bg.left as isize);
        try_add(&mut heap, &sym, bg.left as isize, nx);
    }
    let mut i = 0isize;
    while i >= 0 {
        let s = &sym[i as usize];
        let piece = &t[s.start..s.start + s.len];
        match ids.get(piece) {
            Some(&id) => out.push(id),
            None => {
                for b in piece.bytes() {
                    out.push(byte_tokens[b as usize].ok_or_else(|| EngineError::Tokenizer(format!("no byte token for 0x{b:02X}")))?);
                }
            }
        }
        i = s.next;
    }
    Ok(())
}
