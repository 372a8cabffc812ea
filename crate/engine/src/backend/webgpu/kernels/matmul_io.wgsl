// The parameters and bindings of the GPU-shaped matrix products (gemm.wgsl, gemv.wgsl); binding 1,
// the activations, is declared by xload.wgsl.

struct Params {
    m: u32,
    n: u32,
    k: u32,
    wk: u32,
    ldy: u32,
    col0: u32,
    has_bias: u32,
    pad: u32,
}
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
