// y[m, col0 + n] = Σ_k x[m, k] · W[n, k] (+ bias[col0 + n]) for many rows m: the weight tile is
// dequantized straight into workgroup memory (tile_t: f16 where the device has shader-f16, else f32),
// each thread keeps a 4×4 register tile with rows and columns strided by 16 (conflict-free vec4 reads
// of padded tile rows) and accumulates in f32.

// Params and bindings: matmul_io.wgsl.

const BM: u32 = 64u;
const BN: u32 = 64u;
// The tile depth (16 or 32), and the tile rows in vec4s, padded by one. `tile_t`, the element
// type of the tiles (f16 or f32), is an alias the host puts before this file.
override BK: u32;
override S: u32 = BK / 4u + 1u;
override TILE: u32 = BM * S; // = BN * S

var<workgroup> xs: array<vec4<tile_t>, TILE>;
var<workgroup> ws: array<vec4<tile_t>, TILE>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let n0 = wid.x * BN;
    let m0 = wid.y * BM;
    let tx = tid % 16u;
    let ty = tid / 16u;
    var acc: array<vec4<f32>, 4>;
    for (var i = 0u; i < 4u; i++) {
        acc[i] = vec4<f32>(0.0);
    }
    for (var k0 = 0u; k0 < P.k_padded; k0 += BK) {
        for (var e = tid; e < BM * (BK / 4u); e += 256u) {
            let r = e / (BK / 4u);
            let c = e % (BK / 4u);
            xs[r * S + c] = vec4<tile_t>(xload4(m0 + r, k0 + 4u * c));
        }
        for (var e = tid; e < BN * (BK / 8u); e += 256u) {
            let r = e / (BK / 8u);
            let c = e % (BK / 8u);
            var d = D8(vec4<f32>(0.0), vec4<f32>(0.0));
            if (n0 + r < P.part_rows) {
                d = dq8(n0 + r, k0 / 8u + c);
            }
            ws[r * S + 2u * c] = vec4<tile_t>(d.a);
            ws[r * S + 2u * c + 1u] = vec4<tile_t>(d.b);
        }
        workgroupBarrier();
        for (var kk = 0u; kk < BK / 4u; kk++) {
            let b0 = vec4<f32>(ws[tx * S + kk]);
            let b1 = vec4<f32>(ws[(tx + 16u) * S + kk]);
            let b2 = vec4<f32>(ws[(tx + 32u) * S + kk]);
            let b3 = vec4<f32>(ws[(tx + 48u) * S + kk]);
            for (var i = 0u; i < 4u; i++) {
                let a = vec4<f32>(xs[(ty + 16u * i) * S + kk]);
                acc[i] += vec4<f32>(dot(a, b0), dot(a, b1), dot(a, b2), dot(a, b3));
            }
        }
        workgroupBarrier();
    }
    for (var i = 0u; i < 4u; i++) {
        let m = m0 + ty + 16u * i;
        if (m < P.m) {
            for (var j = 0u; j < 4u; j++) {
                let n = n0 + tx + 16u * j;
                if (n < P.part_rows) {
                    var v = acc[i][j];
                    if (P.has_bias != 0u) {
                        v += bias[P.part_row0 + n];
                    }
                    y[m * P.y_cols + P.part_row0 + n] = v;
                }
            }
        }
    }
}
