// The parameters and bindings of the GPU-shaped matrix products (gemm.wgsl, gemv.wgsl); binding 1,
// the activations, is declared by xload.wgsl.

struct Params {
    // Activation rows and columns.
    m: u32,
    k: u32,
    // Padded row length of the weight.
    k_padded: u32,
    // The part of the weight bound here: its rows are output columns part_row0 .. part_row0 + part_rows.
    part_row0: u32,
    part_rows: u32,
    // Row length of y: all rows of the weight.
    y_cols: u32,
    has_bias: u32,
    pad: u32,
}
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
