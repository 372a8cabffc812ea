// The benchmark page's run on the loaded judge (web/bench.js). Request: `bench`.

import { engine, post } from './engine.js';
import { current, loadedJudge } from './judge.js';

export const handlers = {
  /**
   * A short warm-up and `repeat` timed rounds of the prefix step and the item step, then
   * `decodeTokens` generated on top of the prefix. Returns the workload (the same token ids go to
   * wllama), the times in ms and the memory in use.
   */
  async bench({ prefixTokens, items, suffixTokens, repeat, decodeTokens = 64 }) {
    const judge = loadedJudge();
    const { wasm, plan } = engine;
    const w = judge.benchWorkload(prefixTokens, items, suffixTokens);
    const rounds = [];
    // Round 0 warms up on a short piece of the workload (a full one would double a slow run).
    const warm = { prefix: w.prefix.slice(0, 64), suffixes: w.suffixes.slice(0, 1) };
    for (let r = 0; r <= repeat; r++) {
      post({ type: 'bench-progress', engine: 'rocketjudge', round: r, of: repeat });
      const { prefix, suffixes } = r === 0 ? warm : w;
      const t0 = performance.now();
      await judge.benchPrefix(prefix);
      const t1 = performance.now();
      const pYes = await judge.benchItems(prefix.length, suffixes);
      const t2 = performance.now();
      if (r > 0) rounds.push({ prefixMs: t1 - t0, itemsMs: t2 - t1, pYes });
    }
    // Generation on top of the last round's prefix (its items stored nothing), greedy, as `generate`.
    const t0 = performance.now();
    if (decodeTokens > 0) await judge.benchDecode(w.prefix.length, w.suffixes[0][0], decodeTokens);
    const decodeMs = performance.now() - t0;
    const { device, backend, backendKind } = current.info;
    const cpu = backendKind === 'cpu';
    return {
      workload: w,
      rounds,
      decodeTokens,
      decodeMs,
      backend,
      threads: plan.threads,
      kernels: cpu ? (device.precision === 'int8' ? wasm.cpuKernels() : device.kernels) : null,
      kernelRace: cpu ? wasm.cpuKernelRace() : null,
      wasmMemoryBytes: wasm.wasmMemoryBytes(),
      jsHeapBytes: self.performance?.memory?.usedJSHeapSize ?? null,
    };
  },
};
