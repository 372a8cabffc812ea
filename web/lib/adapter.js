// Telling a GPU from a software WebGPU adapter, and naming it.

/**
 * Whether a WebGPU adapter is software (a CPU rasterizer such as SwiftShader or llvmpipe): it runs
 * WebGPU at a small fraction of a GPU's speed — slower than the CPU engine itself.
 */
export function isSoftwareAdapter(adapter) {
  const info = adapter.info || {};
  if (info.isFallbackAdapter || adapter.isFallbackAdapter) return true;
  const text = [info.vendor, info.architecture, info.device, info.description].filter(Boolean).join(' ');
  return /swiftshader|llvmpipe|lavapipe|softpipe|software|microsoft basic render/i.test(text);
}

/** What the browser tells of an adapter (it may withhold the description), or `fallback`. */
export function adapterName(adapter, fallback = 'WebGPU adapter') {
  const info = adapter.info || {};
  return [info.vendor, info.architecture, info.description].filter(Boolean).join(' ') || fallback;
}

/**
 * What WebGPU this browser offers: `{available, hardware, name, f16}` (`hardware` only for a real GPU),
 * or `{available: false, why}`.
 */
export async function detectGpu() {
  if (!('gpu' in navigator))
    return { available: false, hardware: false, why: 'navigator.gpu is missing (no WebGPU in this browser)' };
  try {
    const a = await navigator.gpu.requestAdapter({ powerPreference: 'high-performance' });
    if (!a) return { available: false, hardware: false, why: 'no WebGPU adapter' };
    return {
      available: true,
      hardware: !isSoftwareAdapter(a),
      name: adapterName(a),
      f16: a.features.has('shader-f16'),
    };
  } catch (e) {
    return { available: false, hardware: false, why: e.message };
  }
}
