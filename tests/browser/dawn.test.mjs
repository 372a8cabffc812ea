// The tab's engine on Dawn under Node (issue #60): the same wasm and WGSL kernels the page runs,
// through the npm package `webgpu` (dawn.node, Chromium's WebGPU implementation), loaded as the engine
// worker loads a judge (web/lib/loading.js). Here Dawn runs on Chromium's SwiftShader (and, run again
// by scripts/test.sh, on Mesa 26's lavapipe), CPU adapters, so this checks that the path works and
// agrees with the CPU engine, never its speed; on a GPU machine
// the same path is measured by scripts/bench/dawn-bench.mjs (scripts/bench-gpu.sh).

import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { dawnEngine, SWIFTSHADER_ICD } from '../../scripts/lib/dawn.mjs';
import { MODELS, parityItem, gradeKey, compareProbabilities } from './harness.mjs';

const MODEL = join(MODELS, 'smollm2-135m.gguf');
// The Vulkan driver under Dawn: Chromium's SwiftShader, or with ROCKETJUDGE_DAWN_DRIVER=lavapipe the
// one VK_ICD_FILENAMES names (scripts/test.sh runs this file again on Mesa 26's lavapipe through
// scripts/lib/coop-lavapipe-run: it offers shader-f16, which SwiftShader does not, so the tab's GPU
// kernels run on f16 tiles there, compiled by Dawn's Tint instead of naga).
const LAVAPIPE = process.env.ROCKETJUDGE_DAWN_DRIVER === 'lavapipe';
const ADAPTER = LAVAPIPE ? /llvmpipe/ : /SwiftShader/;
// SmolLM2 cut to its first block (every tensor type of the model; webgpu.test.mjs runs two in
// Chromium), 5 items of the shortest parity fixture (267 prefix + 354 suffix tokens).
const LAYERS = 1;
const ITEMS = 5;

let dawn;

before(async () => {
  if (LAVAPIPE) {
    assert.ok(
      process.env.VK_ICD_FILENAMES,
      'ROCKETJUDGE_DAWN_DRIVER=lavapipe runs under scripts/lib/coop-lavapipe-run',
    );
  } else {
    assert.ok(
      existsSync(SWIFTSHADER_ICD),
      `Chromium's SwiftShader driver at ${SWIFTSHADER_ICD} (apt package chromium)`,
    );
  }
  dawn = await dawnEngine({ icd: LAVAPIPE ? null : SWIFTSHADER_ICD });
});

test("Dawn under Node gives the wasm engine an adapter, and says what it offers (the page's WebGPU features)", () => {
  assert.equal(dawn.wasm.webgpuAvailable(), true, 'pkg/ is built with the WebGPU backend');
  assert.ok(dawn.adapter, 'Dawn found an adapter');
  assert.equal(dawn.report.present, true);
  assert.match(dawn.report.description, ADAPTER, JSON.stringify(dawn.report));
  // The engine's rule: a CPU rasterizer is software, never "a GPU".
  const facts = dawn.wasm.adapterFacts(dawn.report);
  assert.equal(facts.hardware, false, JSON.stringify(facts));
  console.log(
    `Dawn adapter: ${dawn.report.description} (${dawn.report.vendor}/${dawn.report.architecture}); ` +
      `subgroups: ${dawn.features.includes('subgroups')}, shader-f16: ${dawn.features.includes('shader-f16')}, ` +
      `subgroup matrix: ${dawn.features.some((f) => /subgroup-matrix/.test(f))}`,
  );
});

test("the engine's device asks Dawn for subgroups, which wgpu's web backend does not request", () => {
  // Dawn on SwiftShader and on lavapipe offers them, and its WGSL has the subgroup_id builtins (npm
  // webgpu 0.6.2).
  assert.ok(dawn.features.includes('subgroups'), `Dawn offers subgroups: ${dawn.features.join(', ')}`);
  assert.ok(dawn.gpu.wgslLanguageFeatures.has('subgroup_id'), 'the WGSL language feature subgroup_id');
  assert.equal(dawn.report.subgroups, true, JSON.stringify(dawn.report));
});

test('parity: the WebGPU judge on Dawn, with subgroups and without, agrees with the CPU engine of the same wasm', async () => {
  const { query, response } = parityItem('101_turn1', ITEMS);
  // Dawn says its SwiftShader adapter is a CPU, so the engine picks its software-shaped kernels
  // (subgroups in the norms' and the logits' sums); the GPU kernels, as a GPU gets them, take them in
  // the matrix-vector products and the attention's softmax too.
  const runs = {
    subgroups: { backend: 'webgpu', subgroups: true },
    plain: { backend: 'webgpu', subgroups: false },
    'gpu kernels, subgroups': { backend: 'webgpu', kernels: 'gpu', subgroups: true },
    cpu: { backend: 'cpu' },
  };
  const graded = {};
  for (const [run, options] of Object.entries(runs)) {
    const started = performance.now();
    const judge = await dawn.loadJudge(MODEL, { ...options, precision: 'f32', layers: LAYERS });
    const info = judge.info();
    assert.equal(info.kind, options.backend, info.description);
    if (options.backend === 'webgpu') assert.equal(info.subgroups, options.subgroups, `${run}: ${info.description}`);
    const r = await judge.grade(query, response, response.generator, null);
    judge.free();
    graded[run] = { judgment: r.judgment, description: info.description, s: (performance.now() - started) / 1000 };
  }
  assert.match(graded.subgroups.description, new RegExp(`${ADAPTER.source}.*subgroups`));
  // Where Dawn offers shader-f16, the GPU kernels take f16 workgroup tiles, as on a GPU.
  const f16 = dawn.features.includes('shader-f16');
  assert.equal(
    /f16 workgroup tiles/.test(graded['gpu kernels, subgroups'].description),
    f16,
    graded['gpu kernels, subgroups'].description,
  );
  const want = new Map([[gradeKey(graded.cpu.judgment), graded.cpu.judgment.norm_probability]]);
  for (const run of Object.keys(runs).filter((r) => r !== 'cpu')) {
    const { worst, worstMargin } = compareProbabilities(`Dawn, ${run}`, [graded[run].judgment], want);
    console.log(
      `smollm2-135m (first ${LAYERS} blocks), ${ITEMS} items of 101_turn1: max |Δp(Yes)| Dawn WebGPU (${run}) vs CPU ` +
        `${worst.toExponential(2)}, |Δmargin| ${worstMargin.toExponential(2)}; ${graded[run].description} ` +
        `${graded[run].s.toFixed(1)} s, CPU ${graded.cpu.s.toFixed(1)} s`,
    );
  }
});
