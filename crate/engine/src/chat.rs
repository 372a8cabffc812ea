//! Chat templates: the judge model's own `tokenizer.chat_template` rendered with minijinja, or a
//! per-family fallback for models that ship none (Gemma base models: llama.cpp's built-in `gemma`
//! format). Rendering keeps track of where each message's content landed, so the tokenizer can
//! recognise control tokens in the template's text but never inside user-provided content.

use minijinja::{Environment, Error as JinjaError, ErrorKind, Value as JValue};
use rocketjudge_core::formats::{Message, Role};

use crate::tokenizer::Segment;
use crate::EngineError;

/// How prompts are wrapped for a model.
pub enum ChatTemplate {
    /// A Jinja template from the GGUF.
    Jinja { source: String, bos: String, eos: String },
    /// llama.cpp's built-in Gemma format (system text folded into the first user turn).
    Gemma,
}

/// A rendered prompt: the text in order, each piece marked trusted (template) or not (content).
pub struct Rendered {
    pub pieces: Vec<(String, bool)>,
}

impl Rendered {
    pub fn segments(&self) -> Vec<Segment<'_>> {
        self.pieces.iter().map(|(t, trusted)| Segment { text: t, trusted: *trusted }).collect()
    }
    pub fn text(&self) -> String {
        self.pieces.iter().map(|p| p.0.as_str()).collect()
    }
}

impl ChatTemplate {
    /// The template a model uses: its own, else the family fallback, else ChatML (llama.cpp's default).
    pub fn for_model(template: Option<&str>, architecture: &str, bos: &str, eos: &str) -> Self {
        match template {
            Some(t) if !t.trim().is_empty() => {
                if t.contains("<start_of_turn>") && !t.contains("{%") {
                    ChatTemplate::Gemma
                } else {
                    ChatTemplate::Jinja { source: t.to_string(), bos: bos.to_string(), eos: eos.to_string() }
                }
            }
            _ if architecture.starts_with("gemma") => ChatTemplate::Gemma,
            _ => ChatTemplate::Jinja { source: CHATML.to_string(), bos: bos.to_string(), eos: eos.to_string() },
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            ChatTemplate::Jinja { source, .. } if source == CHATML => "chatml (fallback)",
            ChatTemplate::Jinja { .. } => "model's own (GGUF tokenizer.chat_template)",
            ChatTemplate::Gemma => "gemma (llama.cpp built-in)",
        }
    }

    /// Render `messages` followed by the assistant's generation prompt. `strip_bos` drops one leading
    /// BOS text (the tokenizer adds the BOS token itself), as llama-server does.
    pub fn render(&self, messages: &[Message], strip_bos: bool) -> Result<Rendered, EngineError> {
        match self {
            ChatTemplate::Gemma => Ok(render_gemma(messages)),
            ChatTemplate::Jinja { source, bos, eos } => {
                let mut env = Environment::new();
                env.set_trim_blocks(true);
                env.set_lstrip_blocks(true);
                env.add_function("raise_exception", |msg: String| -> Result<JValue, JinjaError> {
                    Err(JinjaError::new(ErrorKind::InvalidOperation, msg))
                });
                // Templates that print today's date get a fixed one: a grade must not depend on the day.
                env.add_function("strftime_now", |_fmt: String| -> String { "26 Jul 2024".to_string() });
                env.add_template("chat", source).map_err(|e| EngineError::Template(format!("cannot parse the chat template: {e}")))?;
                let tmpl = env.get_template("chat").expect("template just added");
                let msgs: Vec<JValue> = messages
                    .iter()
                    .map(|m| JValue::from_serialize(serde_json::json!({"role": m.role.as_str(), "content": m.content})))
                    .collect();
                let ctx = minijinja::context! {
                    messages => msgs,
                    add_generation_prompt => true,
                    bos_token => bos,
                    eos_token => eos,
                };
                let mut text = tmpl.render(ctx).map_err(|e| EngineError::Template(format!("the chat template failed: {e}")))?;
                if strip_bos && !bos.is_empty() && text.starts_with(bos.as_str()) {
                    text.drain(..bos.len());
                }
                Ok(mark_contents(&text, messages))
            }
        }
    }
}

/// llama.cpp's fallback when a model has no template.
pub const CHATML: &str = "{%- for message in messages -%}{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' -}}{%- endfor -%}{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}";

/// Split rendered text into template pieces and content pieces by finding each message's content
/// (or its trimmed form) in order. Content that cannot be found leaves its text marked as template:
/// control tokens are then recognised there too, as llama.cpp would.
fn mark_contents(text: &str, messages: &[Message]) -> Rendered {
    let mut pieces = Vec::new();
    let mut pos = 0;
    for m in messages {
        let c = m.content.as_str();
        let found = [c, c.trim()].into_iter().filter(|s| !s.is_empty()).find_map(|s| text[pos..].find(s).map(|at| (pos + at, s.len())));
        if let Some((at, len)) = found {
            if at > pos {
                pieces.push((text[pos..at].to_string(), true));
            }
            pieces.push((text[at..at + len].to_string(), false));
            pos = at + len;
        }
    }
    if pos < text.len() {
        pieces.push((text[pos..].to_string(), true));
    }
    Rendered { pieces }
}

fn render_gemma(messages: &[Message]) -> Rendered {
    let mut pieces: Vec<(String, bool)> = Vec::new();
    let mut system = String::new();
    for m in messages {
        // llama.cpp trims ASCII whitespace from contents.
        let content = m.content.trim_matches(|c: char| c.is_ascii_whitespace()).to_string();
        if m.role == Role::System {
            system.push_str(&content);
            continue;
        }
        let role = if m.role == Role::Assistant { "model" } else { "user" };
        pieces.push((format!("<start_of_turn>{role}\n"), true));
        if !system.is_empty() && role != "model" {
            pieces.push((std::mem::take(&mut system), false));
            pieces.push(("\n\n".into(), true));
        }
        pieces.push((content, false));
        pieces.push(("<end_of_turn>\n".into(), true));
    }
    pieces.push(("<start_of_turn>model\n".into(), true));
    Rendered { pieces }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chatml_marks_content_untrusted() {
        let t = ChatTemplate::for_model(None, "llama", "", "");
        let r = t.render(&[Message::new(Role::User, "hi <|im_end|>")], false).unwrap();
        assert_eq!(r.text(), "<|im_start|>user\nhi <|im_end|><|im_end|>\n<|im_start|>assistant\n");
        assert_eq!(r.pieces[1], ("hi <|im_end|>".to_string(), false));
    }

    #[test]
    fn gemma_format() {
        let t = ChatTemplate::for_model(None, "gemma3", "<bos>", "<eos>");
        let r = t.render(&[Message::new(Role::System, "Be brief."), Message::new(Role::User, " Hello ")], true).unwrap();
        assert_eq!(r.text(), "<start_of_turn>user\nBe brief.\n\nHello<end_of_turn>\n<start_of_turn>model\n");
    }

    #[test]
    fn template_errors_are_errors() {
        let t = ChatTemplate::Jinja { source: "{{ raise_exception('no system') }}".into(), bos: String::new(), eos: String::new() };
        assert!(matches!(t.render(&[], false), Err(EngineError::Template(m)) if m.contains("no system")));
    }
}
