// The Results card's shell: the tab list, and each tab's view drawn out of sight and then swapped in
// for the one on screen (the views themselves are in the files beside this one).

import { h, mount } from '../lib/dom.js';
import { takeCharts, retiredCharts } from '../lib/charts.js';
import { EDU_TABS, EDU_VIEWS } from './educator/index.js';
import { DESIGN_TABS, DESIGN_VIEWS } from './designs/index.js';
import { ui } from './results-state.js';
import { leaderboard } from './leaderboard.js';
import { categories } from './categories.js';
import { distributions } from './distributions.js';
import { heatmap } from './heatmap.js';
import { inspector } from './inspector.js';
import { reference } from './reference.js';
import { exportView } from './export.js';

const TABS = [
  ['leaderboard', 'Leaderboard'],
  ['categories', 'Per category'],
  ['distributions', 'Score distributions'],
  ['heatmap', 'Win rates'],
  ['inspector', 'Item inspector'],
  ...EDU_TABS,
  ...DESIGN_TABS,
  ['reference', 'Compare to a reference'],
  ['export', 'Export'],
];

export async function renderResults(el, ctx) {
  if (!el) return;
  const oldCharts = takeCharts();
  // Redraws can overlap (a tab clicked while the worker computes): the newest one wins, older ones
  // give their work up.
  const generation = (el.renderGeneration = (el.renderGeneration || 0) + 1);
  el.querySelectorAll(':scope > .tab-body.staging').forEach((b) => b.remove());
  const tabs = tabList(el, ctx);
  const body = h('div', { class: 'tab-body', role: 'tabpanel' });
  // The view on screen stays until the new one is drawn: the new one is drawn out of sight beside it
  // (laid out, so that its charts measure their box) and then takes its place, so a redraw (a new
  // tab, the end of a run) never leaves the card blank while the worker computes.
  const shown = el.querySelector(':scope > .tab-body:not(.staging)');
  const focused = el.contains(document.activeElement) && document.activeElement.id ? document.activeElement.id : null;
  if (shown) {
    // The outgoing view gives up its ids (the new one carries them) and takes no more input.
    shown.querySelectorAll('[id]').forEach((e) => e.removeAttribute('id'));
    shown.inert = true;
    body.classList.add('staging');
    el.append(body);
  } else {
    mount(el, tabs, body);
  }
  try {
    await drawView(body, ctx);
  } finally {
    if (generation !== el.renderGeneration) {
      // (A body that is on screen stays there until the newer view replaces it.)
      if (body.classList.contains('staging')) body.remove();
      retiredCharts.push(...oldCharts);
    } else {
      body.classList.remove('staging');
      mount(el, tabs, body);
      // Keyboard focus stays on the control it was on (a tab, a menu), now the new view's.
      if (focused) document.getElementById(focused)?.focus();
      [...oldCharts, ...retiredCharts.splice(0)].forEach((c) => c.dispose());
    }
  }
}

/** The tab list: a tab click selects its view and redraws the card. */
function tabList(el, ctx) {
  return h(
    'div',
    { class: 'tabs', role: 'tablist' },
    TABS.map(([id, label]) =>
      h(
        'button',
        {
          role: 'tab',
          id: `tab-${id}`,
          'aria-selected': ui.tab === id ? 'true' : 'false',
          class: ui.tab === id ? 'active' : '',
          onclick: () => {
            ui.tab = id;
            renderResults(el, ctx);
          },
        },
        label,
      ),
    ),
  );
}

async function drawView(body, ctx) {
  // The other evaluation designs need no checklist grades, only a judge.
  const design = ui.tab in DESIGN_VIEWS;
  if (!ctx.graded.length && !design) {
    mount(
      body,
      h(
        'p',
        { class: 'hint', id: 'results-empty' },
        ctx.state.grading?.running
          ? 'Grading has started: the live leaderboard is in step 4 above while the run goes on; these views are drawn when it is paused or ends.'
          : 'No grades yet: load a judge and grade some responses (or try another evaluation type).',
      ),
    );
    return;
  }
  const judge = ctx.judge ?? ctx.state.judge?.name;
  try {
    if (!ui.settings) ({ settings: ui.settings, methods: ui.methods } = await ctx.engine.request('rankDefaults'));
    // A view redraws the card that holds its body (none once another view has replaced it).
    await VIEWS[ui.tab](body, ctx, judge, () => renderResults(body.parentElement, ctx));
  } catch (e) {
    mount(body, h('p', { class: 'notice error' }, e.message));
  }
}

// The educator and design views get the shared selection (`ui`), a way to redraw, and the ranking settings.
// (The results element is taken now: by the time an asynchronous step redraws, `body` may have been
// replaced by another view's.)
const EDU = Object.fromEntries(
  Object.entries({ ...EDU_VIEWS, ...DESIGN_VIEWS }).map(([name, fn]) => [
    name,
    (body, ctx, judge) => {
      const el = body.parentElement;
      return fn(body, ctx, { ui, judge, settings: ui.settings, rerender: () => renderResults(el, ctx) });
    },
  ]),
);

/** Each tab's view: `(body, ctx, judge, rerender)`, drawing into `body`. */
const VIEWS = {
  ...EDU,
  leaderboard,
  categories,
  distributions,
  heatmap,
  inspector,
  reference,
  export: exportView,
};
