// The Results card's decoding controls (beside the leaderboard's method): how item probabilities
// become scores, and for sampled decodings their number of samples, temperature and seed.

import { h } from '../lib/dom.js';
import { ui } from './results-state.js';

const DECODINGS = {
  expected: ['Expected p(Yes) (exact)', null],
  greedy: ['Greedy (Yes/No per item)', { method: 'greedy' }],
  sample: ['N samples at temperature T', { method: 'sample', samples: 10, temperature: 1, seed: 0 }],
  majority: ['Majority of N samples (exact)', { method: 'majority', samples: 5, temperature: 1 }],
  median: ['Median of N samples (exact)', { method: 'median', samples: 5, temperature: 1 }],
};

/**
 * The decoding menu, and for sampled decodings their number of samples, temperature and (drawn ones)
 * seed (core checks them).
 */
export function decodingControls(rerender) {
  const chosen = ui.decoding ? ui.decoding.method : 'expected';
  const menu = h(
    'select',
    {
      id: 'rank-decoding',
      'aria-label': 'Decoding',
      title:
        'How each answer distribution becomes a number: the exact expectation, the most likely answer, the mean of N answers sampled at temperature T, or (seed 003) the most frequent or the median of N such answers, in exact expectation',
    },
    Object.entries(DECODINGS).map(([v, [label]]) => h('option', { value: v, selected: chosen === v }, label)),
  );
  menu.addEventListener('change', () => {
    ui.decoding = DECODINGS[menu.value][1];
    rerender();
  });
  if (!ui.decoding?.samples) return [h('label', {}, 'Decoding ', menu)];
  const max = chosen === 'majority' ? { max: 10 } : {};
  return [
    h('label', {}, 'Decoding ', menu),
    numberControl('samples', 'N', { min: 1, step: 1, ...max }, rerender),
    numberControl('temperature', 'T', { min: 0, step: 'any' }, rerender),
    chosen === 'sample' ? numberControl('seed', 'seed', { min: 0, step: 1 }, rerender) : null,
  ];
}

/** A labelled number input for the decoding's `field`; a valid change is applied and redrawn. */
function numberControl(field, label, attrs, rerender) {
  const input = h('input', {
    type: 'number',
    id: `decoding-${field}`,
    'aria-label': label,
    size: 5,
    value: ui.decoding[field],
    ...attrs,
  });
  input.addEventListener('change', () => {
    // A value core would refuse is not applied (every view would show the error instead of results).
    const v = Number(input.value);
    const ok =
      input.value !== '' &&
      (field === 'temperature'
        ? v > 0 && Number.isFinite(v)
        : Number.isInteger(v) && v >= (field === 'samples' ? 1 : 0));
    input.setCustomValidity(
      ok
        ? ''
        : field === 'temperature'
          ? 'a temperature above 0'
          : field === 'samples'
            ? 'a whole number of samples, at least 1'
            : 'a whole number, 0 or more',
    );
    if (!input.reportValidity()) return;
    ui.decoding = { ...ui.decoding, [field]: v };
    rerender();
  });
  return h('label', {}, `${label} `, input);
}
