// The query's part of the prompt, kept between its responses, as the tab grades: `JudgeHandle.grade`
// says how many prompt tokens it did not run again (`keptTokens`, which the grading card sums), and a
// response graded after another to the same query gets the grades it gets from scratch, bit for bit.
// The threaded build on 2 Node worker threads (as tests/node/pool.test.mjs starts it) under Node 24,
// SmolLM2-135M int8.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openAsBlob } from 'node:fs';
import { join } from 'node:path';
import { dawnEngine } from '../../scripts/lib/dawn.mjs';
import { loadJudgeFrom } from '../../web/lib/loading.js';
import { MODELS, parityItem } from '../browser/harness.mjs';

const ITEMS = 3;

async function judge(wasm) {
  const blob = await openAsBlob(join(MODELS, 'smollm2-135m.gguf'));
  const options = { precision: 'int8', adapter: null };
  return loadJudgeFrom(wasm, { blob, name: 'smollm2-135m', maxTokens: 4096, options }, 'cpu', () => {});
}

test("a query's second response runs only what follows the query's part, and grades as from scratch", async () => {
  const { wasm } = await dawnEngine({ threads: 2, dawn: false });
  const { query, response: first } = parityItem('101_turn1', ITEMS);
  const second = {
    ...first,
    generator: 'other',
    output: ['You are in second place; the person you overtook is third.'],
  };
  const other = parityItem('149_turn1', ITEMS);

  const shared = await judge(wasm);
  const a = await shared.grade(query, first, first.generator, null);
  const b = await shared.grade(query, second, second.generator, null);
  const c = await shared.grade(other.query, other.response, other.response.generator, null);
  shared.free();
  const alone = await judge(wasm);
  const fresh = await alone.grade(query, second, second.generator, null);
  alone.free();

  assert.equal(a.keptTokens, 0, 'the first response runs its whole prompt');
  assert.ok(
    b.keptTokens > 0 && b.keptTokens < b.prefixTokens,
    `the second keeps the query's part, not the response: ${b.keptTokens} of ${b.prefixTokens}`,
  );
  assert.equal(b.prefixTokens, fresh.prefixTokens);
  assert.equal(fresh.keptTokens, 0);
  assert.equal(c.keptTokens, 0, 'another query keeps nothing');
  assert.deepEqual(b.judgment.norm_probability, fresh.judgment.norm_probability);
  console.log(
    `smollm2-135m: ${b.keptTokens} of ${b.prefixTokens} prefix tokens kept; p(Yes) ` +
      b.judgment.norm_probability.map((p) => p.toFixed(4)).join(', '),
  );
});
