// y[m, col0 + n] = Σ_k x[m, k] · W[n, k] (+ bias[col0 + n]) for many rows m on the GPU's matrix
// units (cooperative matrices: natively, where the adapter multiplies S × S f16 matrices into f32
// ones, S = 16 or 8). As in gemm.wgsl, each step of BK columns dequantizes the weight tile straight
// into workgroup memory, here in f16 like the activations' tile; each of the workgroup's 8 subgroups
// then multiplies its 16 × 32 share of the 64 × 64 output tile, TM × TN matrices of S × S with f32
// accumulation, and the result goes through workgroup memory to y, with the bias, within the
// matrix's bounds.
//
// The host puts before this file `S` and the matrix types `mat_a`, `mat_b` and `mat_c` (the
// adapter's S × S f16 operands and f32 accumulator): a type's size is not something an override
// can set.

// Params and bindings: matmul_io.wgsl.

const BM: u32 = 64u;
const BN: u32 = 64u;
const BK: u32 = 32u;
// A subgroup's share of the output tile, in matrices.
const TM: u32 = 16u / S;
const TN: u32 = 32u / S;
// Invocations per workgroup: 8 subgroups of the device's subgroup size (the host chooses this
// kernel only where that size is fixed), so that `subgroup_id` runs over 0..8.
override WG: u32;

// Row m, column k of the activations' tile; row n, column k of the weight's (a column-major B).
var<workgroup> xs: array<f16, BM * BK>;
var<workgroup> ws: array<f16, BN * BK>;
// Row m, column n of the result.
var<workgroup> ys: array<f32, BM * BN>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32, @builtin(subgroup_id) sid: u32) {
    let n0 = wid.x * BN;
    let m0 = wid.y * BM;
    // This subgroup's 16 × 32 share: rows tm.., columns tn.. of the workgroup's tile.
    let tm = 16u * (sid % 4u);
    let tn = 32u * (sid / 4u);
    var acc: array<mat_c, TM * TN>;
    for (var t = 0u; t < TM * TN; t++) {
        acc[t] = mat_c();
    }
    for (var k0 = 0u; k0 < P.k_padded; k0 += BK) {
        for (var e = tid; e < BM * (BK / 4u); e += WG) {
            let r = e / (BK / 4u);
            let c = 4u * (e % (BK / 4u));
            let v = vec4<f16>(xload4(m0 + r, k0 + c));
            xs[r * BK + c] = v.x;
            xs[r * BK + c + 1u] = v.y;
            xs[r * BK + c + 2u] = v.z;
            xs[r * BK + c + 3u] = v.w;
        }
        for (var e = tid; e < BN * (BK / 8u); e += WG) {
            let r = e / (BK / 8u);
            let c = 8u * (e % (BK / 8u));
            var d = D8(vec4<f32>(0.0), vec4<f32>(0.0));
            if (n0 + r < P.part_rows) {
                d = dq8(n0 + r, k0 / 8u + c / 8u);
            }
            let a = vec4<f16>(d.a);
            let b = vec4<f16>(d.b);
            ws[r * BK + c] = a.x;
            ws[r * BK + c + 1u] = a.y;
            ws[r * BK + c + 2u] = a.z;
            ws[r * BK + c + 3u] = a.w;
            ws[r * BK + c + 4u] = b.x;
            ws[r * BK + c + 5u] = b.y;
            ws[r * BK + c + 6u] = b.z;
            ws[r * BK + c + 7u] = b.w;
        }
        workgroupBarrier();
        for (var kk = 0u; kk < BK; kk += S) {
            var a: array<mat_a, TM>;
            for (var i = 0u; i < TM; i++) {
                a[i] = coopLoadT<mat_a>(&xs[(tm + i * S) * BK + kk], BK);
            }
            for (var j = 0u; j < TN; j++) {
                let b = coopLoad<mat_b>(&ws[(tn + j * S) * BK + kk], BK);
                for (var i = 0u; i < TM; i++) {
                    acc[i * TN + j] = coopMultiplyAdd(a[i], b, acc[i * TN + j]);
                }
            }
        }
        workgroupBarrier();
    }
    for (var i = 0u; i < TM; i++) {
        for (var j = 0u; j < TN; j++) {
            coopStoreT(acc[i * TN + j], &ys[(tm + i * S) * BN + tn + j * S], BN);
        }
    }
    workgroupBarrier();
    for (var e = tid; e < BM * BN; e += WG) {
        let m = m0 + e / BN;
        let n = n0 + e % BN;
        if (m < P.m && n < P.part_rows) {
            var v = ys[e];
            if (P.has_bias != 0u) {
                v += bias[P.part_row0 + n];
            }
            y[m * P.y_cols + P.part_row0 + n] = v;
        }
    }
}
