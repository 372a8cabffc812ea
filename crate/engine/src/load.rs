//! Loading a judge: the GGUF header from a growing prefix, then tensor by tensor.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crate::backend::Backend;
use crate::chat::ChatTemplate;
use crate::gguf::{Gguf, GgufError, TensorInfo, Value};
use crate::judge::{ModelJudge, PromptCodec};
use crate::model::{LoadProgress, Model, TensorSource};
use crate::tokenizer::Tokenizer;
use crate::EngineError;

/// Parse a GGUF header from anything that can hand out a prefix of the file.
pub fn read_header(mut prefix: impl FnMut(usize) -> Result<Vec<u8>, EngineError>, file_len: Option<u64>) -> Result<Gguf, EngineError> {
    let mut want = 1 << 20;
    loop {
        let bytes = prefix(want)?;
        match Gguf::parse(&bytes, file_len) {
            Ok(g) => return Ok(g),
            Err(GgufError::NeedMore(n)) if bytes.len() >= want && n > bytes.len() => want = n,
            Err(GgufError::NeedMore(_)) => return Err(GgufError::Invalid("the file ends inside its header (truncated)".into()).into()),
            Err(e) => return Err(e.into()),
        }
    }
}

/// Tensors read from a seekable file.
pub struct FileSource<R: Read + Seek>(pub R);

impl<R: Read + Seek> TensorSource for FileSource<R> {
    async fn read(&mut self, info: &TensorInfo) -> Result<Vec<u8>, EngineError> {
        let io = |e: std::io::Error| EngineError::Io(format!("reading tensor `{}`: {e}", info.name));
        self.0.seek(SeekFrom::Start(info.offset)).map_err(io)?;
        let mut buf = vec![0u8; info.n_bytes as usize];
        self.0.read_exact(&mut buf).map_err(io)?;
        Ok(buf)
    }
}

/// The tokenizer, chat template and Yes/No ids of a model, from its header alone.
pub fn codec(g: &Gguf) -> Result<PromptCodec, EngineError> {
    let tokenizer = Tokenizer::from_gguf(g)?;
    let text = |id: Option<u32>| id.and_then(|i| tokenizer.token_text(i)).unwrap_or("").to_string();
    let template = ChatTemplate::for_model(
        g.get("tokenizer.chat_template").and_then(Value::as_str),
        g.architecture().unwrap_or(""),
        &text(tokenizer.bos),
        &text(tokenizer.eos),
    );
    PromptCodec::new(tokenizer, template)
}

/// A GGUF file opened for loading: the judge's name (the file stem; manifest models are cached as
/// `<name>.gguf`), its parsed header and its tensors.
pub fn open_file(path: &Path) -> Result<(String, Gguf, FileSource<std::fs::File>), EngineError> {
    let io = |e: std::io::Error| EngineError::Io(format!("{}: {e}", path.display()));
    let mut f = std::fs::File::open(path).map_err(io)?;
    let len = f.metadata().map_err(io)?.len();
    let g = read_header(
        |n| {
            let mut buf = Vec::with_capacity(n.min(len as usize));
            f.seek(SeekFrom::Start(0)).map_err(io)?;
            (&mut f).take(n as u64).read_to_end(&mut buf).map_err(io)?;
            Ok(buf)
        },
        Some(len),
    )?;
    let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("judge").to_string();
    Ok((name, g, FileSource(f)))
}

/// A judge from a GGUF file on disk on a given backend (tests, `bench`; front-ends choose with
/// [`crate::device::open_judge_file`]).
pub fn judge_from_file<B: Backend>(
    path: &Path,
    backend: B,
    max_tokens: usize,
    progress: LoadProgress<'_>,
) -> Result<ModelJudge<B>, EngineError> {
    let (name, g, mut src) = open_file(path)?;
    // Reading a file never waits on anything but the disk: drive the async loader to completion here.
    block_on(judge_from_header(name, &g, &mut src, backend, max_tokens, progress))
}

/// Load a judge whose header is parsed, reading tensors from `src` one at a time.
pub async fn judge_from_header<B: Backend>(
    name: String,
    g: &Gguf,
    src: &mut impl TensorSource,
    mut backend: B,
    max_tokens: usize,
    progress: LoadProgress<'_>,
) -> Result<ModelJudge<B>, EngineError> {
    let codec = codec(g)?;
    let model = Model::load(&mut backend, g, src, progress).await?;
    ModelJudge::new(name, codec, model, backend, max_tokens)
}

/// Run a future to its end on this thread. Used natively, where every await (a file read, CPU work, a
/// GPU read-back that the backend polls for) makes progress when polled again.
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::yield_now();
    }
}
