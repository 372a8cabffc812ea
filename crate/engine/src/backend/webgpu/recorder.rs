//! Recording, not executing: ops append dispatches here; `flush` sends them all in one command
//! encoder and one compute pass. Small per-dispatch data (parameters, token ids, RoPE tables,
//! attention ranges) goes into one arena buffer written once per submission. Pipelines are created
//! on first use and cached by kernel variant ([`Shader`]).

use std::any::{Any, TypeId};
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::Hasher;
use std::num::NonZeroU64;

use super::device::{self, Device, Status};
use crate::EngineError;

/// Bytes of one arena slot's alignment (WebGPU's largest minimum offset alignment).
const ARENA_ALIGN: usize = 256;

/// What a binding points at.
#[derive(Clone)]
pub(super) enum Bind {
    Buf(wgpu::Buffer),
    /// (buffer, offset, size)
    Range(wgpu::Buffer, u64, u64),
    /// (offset, size) in this submission's arena.
    Arena(u64, u64),
}

struct Pass {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
    binds: Vec<(u32, Bind)>,
    groups: [u32; 3],
}

/// What a pipeline is made from: a kernel family's variant, which carries every number the host and
/// the shader must agree on (each family's file implements it). Equal variants of one type share a
/// pipeline; its label is the variant's `Debug` text with its type's name.
pub(super) trait Shader: std::fmt::Debug + std::hash::Hash + Eq + Clone + 'static {
    /// The WGSL module.
    fn source(&self) -> String;
    /// Values of the kernel's `override` constants.
    fn constants(&self) -> Vec<(&'static str, f64)>;
}

/// A cached pipeline and the variant it was made for.
struct Cached {
    variant: Box<dyn Any>,
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

/// A read-back under way: the staging buffer and the map callback's answer.
pub(super) type Readback = (wgpu::Buffer, futures_channel::oneshot::Receiver<Result<(), wgpu::BufferAsyncError>>);

#[derive(Default)]
pub(super) struct Recorder {
    /// By the variant's type and hash; the variant itself tells apart two that hash alike.
    pipelines: HashMap<(TypeId, u64), Vec<Cached>>,
    passes: Vec<Pass>,
    arena: Vec<u8>,
    arena_buf: Option<wgpu::Buffer>,
    /// Arena data already written in this submission, by key (RoPE tables shared by Q and K).
    memo: Vec<(Vec<u8>, Bind)>,
    pub submissions: u64,
}

impl Recorder {
    fn pipeline<S: Shader>(&mut self, dev: &Device, k: &S) -> (wgpu::ComputePipeline, wgpu::BindGroupLayout) {
        let key = (TypeId::of::<S>(), {
            let mut h = DefaultHasher::new();
            k.hash(&mut h);
            h.finish()
        });
        let cached = self.pipelines.get(&key).and_then(|v| v.iter().find(|c| c.variant.downcast_ref::<S>() == Some(k)));
        if let Some(c) = cached {
            return (c.pipeline.clone(), c.layout.clone());
        }
        let label = format!("{}::{k:?}", std::any::type_name::<S>());
        let module = dev.device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(&label),
            source: wgpu::ShaderSource::Wgsl(k.source().into()),
        });
        let constants = k.constants();
        let pipeline = dev.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(&label),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: wgpu::PipelineCompilationOptions { constants: &constants, zero_initialize_workgroup_memory: false },
            cache: None,
        });
        let layout = pipeline.get_bind_group_layout(0);
        let cached = Cached { variant: Box::new(k.clone()), pipeline: pipeline.clone(), layout: layout.clone() };
        self.pipelines.entry(key).or_default().push(cached);
        (pipeline, layout)
    }

    /// Reserve `bytes` in this submission's arena; returns (offset, size).
    fn arena_push(&mut self, bytes: &[u8]) -> Bind {
        let at = self.arena.len().div_ceil(ARENA_ALIGN) * ARENA_ALIGN;
        // Bindings are at least 16 bytes (a uniform struct) and a multiple of 4.
        let size = bytes.len().max(16).div_ceil(16) * 16;
        self.arena.resize(at + size, 0);
        self.arena[at..at + bytes.len()].copy_from_slice(bytes);
        Bind::Arena(at as u64, size as u64)
    }

    /// Plain values into the arena.
    pub fn arena<T: bytemuck::Pod>(&mut self, v: &[T]) -> Bind {
        self.arena_push(bytemuck::cast_slice(v))
    }

    /// Arena data made by `make` once per submission and `key`.
    pub fn arena_memo<T: bytemuck::Pod>(&mut self, key: Vec<u8>, make: impl FnOnce() -> Vec<T>) -> Bind {
        if let Some((_, b)) = self.memo.iter().find(|(k, _)| *k == key) {
            return b.clone();
        }
        let b = self.arena(&make());
        self.memo.push((key, b.clone()));
        b
    }

    /// Record one dispatch: `params` at binding 0, then `binds`.
    pub fn dispatch<P: bytemuck::Pod, S: Shader>(
        &mut self,
        dev: &Device,
        k: &S,
        params: &P,
        mut binds: Vec<(u32, Bind)>,
        groups: [u32; 3],
    ) {
        if groups.contains(&0) {
            return;
        }
        let (pipeline, layout) = self.pipeline(dev, k);
        let p = self.arena(std::slice::from_ref(params));
        binds.insert(0, (0, p));
        self.passes.push(Pass { pipeline, layout, binds, groups });
    }

    /// Submit everything recorded (one command buffer), plus an optional copy for a read-back.
    pub fn flush(&mut self, dev: &Device, copy: Option<(&wgpu::Buffer, &wgpu::Buffer, u64)>) {
        if self.passes.is_empty() && copy.is_none() {
            self.arena.clear();
            self.memo.clear();
            return;
        }
        if !self.arena.is_empty() {
            let need = self.arena.len() as u64;
            if self.arena_buf.as_ref().is_none_or(|b| b.size() < need) {
                let size = need.next_power_of_two().max(1 << 20);
                self.arena_buf = Some(dev.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("arena"),
                    size,
                    usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                }));
            }
            let arena = self.arena_buf.as_ref().unwrap();
            dev.queue.write_buffer(arena, 0, &self.arena);
        }
        let mut enc = dev.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        {
            let mut cp = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes: None });
            for p in self.passes.drain(..) {
                let entries: Vec<wgpu::BindGroupEntry> = p
                    .binds
                    .iter()
                    .map(|(binding, b)| wgpu::BindGroupEntry {
                        binding: *binding,
                        resource: match b {
                            Bind::Buf(buf) => buf.as_entire_binding(),
                            Bind::Range(buf, offset, size) => wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                buffer: buf,
                                offset: *offset,
                                size: NonZeroU64::new(*size),
                            }),
                            Bind::Arena(offset, size) => wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                buffer: self.arena_buf.as_ref().unwrap(),
                                offset: *offset,
                                size: NonZeroU64::new(*size),
                            }),
                        },
                    })
                    .collect();
                let bg = dev.device.create_bind_group(&wgpu::BindGroupDescriptor { label: None, layout: &p.layout, entries: &entries });
                cp.set_pipeline(&p.pipeline);
                cp.set_bind_group(0, &bg, &[]);
                cp.dispatch_workgroups(p.groups[0], p.groups[1], p.groups[2]);
            }
        }
        if let Some((src, dst, size)) = copy {
            enc.copy_buffer_to_buffer(src, 0, dst, 0, size);
        }
        dev.queue.submit([enc.finish()]);
        self.submissions += 1;
        self.arena.clear();
        self.memo.clear();
    }

    /// Submit what is recorded plus a copy of `bytes` of `src` into a mappable buffer, and start
    /// mapping it.
    pub fn start_readback(&mut self, dev: &Device, src: &wgpu::Buffer, bytes: u64) -> Readback {
        let bytes = bytes.max(4).div_ceil(4) * 4;
        let staging = dev.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("read-back"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        self.flush(dev, Some((src, &staging, bytes)));
        let (tx, rx) = futures_channel::oneshot::channel();
        staging.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        (staging, rx)
    }
}

/// Wait for a read-back started by [`Recorder::start_readback`] and return its first `n` floats.
pub(super) async fn finish_readback(
    device: wgpu::Device,
    status: Status,
    (staging, rx): Readback,
    n: usize,
) -> Result<Vec<f32>, EngineError> {
    // Natively the map callback runs inside poll; in a browser the promise resolves on its own and
    // poll is a no-op.
    let _ = device.poll(wgpu::PollType::wait_indefinitely());
    let mapped = rx.await;
    let fail = |m: String| EngineError::Backend(device::current(&status).unwrap_or(m));
    match mapped {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(fail(format!("reading back from the GPU failed: {e}"))),
        Err(_) => return Err(fail("reading back from the GPU was cancelled".into())),
    }
    if let Some(m) = device::current(&status) {
        return Err(EngineError::Backend(m));
    }
    let values = {
        let view = staging.get_mapped_range(..).map_err(|e| fail(format!("reading back from the GPU failed: {e}")))?;
        bytemuck::cast_slice::<u8, f32>(&view)[..n].to_vec()
    };
    staging.unmap();
    Ok(values)
}
