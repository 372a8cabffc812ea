// Step 2, the benchmark card: the bundled MT-Bench or uploaded queries with their checklists, what
// they hold and the problems found in them; also the problem list and formats link the responses use.

import { h, mount, $, messagesBeside } from '../lib/dom.js';
import * as db from '../lib/db.js';
import { readUpload, plainError, UploadError } from '../lib/upload.js';
import { state, engine, inOrder, renderAll } from '../page.js';

export async function loadBundledBenchmark() {
  const resp = await fetch('benchmarks/mt-bench/queries.jsonl');
  if (!resp.ok) throw new Error(`cannot load the MT-Bench benchmark (HTTP ${resp.status})`);
  const parsed = await engine.core('parseQueries', 'mt-bench/queries.jsonl', new Uint8Array(await resp.arrayBuffer()));
  state.benchmark = {
    name: 'MT-Bench (80 questions × 2 turns, precomputed checklists)',
    queries: parsed.records,
    problems: parsed.problems,
  };
  await db.put('inputs', state.benchmark, 'benchmark');
}

/** Queries, and a separate checklist file attached and checked by core's Benchmark. */
async function uploadBenchmark(files) {
  let queries = null;
  let checklists = null;
  state.uploadErrors.bench = [];
  try {
    for (const f of files) {
      const bytesIn = await readUpload(f, 'jsonl');
      const text = new TextDecoder().decode(bytesIn.slice(0, 4096));
      if (/"conversation_input"/.test(text)) queries = { name: f.name, bytes: bytesIn };
      else if (/"checklist"/.test(text) && !checklists) checklists = { name: f.name, bytes: bytesIn };
      else if (/"checklist"/.test(text))
        throw new UploadError(`${f.name}: one checklist file at a time (${checklists.name} is the other).`);
      else
        throw new UploadError(
          `${f.name} holds neither queries (lines with "conversation_input") nor checklists (lines with "checklist"); the file formats page shows both.`,
        );
    }
    if (!queries)
      throw new UploadError(
        'Add a queries file too: JSON Lines with "session_id" and "conversation_input" on each line (the file formats page shows one).',
      );
    const parsed = checklists
      ? await engine.core('parseQueriesWithChecklists', queries.name, queries.bytes, checklists.name, checklists.bytes)
      : await engine.core('parseQueries', queries.name, queries.bytes);
    state.benchmark = {
      name: [...files].map((f) => f.name).join(' + '),
      queries: parsed.records,
      problems: parsed.problems,
    };
  } catch (e) {
    state.uploadErrors.bench = [plainError(e)];
    return renderBench();
  }
  await db.put('inputs', state.benchmark, 'benchmark');
  renderAll();
}

/** A link to the formats page (web/formats.html), at `section`. */
export function formatsLink(section) {
  return h(
    'a',
    { href: `web/formats.html#${section}`, target: '_blank', rel: 'noopener', class: 'formats-link' },
    'file formats',
  );
}

export function problemList(problems, limit = 12) {
  if (!problems || problems.length === 0) return null;
  const errors = problems.filter((p) => p.severity === 'error').length;
  return h(
    'details',
    { class: `problems ${errors ? 'has-errors' : ''}`, open: errors > 0 },
    h(
      'summary',
      {},
      `${problems.length} problem${problems.length === 1 ? '' : 's'} (${errors} error${errors === 1 ? '' : 's'})`,
    ),
    h(
      'ul',
      {},
      problems
        .slice(0, limit)
        .map((p) =>
          h(
            'li',
            { class: p.severity },
            `${p.file}${p.line ? `:${p.line}` : ''} — session ${p.session_id}: ${p.message}`,
          ),
        ),
      problems.length > limit ? h('li', {}, `… and ${problems.length - limit} more`) : null,
    ),
  );
}

export function renderBench() {
  const b = state.benchmark;
  const input = h('input', {
    type: 'file',
    multiple: true,
    accept: '.jsonl,.json',
    id: 'bench-files',
    'aria-label': 'Queries and checklist files',
  });
  const upload = inOrder(uploadBenchmark);
  input.addEventListener('change', () => upload([...input.files]));
  const withChecklist = b ? b.queries.filter((q) => q.checklist && q.checklist.length).length : 0;
  const items = b ? b.queries.reduce((n, q) => n + (q.checklist ? q.checklist.length : 0), 0) : 0;
  mount(
    $('#bench'),
    h(
      'div',
      { class: 'row' },
      h(
        'button',
        {
          id: 'load-mtbench',
          onclick: inOrder(async () => {
            await loadBundledBenchmark();
            renderAll();
          }),
        },
        'Use MT-Bench (bundled)',
      ),
      h('label', { class: 'file-label' }, 'or upload queries + checklists (JSON Lines): ', input),
      formatsLink('bench-h'),
    ),
    messagesBeside('bench-errors', state.uploadErrors.bench),
    b
      ? h(
          'p',
          {},
          h('strong', {}, b.name),
          `: ${b.queries.length} queries, ${withChecklist} with checklists, ${items} checklist items.`,
        )
      : h('p', { class: 'hint' }, 'No benchmark loaded.'),
    b ? problemList(b.problems) : null,
  );
}
