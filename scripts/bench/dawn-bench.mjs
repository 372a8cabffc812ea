// The tab's engine on a GPU without a browser: the wasm and WGSL kernels of pkg/ on Dawn (npm
// `webgpu`, Chromium's WebGPU implementation) under Node, on the workload `rocketjudge bench` runs,
// so that scripts/bench-gpu.sh sets the tab's path beside native wgpu on the same GPU. Prints one JSON
// object: the adapter and what it offers, prefill tokens/s, seconds per response and decode tokens/s.
// `--backend cpu --threads N`: the tab's CPU engine, the threaded build (pkg-threads/) on a pool of N
// workers as the page starts it (Node worker threads for its Web Workers: scripts/lib/node-workers.mjs),
// int8 kernels as the page's default; scripts/bench-gpu.sh takes its curve on a machine of many cores.
//
//   node scripts/bench/dawn-bench.mjs --model PATH.gguf [--backend webgpu|cpu] [--threads N]
//        [--prefix-tokens 1500] [--items 8] [--suffix-tokens 40] [--repeat 3] [--decode-tokens 64]
//        [--kernels auto|gpu|software] [--precision int8|f32] [--no-subgroups] [--icd VULKAN_DRIVER.json]
//
// Flags of `rocketjudge bench` that do not shape the workload are accepted and ignored, so the same
// arguments serve both. The subgroups the page asks for (web/lib/loading.js) are used where Dawn
// offers them, as `rocketjudge bench` uses them natively; --no-subgroups as there. --icd picks the
// Vulkan driver (e.g. Chromium's SwiftShader, to try the script on a machine with no GPU; see
// scripts/lib/dawn.mjs).

import { parseArgs } from 'node:util';
import { dawnEngine } from '../lib/dawn.mjs';

const { values: a } = parseArgs({
  strict: false,
  options: {
    model: { type: 'string' },
    backend: { type: 'string', default: 'webgpu' },
    'prefix-tokens': { type: 'string', default: '1500' },
    items: { type: 'string', default: '8' },
    'suffix-tokens': { type: 'string', default: '40' },
    repeat: { type: 'string', default: '3' },
    'decode-tokens': { type: 'string', default: '64' },
    kernels: { type: 'string', default: 'auto' },
    precision: { type: 'string', default: 'int8' },
    threads: { type: 'string' },
    'no-subgroups': { type: 'boolean', default: false },
    icd: { type: 'string' },
  },
});
if (typeof a.model !== 'string') throw new Error('--model PATH.gguf is required');
const n = (k) => Number(a[k]);
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];

const threads = a.threads === undefined ? null : n('threads');
if (threads !== null && !(Number.isInteger(threads) && threads >= 1))
  throw new Error(`--threads ${a.threads}: a count of 1 or more`);
// The CPU engine needs no Dawn (nor the `webgpu` package): a machine without it still gets the curve.
const dawn = await dawnEngine({ icd: a.icd ?? null, threads, dawn: a.backend !== 'cpu' });
const loadStarted = performance.now();
const judge = await dawn.loadJudge(a.model, {
  backend: a.backend,
  kernels: a.kernels,
  precision: a.precision,
  subgroups: !a['no-subgroups'],
});
const loadS = (performance.now() - loadStarted) / 1000;
const w = judge.benchWorkload(n('prefix-tokens'), n('items'), n('suffix-tokens'));
// One warm-up round (pipelines compiled, buffers made), then the timed ones, as `rocketjudge bench`.
const rounds = [];
for (let r = 0; r <= n('repeat'); r++) {
  const t0 = performance.now();
  await judge.benchPrefix(w.prefix);
  const t1 = performance.now();
  await judge.benchItems(w.prefix.length, w.suffixes);
  const t2 = performance.now();
  if (r > 0) rounds.push({ prefix: (t1 - t0) / 1000, items: (t2 - t1) / 1000 });
}
const decode = n('decode-tokens');
const t0 = performance.now();
if (decode > 0) await judge.benchDecode(w.prefix.length, w.suffixes[0][0], decode);
const decodeS = (performance.now() - t0) / 1000;
const prefix = median(rounds.map((r) => r.prefix));
const items = median(rounds.map((r) => r.items));
const info = judge.info();
const int8Cpu = info.kind === 'cpu' && a.precision === 'int8';
judge.free();
console.log(
  JSON.stringify(
    {
      engine: threads
        ? `rocketjudge wasm (pkg-threads/, ${threads} thread${threads > 1 ? 's: a pool of Node worker threads' : ''}) under Node`
        : 'rocketjudge wasm (pkg/) on Dawn under Node',
      backend: info.description,
      threads: threads ?? 1,
      // The kernel that ran (the race's winner, as the benchmark page reports it) and the race.
      cpu_kernels: int8Cpu ? dawn.wasm.cpuKernels() : null,
      cpu_kernel_race: int8Cpu ? dawn.wasm.cpuKernelRace() : null,
      adapter: dawn.report,
      features: dawn.features,
      node: process.version,
      workload: {
        prefix_tokens: w.prefix.length,
        items: w.suffixes.length,
        suffix_tokens: w.suffixes.reduce((s, x) => s + x.length, 0) / w.suffixes.length,
        repeat: rounds.length,
      },
      load_s: loadS,
      prefill_tokens_per_s: w.prefix.length / prefix,
      items_s: items,
      seconds_per_response: prefix + items,
      decode_tokens_per_s: decode > 0 ? decode / decodeS : null,
    },
    null,
    2,
  ),
);
// A pool's workers never return; Node ends here rather than wait on them.
process.exit(0);
