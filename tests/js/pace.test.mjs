// The grading pace (web/lib/pace.js): a moving window of response times, the warm-up left out; the
// time left from the tokens left, replayed on recorded demo runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { Pace } from '../../web/lib/pace.js';

test('nothing is claimed before the first response', () => {
  const p = new Pace();
  assert.equal(p.secsPerResponse(), null);
  assert.equal(p.perMinute(), null);
  assert.equal(p.secondsLeft(10), null);
});

test('the first response alone sets the pace; later ones replace it', () => {
  const p = new Pace(3);
  p.add(30); // warm-up
  assert.equal(p.secsPerResponse(), 30);
  p.add(10);
  assert.equal(p.secsPerResponse(), 10, 'the warm-up is left out once another response is timed');
  assert.equal(p.perMinute(), 6);
  p.add(20);
  p.add(30);
  assert.equal(p.secsPerResponse(), 20);
  p.add(40); // the window keeps the last 3: 20, 30, 40
  assert.equal(p.secsPerResponse(), 30);
  assert.equal(p.secondsLeft(4), 120);
});

test('the time left is the tokens left at the seconds per token measured, the first response left out', () => {
  const p = new Pace();
  p.add(30, 1000); // warm-up: 30 ms a token
  assert.equal(p.secondsLeft(2, 3000), 90, 'the first response alone sets the rate');
  p.add(10, 1000);
  p.add(30, 2000);
  // 40 s for 3000 tokens after the warm-up: the rate whatever the count of responses.
  assert.equal(p.secondsLeft(1, 600), 8);
  assert.equal(p.secondsLeft(7, 600), 8);
  // Without token counts: the pace per response.
  assert.equal(p.secondsLeft(2), 40);
});

/**
 * Recorded demo runs in the tab (scripts/bench-demo.sh --out; tests/fixtures/paces/): each response's
 * tokens and own seconds in the order the run graded them. Replayed, the estimate after each response
 * (from the fourth on) is compared with the time the rest of the recorded run really took.
 */
test('replayed on recorded demo runs, the time left is within ±25% of the real remaining time from the fourth response on', () => {
  const dir = new URL('../fixtures/paces/', import.meta.url);
  const runs = readdirSync(dir).filter((f) => f.endsWith('.json'));
  assert.ok(runs.length > 0, 'a recorded run');
  for (const f of runs) {
    const { responses: rs, judge } = JSON.parse(readFileSync(new URL(f, dir), 'utf8'));
    assert.ok(rs.length >= 10, `${f}: ${rs.length} responses`);
    const p = new Pace();
    const byCount = new Pace();
    let worst = 0;
    let worstByCount = 0;
    for (let k = 0; k < rs.length - 1; k++) {
      p.add(rs[k].seconds, rs[k].tokens);
      byCount.add(rs[k].seconds);
      if (k + 1 < 4) continue;
      const rest = rs.slice(k + 1);
      const real = rest.reduce((s, r) => s + r.seconds, 0);
      const est = p.secondsLeft(
        rest.length,
        rest.reduce((s, r) => s + r.tokens, 0),
      );
      const err = est / real - 1;
      worst = Math.max(worst, Math.abs(err));
      worstByCount = Math.max(worstByCount, Math.abs(byCount.secondsLeft(rest.length) / real - 1));
      assert.ok(
        Math.abs(err) <= 0.25,
        `${f} after ${k + 1} responses: ${est.toFixed(0)} s estimated, ${real.toFixed(0)} s real`,
      );
    }
    console.log(
      `${judge} (${f}): worst error of the time left from the 4th response on ${(worst * 100).toFixed(1)}% by tokens; ${(worstByCount * 100).toFixed(1)}% by a recent average per response`,
    );
  }
});
