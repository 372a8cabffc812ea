// The educator views (issue #14), tabs of the Results card: explain a score, bias probes, calibration
// with the user's own labels, agreement with a strong judge. The worker computes everything (the engine
// grades, `core` scores, fits and measures); these files render. Text from files is rendered as text.

import { explain } from './explain.js';
import { probes } from './probes.js';
import { calibrate } from './calibrate.js';
import { strong } from './strong.js';

export { responseOf } from './shared.js';

export const EDU_TABS = [
  ['explain', 'Explain a score'],
  ['probes', 'Bias probes'],
  ['calibrate', 'Calibrate'],
  ['strong', 'Strong judge'],
];

/** Each view by its tab's name: (body, ctx, { ui, rerender, settings, judge }). */
export const EDU_VIEWS = { explain, probes, calibrate, strong };
