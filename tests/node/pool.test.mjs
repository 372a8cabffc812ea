// The tab's threaded engine without a browser (scripts/lib/node-workers.mjs): pkg-threads/ on a pool
// of Node worker threads standing in for the page's Web Workers, the path on which
// scripts/bench/dawn-bench.mjs --backend cpu --threads N takes the tab's thread curve on a machine of
// many cores (scripts/bench-gpu.sh). It must start the pool the page starts and grade as the page does.
// Run by Node 24 (scripts/test.sh: fetch_node), whose V8 ships relaxed SIMD as Chromium's does.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openAsBlob } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { dawnEngine } from '../../scripts/lib/dawn.mjs';
import { loadJudgeFrom } from '../../web/lib/loading.js';
import { MODELS, ROOT, gradeKey, parityItem } from '../browser/harness.mjs';

const MODEL = join(MODELS, 'smollm2-135m.gguf');
const ITEMS = 5;

/** SmolLM2's int8 grades of 5 items of the shortest parity fixture, on `wasm`'s CPU engine. */
async function grade(wasm) {
  const { query, response } = parityItem('101_turn1', ITEMS);
  const blob = await openAsBlob(MODEL);
  const options = { precision: 'int8', adapter: null };
  const judge = await loadJudgeFrom(wasm, { blob, name: 'smollm2-135m', maxTokens: 4096, options }, 'cpu', () => {});
  const description = judge.info().description;
  const { judgment } = await judge.grade(query, response, response.generator, null);
  judge.free();
  return { judgment, description };
}

test('the threaded build on a pool of 2 Node worker threads grades as the single-threaded build, bit for bit', async () => {
  const pool = await dawnEngine({ threads: 2, dawn: false });
  const threaded = await grade(pool.wasm);
  assert.match(threaded.description, /^cpu \(2 threads, int8 wasm relaxed-simd/, threaded.description);

  const single = await import(join(ROOT, 'pkg/rocketjudge_wasm.js'));
  await single.default({ module_or_path: await readFile(join(ROOT, 'pkg/rocketjudge_wasm_bg.wasm')) });
  const one = await grade(single);
  assert.match(one.description, /^cpu \(1 thread, int8 wasm simd128/, one.description);

  assert.equal(gradeKey(threaded.judgment), gradeKey(one.judgment));
  assert.equal(threaded.judgment.norm_probability.length, ITEMS);
  // The int8 products are exact integer sums on either kernel, the rest the same float steps in the
  // same order whatever the split: the same bits.
  assert.deepEqual(threaded.judgment.norm_probability, one.judgment.norm_probability);
  console.log(
    `smollm2-135m, ${ITEMS} items: ${threaded.description} and ${one.description} give the same p(Yes): ` +
      threaded.judgment.norm_probability.map((p) => p.toFixed(4)).join(', '),
  );
});
