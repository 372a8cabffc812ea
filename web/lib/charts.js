// Charts (ECharts, vendored: never from a CDN) and colour scales shared by the result views.
// Tooltips are built as DOM text, never HTML strings.

import * as echarts from '../vendor/echarts.esm.min.js';
import { h } from './dom.js';

let charts = [];

/** Whether this browser asks for less motion (an OS setting): charts are then drawn without animation. */
const calm = () => typeof matchMedia === 'function' && matchMedia('(prefers-reduced-motion: reduce)').matches;

export function chart(el, option) {
  const c = echarts.init(el, null, { renderer: 'canvas' });
  c.setOption(calm() ? { ...option, animation: false } : option);
  charts.push(c);
  return c;
}

/** Hand over the charts drawn so far, to be disposed once their view is off screen; charts drawn
 * from now on start a new list. */
export function takeCharts() {
  const old = charts;
  charts = [];
  return old;
}

/** Charts handed over by a redraw that a newer one overtook: the next completed redraw disposes them. */
export const retiredCharts = [];

addEventListener('resize', () => charts.forEach((c) => c.resize()));

/** A tooltip as DOM: lines of text. */
export function tip(...lines) {
  return h(
    'div',
    { class: 'tip' },
    lines.map((l) => h('div', {}, l)),
  );
}

/** Red (0) → white (0.5) → blue (1). */
export function heat(p) {
  if (p == null || Number.isNaN(p)) return '#f1f5f9';
  const t = Math.max(0, Math.min(1, p));
  const mix = (a, b, u) => Math.round(a + (b - a) * u);
  const [r, g, b] =
    t < 0.5
      ? [mix(239, 248, t * 2), mix(68, 250, t * 2), mix(68, 252, t * 2)]
      : [mix(248, 59, (t - 0.5) * 2), mix(250, 130, (t - 0.5) * 2), mix(252, 246, (t - 0.5) * 2)];
  return `rgb(${r}, ${g}, ${b})`;
}
