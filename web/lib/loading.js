// Loading a judge into the wasm engine: what the WebGPU adapter says of itself, the GGUF header, and
// the weights read from a Blob. Pure functions of the wasm module they are given, shared by the engine
// worker (web/worker/) and by Node with Dawn's WebGPU (scripts/lib/dawn.mjs), so that what runs under
// Node is the tab's own path.

/**
 * What a WebGPU implementation (`gpu`: `navigator.gpu`, absent where there is none) tells of its
 * adapter, for the engine to judge (`AdapterReport`): whether the API exists, whether it gives an
 * adapter, its names, the fallback flag, `shader-f16`, and whether the engine's device gets
 * `subgroups` (see `askForSubgroups`).
 */
export async function adapterReport(gpu) {
  const api = !!gpu;
  const adapter = api ? await gpu.requestAdapter({ powerPreference: 'high-performance' }).catch(() => null) : null;
  if (!adapter) return { api, present: false };
  const info = adapter.info || {};
  return {
    api,
    present: true,
    vendor: info.vendor || '',
    architecture: info.architecture || '',
    device: info.device || '',
    description: info.description || '',
    fallback: !!(info.isFallbackAdapter || adapter.isFallbackAdapter),
    shaderF16: adapter.features.has('shader-f16'),
    subgroups: askForSubgroups(gpu, adapter),
  };
}

/** The label of the engine's device (the engine's `DEVICE_LABEL`, backend/webgpu/device.rs). */
export const ENGINE_DEVICE = 'rocketjudge';

/**
 * wgpu's web backend requests a device with only the features it maps, and `subgroups` is not one of
 * them: where the adapter offers subgroups and the WGSL compiler has the `subgroup_id` builtins the
 * kernels take, the device wgpu requests for the engine (known by its label) asks for them too, and
 * the report tells the engine it may use them. Elsewhere nothing changes and the kernels reduce in
 * workgroup memory. Returns whether the engine's device will have them.
 */
function askForSubgroups(gpu, adapter) {
  if (!adapter.features.has('subgroups') || !gpu.wgslLanguageFeatures?.has('subgroup_id')) return false;
  const proto = Object.getPrototypeOf(adapter);
  if (!proto.requestDevice.withSubgroups) {
    const requestDevice = proto.requestDevice;
    const withSubgroups = function (descriptor = {}) {
      const wanted = descriptor.label === ENGINE_DEVICE && this.features.has('subgroups');
      const features = [...(descriptor.requiredFeatures ?? [])];
      if (wanted && !features.includes('subgroups')) features.push('subgroups');
      return requestDevice.call(this, wanted ? { ...descriptor, requiredFeatures: features } : descriptor);
    };
    withSubgroups.withSubgroups = true;
    proto.requestDevice = withSubgroups;
  }
  return true;
}

/** Read the GGUF header from a Blob, growing the prefix until it parses. */
export async function readHeader(wasm, blob) {
  let want = 1 << 20;
  for (;;) {
    const prefix = new Uint8Array(await blob.slice(0, Math.min(want, blob.size)).arrayBuffer());
    const needed = wasm.ModelHeader.bytesNeeded(prefix);
    if (needed === 0 || prefix.length >= blob.size || needed <= prefix.length)
      return new wasm.ModelHeader(prefix, blob.size);
    want = needed;
  }
}

/**
 * Load a judge from `{blob, name, maxTokens, debugLayers?, options?}` on `backend`; `progress(done,
 * total)` as its tensors load. `debugLayers` (tests only) keeps the model's first N blocks.
 */
export async function loadJudgeFrom(wasm, { blob, name, maxTokens, debugLayers, options }, backend, progress) {
  const read = async (offset, length) => new Uint8Array(await blob.slice(offset, offset + length).arrayBuffer());
  const header = await readHeader(wasm, blob);
  if (debugLayers) header.keepLayers(debugLayers);
  return wasm.loadJudge(header, name, backend, read, progress, maxTokens, options);
}
