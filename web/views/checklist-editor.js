// The item inspector's checklist editor: a query's checklist items to add, remove and reword, written
// here by the loaded judge or pasted from a strong model elsewhere, then saved and regraded. Unsaved
// edits are kept in `ui.drafts` across redraws.

import { h, mount, messageSlot } from '../lib/dom.js';
import { checklistChanges } from '../lib/checklist.js';
import { ui } from './results-state.js';

/** The editor's rows for the items `texts` (a row keeps its text as the user edits it). */
const itemRows = (texts) => texts.map((text) => ({ text }));

/** The unsaved edits of `q`'s checklist: kept ones while they start from its checklist, else none yet. */
export function checklistDraft(q) {
  const kept = ui.drafts.get(q.session_id);
  if (kept && kept.base.length === q.checklist.length && kept.base.every((t, i) => t === q.checklist[i])) return kept;
  const fresh = { base: [...q.checklist], rows: itemRows(q.checklist), reply: '' };
  ui.drafts.set(q.session_id, fresh);
  return fresh;
}

/** The editor of `q`'s checklist; `close()` closes it once its edits are saved. */
export function checklistEditor(q, ctx, close) {
  const draft = checklistDraft(q);
  const { list, redraw } = itemList(draft);
  const { create, reply } = createElsewhere(q, ctx, draft);
  const writeHere = writeOnDevice(q, ctx, draft);
  return h(
    'div',
    { class: 'edit-box' },
    h(
      'p',
      { class: 'hint' },
      'Add, remove or reword items. Saving regrades only the new and reworded items for every model.',
    ),
    list,
    editorButtons(q, ctx, { draft, reply, redraw, close }),
    writeHere,
    create,
  );
}

/** The list of the draft's items, each an input with its remove link, and the function that redraws it. */
function itemList(draft) {
  const { rows } = draft;
  const list = h('ol', { class: 'editor' });
  // Edits land in the draft; a judge that finishes writing after the panel was drawn again fills the
  // editor then shown (`draft.redraw`).
  const redraw = () =>
    mount(
      list,
      rows.map((r, i) =>
        h(
          'li',
          {},
          (() => {
            const inp = h('input', { type: 'text', value: r.text, size: 70, 'aria-label': `item ${i + 1}` });
            inp.addEventListener('input', () => {
              r.text = inp.value;
            });
            return inp;
          })(),
          h(
            'button',
            {
              class: 'link',
              onclick: () => {
                rows.splice(i, 1);
                redraw();
              },
            },
            'remove',
          ),
        ),
      ),
    );
  draft.redraw = redraw;
  redraw();
  return { list, redraw };
}

/** The editor's buttons: add an item, save and regrade (then close), discard the changes. */
function editorButtons(q, ctx, { draft, reply, redraw, close }) {
  const { rows } = draft;
  return h(
    'div',
    { class: 'row' },
    h(
      'button',
      {
        onclick: () => {
          rows.push({ text: '' });
          redraw();
        },
      },
      'Add item',
    ),
    h(
      'button',
      {
        class: 'primary',
        id: 'save-checklist',
        onclick: async (ev) => {
          const button = ev.currentTarget;
          const changes = checklistChanges(
            q.checklist,
            rows.map((r) => r.text),
          );
          // Busy while the judge regrades: what it grades, and no second click meanwhile.
          const responses = ctx.state.responses.reduce(
            (n, r) => n + r.records.filter((x) => x.session_id === q.session_id).length,
            0,
          );
          const items = changes.grade.length;
          button.disabled = true;
          button.textContent = `Regrading ${items} item${items === 1 ? '' : 's'} of ${responses} response${responses === 1 ? '' : 's'}…`;
          const saved = await ctx.regrade(q, changes);
          if (!saved) {
            // A notice says why; the edits stay.
            button.disabled = false;
            button.textContent = 'Save and regrade';
            return;
          }
          ui.drafts.delete(q.session_id);
          close();
        },
      },
      'Save and regrade',
    ),
    h(
      'button',
      {
        id: 'discard-checklist',
        onclick: () => {
          rows.splice(0, rows.length, ...itemRows(q.checklist));
          draft.reply = '';
          reply.value = '';
          redraw();
        },
      },
      'Discard changes',
    ),
  );
}

/**
 * A checklist made by a strong model elsewhere: show RocketEval's creation prompt, parse the reply.
 * Gives the section and its reply box.
 */
function createElsewhere(q, ctx, draft) {
  const promptBox = h('pre', { class: 'text', id: 'creation-prompt', hidden: true });
  const replyProblem = messageSlot('checklist-reply-error');
  const reply = h('textarea', {
    id: 'checklist-reply',
    rows: 5,
    cols: 70,
    placeholder: "Paste the model's reply (a numbered list of questions)",
    'aria-label': 'Checklist reply',
  });
  reply.value = draft.reply;
  reply.addEventListener('input', () => {
    draft.reply = reply.value;
  });
  const create = h(
    'details',
    { class: 'create' },
    h('summary', {}, 'Create the checklist with a strong model elsewhere'),
    h(
      'p',
      { class: 'hint' },
      "Run RocketEval's creation prompt (below) with a strong model of your choice, then paste its reply. Nothing is sent from here.",
    ),
    promptButtons(q, ctx, promptBox),
    promptBox,
    reply,
    replyProblem,
    h(
      'button',
      {
        id: 'use-reply',
        onclick: async () => {
          const items = await ctx.engine.core('parseChecklistReply', reply.value);
          if (!items)
            return replyProblem.say(
              'No numbered questions found in the reply: paste a list such as "1. Does the response …?", one question per line.',
            );
          replyProblem.say(null);
          draft.rows.splice(0, draft.rows.length, ...itemRows(items));
          draft.redraw();
        },
      },
      'Use these questions',
    ),
  );
  return { create, reply };
}

/** The buttons that show RocketEval's creation prompt for `q` (in `promptBox`) and copy it. */
function promptButtons(q, ctx, promptBox) {
  return h(
    'div',
    { class: 'row' },
    h(
      'button',
      {
        id: 'show-creation-prompt',
        onclick: async () => {
          promptBox.textContent = await ctx.engine.core('creationPrompt', q);
          promptBox.hidden = false;
        },
      },
      'Show the prompt',
    ),
    h(
      'button',
      {
        onclick: async () => {
          await navigator.clipboard.writeText(await ctx.engine.core('creationPrompt', q));
          ctx.notice('Creation prompt copied.');
        },
      },
      'Copy it',
    ),
  );
}

/**
 * A checklist written here by the loaded judge: the query never leaves the tab; the items land in
 * the editor above for review before saving.
 */
function writeOnDevice(q, ctx, draft) {
  const judge = ctx.state.judge;
  const writeStatus = h('span', { class: 'hint', id: 'write-checklist-status', 'aria-live': 'polite' });
  const writeProblem = messageSlot('write-checklist-error');
  const policySel = policyMenu(ctx);
  const writeButton = h(
    'button',
    {
      id: 'write-checklist',
      disabled: !judge,
      onclick: async () => {
        writeButton.disabled = true;
        await writeChecklist(q, ctx, draft, { policy: policySel.value, writeStatus, writeProblem });
        writeButton.disabled = !judge;
      },
    },
    'Write it with the loaded judge',
  );
  return h(
    'details',
    { class: 'create' },
    h('summary', {}, 'Write the checklist on this device'),
    h(
      'p',
      { class: 'hint' },
      judge
        ? `${judge.name} writes it from RocketEval's creation prompt in this tab; the query is not sent anywhere. A small judge writes much worse checklists than a strong model (often generic or repeated questions): review every item before saving.`
        : 'Load a judge first (Judge card): it writes the checklist in this tab.',
    ),
    h('div', { class: 'row' }, policySel, writeButton, writeStatus),
    writeProblem,
  );
}

/** The prompt menu: RocketEval's, or seed 002's generation policies (two-step ones ask twice). */
function policyMenu(ctx) {
  const policySel = h(
    'select',
    { id: 'write-checklist-policy', 'aria-label': 'Checklist prompt' },
    h('option', { value: 'rocketeval' }, "RocketEval's creation prompt"),
  );
  ctx.engine.core('creationPolicies').then((names) =>
    mount(
      policySel,
      names.map((n) =>
        h('option', { value: n }, n === 'rocketeval' ? "RocketEval's creation prompt" : `Seed 002: ${n}`),
      ),
    ),
  );
  return policySel;
}

/**
 * The loaded judge writes `q`'s checklist by `policy` into the draft, its progress and problems said
 * beside the button.
 */
async function writeChecklist(q, ctx, draft, { policy, writeStatus, writeProblem }) {
  writeProblem.say(null);
  const stop = ctx.engine.on('generate-token', (m) => {
    writeStatus.textContent = `Writing: ${m.n} tokens…`;
  });
  try {
    const r = await ctx.engine.request('writeChecklist', { query: q, policy });
    if (!r.items) {
      writeStatus.textContent = '';
      const last = r.replies[r.replies.length - 1] || '';
      writeProblem.say(
        `The judge wrote no checklist questions (${r.tokens} tokens; its reply began: "${last.slice(0, 160)}…"). Try another prompt or a larger judge, or use a strong model elsewhere.`,
      );
      return;
    }
    draft.rows.splice(0, draft.rows.length, ...itemRows(r.items));
    draft.redraw();
    writeStatus.textContent = `${r.items.length} questions written in ${r.tokens} tokens: read and edit them above, then save.`;
  } catch (e) {
    writeStatus.textContent = '';
    writeProblem.say(`Could not write the checklist: ${e.message}`);
  } finally {
    stop();
  }
}
