// Models in this browser: opening one (from this browser's cache when its stored hash is the
// expected one, else downloaded and checked), its GGUF header, whether it fits the CPU engine, and
// the `cachedModels` and `removeModel` requests.

import { fetchModel, openCachedModel, removeCachedModel, cachedModels } from '../lib/modelstore.js';
import { engine, post } from './engine.js';
import { readHeader } from '../lib/loading.js';

/**
 * The CPU engine keeps the (quantized) weights in the module's memory, which 32-bit WebAssembly caps
 * at 4 GiB; activations, the KV cache and scratch need the rest. The WebGPU backend streams weights to
 * the GPU one tensor at a time and refuses, at load, a model larger than the device allows.
 */
const CPU_MODEL_LIMIT = 3 * 2 ** 30;

/** Refuse a model of `size` bytes that the CPU engine cannot hold, before it is downloaded. */
export function checkFits(size, backend) {
  if (backend === 'cpu' && size > CPU_MODEL_LIMIT) {
    const gib = (size / 2 ** 30).toFixed(1);
    const other = 'gpu' in navigator ? '' : ' or a browser with WebGPU';
    throw new Error(
      `this model (${gib} GiB) is too large for the CPU engine in a browser tab: 32-bit WebAssembly addresses at ` +
        `most 4 GiB, and the weights may take at most ${CPU_MODEL_LIMIT / 2 ** 30} GiB of it. Choose a smaller model${other}.`,
    );
  }
}

/**
 * A manifest or URL model ({key, urls, sha256, size}): from this browser's cache when its stored hash
 * is the expected one, else downloaded (`download` progress) and checked; `fits(size)` refuses it first.
 */
export async function openModel(source, fits) {
  const progress = (done, total) => post({ type: 'download', done, total });
  const cached = await openCachedModel(source.key, source.sha256);
  if (cached) return cached;
  const blob = await fetchModel(source, engine.wasm, progress, fits);
  if (!source.sha256) {
    // No hash to check: a body cut short by a server that announced no length would look whole.
    // The GGUF header says where the last tensor ends; a file that ends before it is not kept.
    try {
      await readHeader(engine.wasm, blob);
    } catch (e) {
      await removeCachedModel(source.key);
      throw new Error(
        `the download is not a whole GGUF file (${blob.size} bytes arrived: ${e.message || e}); it was discarded`,
      );
    }
  }
  return blob;
}

export const handlers = {
  async cachedModels() {
    return cachedModels();
  },

  async removeModel({ key }) {
    await removeCachedModel(key);
    return true;
  },
};
