// Activation loaders of the matrix products: 4 consecutive values of row `m` from column `k` (a
// multiple of 4), zero outside the matrix. Vector loads when rows are 16-byte aligned.

//#XVEC
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
fn xload4(m: u32, k: u32) -> vec4<f32> {
    if (m >= P.m || k >= P.k) {
        return vec4<f32>(0.0);
    }
    return x[(m * P.k + k) / 4u];
}
//#XSCALAR
@group(0) @binding(1) var<storage, read> x: array<f32>;
fn xload4(m: u32, k: u32) -> vec4<f32> {
    var v = vec4<f32>(0.0);
    if (m < P.m) {
        for (var i = 0u; i < 4u; i++) {
            if (k + i < P.k) {
                v[i] = x[m * P.k + k + i];
            }
        }
    }
    return v;
}
