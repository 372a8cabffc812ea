// Telling a GPU from a software WebGPU adapter.

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
