// The tab's engine under Node: the same wasm and WGSL kernels the page runs (pkg/, built by
// scripts/build-web.sh), on Dawn, the WebGPU implementation inside Chromium, through the npm package
// `webgpu` (its dawn.node). It loads a judge the way the engine worker does (web/lib/loading.js), so
// a test here or a benchmark on a GPU machine measures the tab's path without a browser around it.
//
// Dawn picks its Vulkan driver as the Vulkan loader does: `icd` (a driver's JSON manifest) sets
// VK_ICD_FILENAMES for this process. Without a GPU, Chromium's own SwiftShader (SWIFTSHADER_ICD) is a
// CPU adapter Dawn accepts; the Mesa lavapipe of Debian 12 is refused by Dawn (it lacks
// shaderSampledImageArrayDynamicIndexing). On a GPU machine leave `icd` out: the GPU's driver runs.

import { openAsBlob, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { adapterReport, loadJudgeFrom } from '../../web/lib/loading.js';
import { choosePlan, hasRelaxedSimd } from '../../web/worker/engine.js';
import { installWorkers } from './node-workers.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Chromium's SwiftShader Vulkan driver, as Debian's chromium package installs it. */
export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

/** Dawn as the page's `navigator.gpu`, on the Vulkan driver `icd` names (else the loader's choice). */
async function installDawn(icd) {
  if (icd) process.env.VK_ICD_FILENAMES = icd;
  // Dawn's Vulkan wants a runtime directory; a test runner as root may have none.
  process.env.XDG_RUNTIME_DIR ??= '/tmp';
  const { create, globals } = await import('webgpu');
  // The WebGPU classes (the glue tests `instanceof GPUValidationError`), navigator.gpu, and the global
  // scope wgpu's web backend looks for (a Window or a WorkerGlobalScope) before it reads navigator.gpu.
  Object.assign(globalThis, globals);
  const gpu = create([]);
  if (globalThis.navigator) Object.defineProperty(globalThis.navigator, 'gpu', { value: gpu, configurable: true });
  else Object.defineProperty(globalThis, 'navigator', { value: { gpu }, configurable: true });
  globalThis.WorkerGlobalScope ??= class WorkerGlobalScope {};
  return gpu;
}

/**
 * The threaded build (pkg-threads/) started as the page starts it for `threads`: one thread runs it
 * without a pool, more start a pool of that many workers (Node worker threads standing in for Web
 * Workers, node-workers.mjs). Node is always "cross-origin isolated" (it shares memory between
 * threads). It needs a V8 that ships relaxed SIMD, as Chromium's has since 114: Node 22 or later.
 * Node 20's V8 (11.3) has it only behind --experimental-wasm-relaxed-simd, and there the int8
 * kernels gave different grades from run to run, even on one thread (SmolLM2, 2026-12-06; Node 24's
 * gave pkg/'s bits on 1 and 2 threads). Where it lacks it, the page would fall back to pkg/ on one
 * thread, which a thread curve must not measure: that is an error here.
 */
async function threadedWasm(threads) {
  const plan = choosePlan(threads, { isolated: true, relaxedSimd: hasRelaxedSimd() });
  if (plan.dir !== 'pkg-threads') {
    throw new Error(
      `the threaded engine cannot run in this Node (${process.version}): ${plan.why}; it needs Node 22 or later (scripts/lib/setup.sh fetch_node)`,
    );
  }
  const pkg = join(ROOT, 'pkg-threads');
  const snippets = join(pkg, 'snippets');
  const rayon = readdirSync(snippets).find((d) => d.startsWith('wasm-bindgen-rayon-'));
  if (!rayon)
    throw new Error(`no wasm-bindgen-rayon snippet in ${snippets} (scripts/build-web.sh builds pkg-threads/)`);
  const started = installWorkers(pathToFileURL(join(snippets, rayon, 'src/workerHelpers.no-bundler.js')).href);
  const wasm = await import(join(pkg, 'rocketjudge_wasm.js'));
  await wasm.default({ module_or_path: await readFile(join(pkg, 'rocketjudge_wasm_bg.wasm')) });
  if (plan.threads > 1) await wasm.initThreadPool(plan.threads);
  started();
  return wasm;
}

/**
 * Start the engine on Dawn: `{wasm, gpu, adapter, features, report, loadJudge}`. `adapter` is Dawn's
 * GPUAdapter (null where Dawn finds none), `features` its feature names, `report` what the worker
 * tells the engine of it. `loadJudge(path, {backend, precision, kernels, subgroups, layers, maxTokens})`
 * loads a GGUF file as the worker loads a judge (`subgroups: false` keeps the kernels off subgroup
 * operations where the device has them). `threads` (a count) runs the threaded build on that many
 * threads, as the page does where it is cross-origin isolated; without it, pkg/ on this thread.
 * `dawn: false` leaves Dawn out (the CPU engine alone: no `webgpu` package needed, `adapter` null).
 * Call once per process: the globals it sets are the process's.
 */
export async function dawnEngine({ icd = null, pkg = join(ROOT, 'pkg'), threads = null, dawn = true } = {}) {
  const gpu = dawn ? await installDawn(icd) : null;
  let wasm;
  if (threads) {
    wasm = await threadedWasm(threads);
  } else {
    wasm = await import(join(pkg, 'rocketjudge_wasm.js'));
    await wasm.default({ module_or_path: await readFile(join(pkg, 'rocketjudge_wasm_bg.wasm')) });
  }
  const adapter = gpu && (await gpu.requestAdapter({ powerPreference: 'high-performance' }).catch(() => null));
  const report = gpu && (await adapterReport(gpu));
  return {
    wasm,
    gpu,
    adapter,
    features: adapter ? [...adapter.features].sort() : [],
    report,
    async loadJudge(
      path,
      {
        backend = 'webgpu',
        precision = 'f32',
        kernels = 'auto',
        subgroups = true,
        layers = null,
        maxTokens = 4096,
      } = {},
    ) {
      const blob = await openAsBlob(path);
      const name = basename(path, '.gguf');
      const adapter = report && wasm.webgpuAvailable() ? report : null;
      const options = { precision, kernels, allowSubgroups: subgroups, adapter };
      return loadJudgeFrom(wasm, { blob, name, maxTokens, debugLayers: layers, options }, backend, () => {});
    },
  };
}
