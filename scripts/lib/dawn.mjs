// The tab's engine under Node: the same wasm and WGSL kernels the page runs (pkg/, built by
// scripts/build-web.sh), on Dawn, the WebGPU implementation inside Chromium, through the npm package
// `webgpu` (its dawn.node). It loads a judge the way the engine worker does (web/lib/loading.js), so
// a test here or a benchmark on a GPU machine measures the tab's path without a browser around it.
//
// Dawn picks its Vulkan driver as the Vulkan loader does: `icd` (a driver's JSON manifest) sets
// VK_ICD_FILENAMES for this process. Without a GPU, Chromium's own SwiftShader (SWIFTSHADER_ICD) is a
// CPU adapter Dawn accepts; the Mesa lavapipe of Debian 12 is refused by Dawn (it lacks
// shaderSampledImageArrayDynamicIndexing). On a GPU machine leave `icd` out: the GPU's driver runs.

import { openAsBlob } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { adapterReport, loadJudgeFrom } from '../../web/lib/loading.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Chromium's SwiftShader Vulkan driver, as Debian's chromium package installs it. */
export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

/**
 * Start the engine on Dawn: `{wasm, gpu, adapter, features, report, loadJudge}`. `adapter` is Dawn's
 * GPUAdapter (null where Dawn finds none), `features` its feature names, `report` what the worker
 * tells the engine of it. `loadJudge(path, {backend, precision, kernels, subgroups, layers, maxTokens})`
 * loads a GGUF file as the worker loads a judge (`subgroups: false` keeps the kernels off subgroup
 * operations where the device has them). Call once per process: the globals it sets are the process's.
 */
export async function dawnEngine({ icd = null, pkg = join(ROOT, 'pkg') } = {}) {
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

  const wasm = await import(join(pkg, 'rocketjudge_wasm.js'));
  await wasm.default({ module_or_path: await readFile(join(pkg, 'rocketjudge_wasm_bg.wasm')) });
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' }).catch(() => null);
  const report = await adapterReport(gpu);
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
      const adapter = wasm.webgpuAvailable() ? report : null;
      const options = { precision, kernels, allowSubgroups: subgroups, adapter };
      return loadJudgeFrom(wasm, { blob, name, maxTokens, debugLayers: layers, options }, backend, () => {});
    },
  };
}
