// Results → Evaluation types, the other evaluation designs (issues #13 and #30, seeds 000–004): pairwise
// comparisons in both orders (every two models, or each against a reference), Direct scores at an
// instruction level or by perplexity, with the query's checklist in the prompt always, never or where
// the judge is unsure, and scores or pair verdicts from the judge's written reasoning (chain of
// thought, N replies aggregated). The worker runs the engine and stores each record as it is made; core
// ranks them with the leaderboard's method and decoding. These files render; text from files is
// rendered as text.

import { h, mount } from '../../lib/dom.js';
import { designOf, paperForm } from './choices.js';
import { designForm } from './form.js';
import { runButtons } from './run.js';
import { designResult } from './result.js';

export const DESIGN_TABS = [['designs', 'Evaluation types']];

/**
 * The form's state, kept in `ui.designForm` (made with core's defaults the first time); its reference
 * a loaded model.
 */
function formState(ui, models, protocols, defaults) {
  const u = (ui.designForm ||= {
    type: 'pairwise',
    reference: models[0] || '',
    instruction: defaults.instruction,
    scale: defaults.scale,
    checklist: defaults.checklist,
    k: '',
    orders: defaults.pairOrders,
    referenceAnswer: defaults.reference,
    rubric: '',
    reasoned: paperForm(protocols[0]),
  });
  if (!models.includes(u.reference)) u.reference = models[0] || '';
  return u;
}

export const DESIGN_VIEWS = {
  /** Choose a design, run it with the loaded judge, and rank its records with every aggregation. */
  async designs(body, ctx, { ui, rerender, settings: leaderboard, judge }) {
    const models = ctx.state.responses.map((r) => r.model);
    const protocols = (ui.reasonedProtocols ||= await ctx.engine.core('reasonedProtocols'));
    const choices = (ui.designChoices ||= await ctx.engine.core('designChoices'));
    const u = formState(ui, models, protocols, choices.defaults);
    const name = ctx.state.judge ? ctx.state.judge.name : judge;
    const design = designOf(u, choices);
    const settings = design.type === 'pairwise' ? { ...leaderboard, pairOrders: u.orders } : leaderboard;
    const form = designForm(ctx, { ui, u, models, protocols, choices, design, rerender });
    const buttons = runButtons(ctx, { ui, rerender, design, protocols });
    const intro = h(
      'p',
      { class: 'hint' },
      "Grade the loaded responses another way and rank them with the leaderboard's method and decoding. Pairwise comparisons run in both orders, one battle from their mean unless you choose one per order (the judge's position bias is reported); every comparison and score is stored as it is made, so a rerun continues where it stopped.",
    );
    if (!name) return mount(body, intro, form, buttons, h('p', { class: 'hint' }, 'Load a judge to run a design.'));
    let v;
    try {
      v = await ctx.engine.request('designView', {
        judge: name,
        design,
        settings,
        ...(ui.decoding ? { decoding: ui.decoding } : {}),
      });
    } catch (e) {
      return mount(body, intro, form, buttons, h('p', { class: 'notice error' }, e.message));
    }
    mount(body, intro, form, buttons, await designResult(v, ctx, { name, settings, decoding: ui.decoding, u }));
  },
};
