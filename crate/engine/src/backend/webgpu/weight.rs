//! Weights on the device: vectors decoded to f32, matrices repacked ([`super::repack`]) into planes
//! and split by rows into parts where one storage binding cannot hold them.

use super::device::Device;
use super::options::WebGpuOptions;
use super::repack::{self, Format};
use crate::gguf::TensorInfo;
use crate::quant::{dequantize, GgmlType};
use crate::EngineError;

/// Rows `row0 .. row0 + rows` of a matrix, one buffer per plane of its device format.
pub(super) struct Part {
    pub row0: usize,
    pub rows: usize,
    pub planes: Vec<wgpu::Buffer>,
}

pub(super) enum WeightData {
    /// 1-D tensors (norms, biases), decoded to f32.
    Vector(wgpu::Buffer),
    Matrix {
        fmt: Format,
        /// Padded row length.
        kp: usize,
        parts: Vec<Part>,
    },
}

/// A weight on the device.
pub struct Weight {
    pub dtype: GgmlType,
    pub rows: usize,
    pub cols: usize,
    pub(super) data: WeightData,
}

impl std::fmt::Debug for Weight {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "webgpu::Weight({:?} {}×{})", self.dtype, self.rows, self.cols)
    }
}

/// A matrix's format, padded row length and parts.
pub(super) type MatrixRef<'a> = (Format, usize, &'a [Part]);

impl Weight {
    /// The vector's buffer, or the misuse message.
    pub(super) fn vector(&self, what: &str) -> Result<&wgpu::Buffer, String> {
        match &self.data {
            WeightData::Vector(b) => Ok(b),
            WeightData::Matrix { .. } => Err(format!("{what}: a {}×{} matrix given where a vector is needed", self.rows, self.cols)),
        }
    }

    /// The matrix's parts, or the misuse message.
    pub(super) fn matrix(&self, what: &str) -> Result<MatrixRef<'_>, String> {
        match &self.data {
            WeightData::Matrix { fmt, kp, parts } => Ok((*fmt, *kp, parts)),
            WeightData::Vector(_) => Err(format!("{what}: a vector given where a matrix is needed")),
        }
    }
}

/// Upload one GGUF tensor; `uploaded` counts the weight bytes on the device so far (for the
/// budget and messages).
pub(super) fn load(
    dev: &Device,
    options: &WebGpuOptions,
    uploaded: &mut u64,
    info: &TensorInfo,
    bytes: &[u8],
) -> Result<Weight, EngineError> {
    let (rows, cols) = info.rows_cols();
    let check_budget = |bytes: u64| match options.memory_budget {
        Some(budget) if *uploaded + bytes > budget => Err(EngineError::Backend(format!(
            "tensor `{}` would take GPU memory for weights to {}, beyond the budget of {}",
            info.name,
            human(*uploaded + bytes),
            human(budget)
        ))),
        _ => Ok(()),
    };
    let device_bytes;
    let data = if info.dims.len() == 1 {
        let mut v = vec![0f32; cols];
        dequantize(info.dtype, bytes, &mut v);
        device_bytes = 4 * cols as u64;
        check_budget(device_bytes)?;
        WeightData::Vector(dev.upload(&info.name, bytemuck::cast_slice(&v)))
    } else {
        let fmt = Format::of(info.dtype);
        let kp = repack::padded_cols(info.dtype, cols);
        device_bytes = (rows * fmt.row_bytes(kp)) as u64;
        check_budget(device_bytes)?;
        let per = rows_per_part(dev.max_binding(options), &fmt.plane_words(kp), kp);
        if per == 0 {
            return Err(EngineError::Backend(format!(
                "tensor `{}`: one row takes {} on the GPU, more than {} allows in one buffer binding ({})",
                info.name,
                human(fmt.row_bytes(kp) as u64),
                dev.info.name,
                human(dev.limits.max_storage_buffer_binding_size)
            )));
        }
        let rb = info.dtype.row_bytes(cols);
        let mut parts = Vec::new();
        let mut r0 = 0;
        // One part at a time: the repacked copy of at most one part exists on the host.
        while r0 < rows {
            let r1 = (r0 + per).min(rows);
            let planes = repack::repack(info.dtype, &bytes[r0 * rb..r1 * rb], r1 - r0, cols).map_err(|e| match e {
                EngineError::Model(m) | EngineError::Unsupported(m) => EngineError::Model(format!("tensor `{}`: {m}", info.name)),
                e => e,
            })?;
            let planes = planes.iter().map(|p| dev.upload(&info.name, bytemuck::cast_slice(p))).collect();
            parts.push(Part { row0: r0, rows: r1 - r0, planes });
            r0 = r1;
        }
        WeightData::Matrix { fmt, kp, parts }
    };
    *uploaded += device_bytes;
    if let Some(m) = dev.failure() {
        return Err(EngineError::Backend(format!(
            "{m} (while uploading tensor `{}`, {} of weights on the GPU so far)",
            info.name,
            human(*uploaded)
        )));
    }
    Ok(Weight { dtype: info.dtype, rows, cols, data })
}

/// Rows per part for a tensor whose planes have `words` words per row: every plane of a part must
/// fit one storage binding of `binding` bytes, and index arithmetic stays within u32.
fn rows_per_part(binding: u64, words: &[usize], kp: usize) -> usize {
    let by_plane = words.iter().map(|&w| (binding / (4 * w.max(1)) as u64) as usize).min().unwrap_or(0);
    by_plane.min(((1u64 << 31) / kp.max(1) as u64) as usize)
}

pub(super) fn human(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.2} GiB", bytes as f64 / (1u64 << 30) as f64)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
    }
}
