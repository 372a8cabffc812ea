//! The buffer pool behind activations: a dropped tensor's buffer goes back to a free list by size
//! class and the next tensor of that class reuses it, so a forward allocates almost nothing after
//! the first.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::device::Device;

/// Free buffers kept for reuse at most (beyond this, dropped tensors release their memory).
const POOL_KEEP_BYTES: u64 = 1 << 30;

#[derive(Default)]
struct Free {
    buffers: HashMap<u64, Vec<wgpu::Buffer>>,
    bytes: u64,
}

#[derive(Clone, Default)]
pub(super) struct Pool(Arc<Mutex<Free>>);

/// A pooled buffer, returned to the pool on drop.
struct PoolBuf {
    buf: wgpu::Buffer,
    pool: Pool,
}

impl Drop for PoolBuf {
    fn drop(&mut self) {
        let mut p = self.pool.0.lock().unwrap_or_else(|e| e.into_inner());
        let size = self.buf.size();
        if p.bytes + size <= POOL_KEEP_BYTES {
            p.bytes += size;
            p.buffers.entry(size).or_default().push(self.buf.clone());
        }
    }
}

/// Pool size classes: multiples of 256 bytes, then quarter octaves (waste ≤ 25 %, few distinct
/// sizes across prompts of different lengths).
fn size_class(bytes: u64) -> u64 {
    let b = bytes.max(256).div_ceil(256) * 256;
    if b <= 4096 {
        return b;
    }
    let top = 63 - b.leading_zeros() as u64; // 2^top <= b
    let step = 1u64 << (top - 2);
    b.div_ceil(step) * step
}

/// Row-major f32 activations on the device. No buffer after a device failure.
pub struct Tensor {
    pub rows: usize,
    pub cols: usize,
    buf: Option<PoolBuf>,
}

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "webgpu::Tensor({}×{})", self.rows, self.cols)
    }
}

impl Tensor {
    pub(super) fn buffer(&self) -> Option<&wgpu::Buffer> {
        self.buf.as_ref().map(|b| &b.buf)
    }
}

/// Tensors' buffers, or `None` when any is missing (after a failure).
pub(super) fn bufs<const N: usize>(ts: [&Tensor; N]) -> Option<[wgpu::Buffer; N]> {
    let mut out = Vec::with_capacity(N);
    for t in ts {
        out.push(t.buffer()?.clone());
    }
    out.try_into().ok()
}

impl Pool {
    /// A pooled activation buffer for `rows × cols` f32 (none once the device has failed).
    pub fn alloc(&self, dev: &Device, rows: usize, cols: usize) -> Tensor {
        if dev.failure().is_some() {
            return Tensor { rows, cols, buf: None };
        }
        let size = size_class((rows * cols * 4) as u64);
        let reused = {
            let mut p = self.0.lock().unwrap_or_else(|e| e.into_inner());
            let b = p.buffers.get_mut(&size).and_then(Vec::pop);
            if b.is_some() {
                p.bytes -= size;
            }
            b
        };
        let buf = reused.unwrap_or_else(|| {
            dev.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("activations"),
                size,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::UNIFORM
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        });
        Tensor { rows, cols, buf: Some(PoolBuf { buf, pool: self.clone() }) }
    }
}
