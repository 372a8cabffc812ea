// The grading pace (web/lib/pace.js): a moving window of response times, the warm-up left out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
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
