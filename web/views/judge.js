// Step 1, the judge card: choose a judge (the manifest's, a GGUF file or a URL), its backend and the
// CPU engine's precision and threads, load it with its download's progress, and the models cached here.

import { h, mount, $, bytes, messagesBeside } from '../lib/dom.js';
import * as db from '../lib/db.js';
import { wantedThreads, saveThreads } from '../lib/threads.js';
import { modelSource, splitHash, recommendedModel as recommendedIn } from '../lib/manifest.js';
import { state, engine, notice, throttle, renderAll, runsOn, kernelWords } from '../page.js';
import { paceKey } from './grade.js';

/** The manifest's recommended judge for this device (its `role`): the 1.5B where it keeps pace (a
 * hardware GPU, or the threaded CPU engine with relaxed SIMD), else the 0.5B. */
function recommendedModel() {
  const e = state.engine;
  const fastCpu = !!e && e.threads >= 2 && /relaxed-simd/.test(e.cpuKernels || '');
  return recommendedIn(state.manifest, !!(state.gpu && state.gpu.hardware) || fastCpu);
}

/**
 * The judge card's controls, made the first time the card is drawn and kept from then on: a redraw
 * (a download's progress, an upload, a failed load) never replaces the model, backend or precision
 * chosen, a file picked, a URL half typed, or the control the user is typing in. What changes is
 * drawn in the card's live parts between them (`about`, `progress`).
 */
let judgeCard = null;

function judgeControls() {
  if (judgeCard) return judgeCard;
  // The choice this browser kept (boot), else the model recommended here.
  const select = modelSelect(state.selectedModel || recommendedModel());
  const { fileInput, urlInput } = sourceInputs();
  const { backendSel, precisionSel } = engineSelects();
  const button = h('button', {
    id: 'load-judge',
    class: 'primary',
    onclick: () => loadJudge(select.value, fileInput.files[0], urlInput.value, backendSel.value, precisionSel.value),
  });
  select.addEventListener('change', () => {
    state.judgeError = null; // about the previous choice
    fileInput.hidden = select.value !== '__file';
    urlInput.hidden = select.value !== '__url';
    renderJudge();
  });
  judgeCard = { select, button, about: h('div'), progress: h('div') };
  mount(
    $('#judge'),
    h('div', { class: 'row' }, select, fileInput, urlInput, backendSel, precisionSel, button),
    judgeCard.about,
    renderThreads(),
    judgeCard.progress,
    h('details', { class: 'cached' }, h('summary', {}, 'Cached models'), h('div', { id: 'cached-list' }, '…')),
  );
  return judgeCard;
}

/**
 * The model list: the manifest's judges (`chosen` selected), the one recommended on this device in a
 * group of its own, then a file or a URL. Each judge by its short name and size, so that the closed
 * menu shows it whole on a phone; its full name, quantization and role are said below the menu.
 */
function modelSelect(chosen) {
  const option = (m) =>
    h('option', { value: m.name, selected: m.name === chosen }, `${shortName(m)} · ${bytes(m.size)}`);
  const best = recommendedModel();
  return h(
    'select',
    { id: 'model-select', 'aria-label': 'Judge model' },
    h('optgroup', { label: 'Recommended on this device' }, state.manifest.filter((m) => m.name === best).map(option)),
    h('optgroup', { label: 'Other judges' }, state.manifest.filter((m) => m.name !== best).map(option)),
    h(
      'optgroup',
      { label: 'Your own' },
      h('option', { value: '__file' }, 'A GGUF file on this computer…'),
      h('option', { value: '__url' }, 'A GGUF at a URL…'),
    ),
  );
}

/** "Qwen2.5-Coder-1.5B-Instruct (Q4_K_M)" → "Qwen2.5-Coder-1.5B". */
const shortName = (m) => m.display.replace(/ \(.*\)$/, '').replace(/-Instruct$/, '');

/** The GGUF file and URL inputs, hidden until the model list names them. */
function sourceInputs() {
  const fileInput = h('input', {
    type: 'file',
    accept: '.gguf',
    id: 'model-file',
    hidden: true,
    'aria-label': 'GGUF file',
  });
  const urlInput = h('input', {
    type: 'url',
    id: 'model-url',
    placeholder: 'https://…/model.gguf#sha256=… (the host must be allowed by the page policy)',
    hidden: true,
    size: 48,
    'aria-label': 'GGUF URL',
  });
  return { fileInput, urlInput };
}

/** The backend and, for the CPU engine, how it multiplies. */
function engineSelects() {
  const backendSel = h(
    'select',
    { id: 'backend-select', 'aria-label': 'Backend' },
    h('option', { value: 'auto' }, 'GPU if there is one, else CPU'),
    h('option', { value: 'cpu' }, 'CPU'),
    h('option', { value: 'webgpu' }, 'WebGPU, even on a software adapter'),
  );
  const precisionSel = h(
    'select',
    {
      id: 'precision-select',
      'aria-label': 'CPU products',
      title: 'How the CPU engine multiplies: 8-bit integers as llama.cpp (faster), or f32',
    },
    h('option', { value: 'int8' }, 'CPU: 8-bit integers (faster)'),
    h('option', { value: 'f32' }, 'CPU: 32-bit floats'),
  );
  return { backendSel, precisionSel };
}

export function renderJudge() {
  const { select, button, about, progress } = judgeControls();
  const l = state.loading;
  button.disabled = !!l;
  button.textContent = state.judge ? 'Load another judge' : 'Load judge';
  const selected = state.manifest.find((m) => m.name === select.value);
  mount(
    about,
    messagesBeside('judge-error', state.judgeError),
    selected
      ? h(
          'p',
          { class: 'hint' },
          `${selected.display}${selected.name === recommendedModel() ? ', recommended on this device' : ''}: `,
          selected.role,
          '. ',
          `SHA-256 ${selected.sha256.slice(0, 12)}… is checked after download; the model is then cached in this browser.`,
        )
      : null,
    h('p', { class: 'hint', id: 'gpu-info' }, gpuLine()),
  );
  mount(
    progress,
    l
      ? h(
          'div',
          { class: 'progress-block' },
          h(
            'label',
            { for: 'load-progress' },
            l.phase === 'download'
              ? `Downloading ${bytes(l.done)} of ${bytes(l.total)}`
              : `Loading weights ${bytes(l.done)} of ${bytes(l.total)}`,
          ),
          h('progress', { id: 'load-progress', max: l.total || 1, value: l.done }),
        )
      : null,
    state.judge
      ? h(
          'div',
          { class: 'judge-info', title: state.judge.backend },
          h('strong', {}, state.judge.name),
          ` · ${state.judge.model.architecture} · on ${judgeRunsOn(state.judge)}`,
          h('div', { class: 'hint' }, `Backend: ${state.judge.why}.`),
        )
      : null,
  );
  // The list changes when a load ends, not with each step of its progress.
  if (!l) renderCached();
}

/** Where the loaded judge runs, in plain words (the engine's own description is on hover). */
function judgeRunsOn(j) {
  const d = j.device || {};
  return j.backendKind === 'cpu' ? `${runsOn(j)}, ${kernelWords(d.kernels || '')}` : runsOn(j);
}

function gpuLine() {
  const g = state.gpu;
  if (!g) return 'Checking WebGPU…';
  if (!g.available) return `No WebGPU: ${g.why}. The CPU engine runs instead.`;
  if (!g.hardware)
    return `WebGPU: ${g.name} is a software adapter (the CPU drawing for a missing GPU), slower than the CPU engine, so the CPU engine runs. Choose "WebGPU, even on a software adapter" to try it anyway.`;
  return `WebGPU: ${g.name}${g.f16 ? ', shader-f16' : ', no shader-f16'}.`;
}

/** The CPU engine's threads: how many run, why, and a selector (applies after a reload). */
function renderThreads() {
  const e = state.engine;
  if (!e) return null;
  const select = h(
    'select',
    { id: 'threads-select', 'aria-label': 'CPU threads' },
    Array.from({ length: e.cores }, (_, i) => i + 1).map((n) =>
      h('option', { value: n, selected: n === wantedThreads() }, `${n}`),
    ),
  );
  select.addEventListener('change', () => {
    // A new thread count restarts the engine, by reloading the page (everything graded is stored).
    saveThreads(select.value);
    notice('Restarting the engine with the new thread count; everything graded is kept.');
    location.reload();
  });
  const running = e.threads > 1 ? `${e.threads} threads` : `1 thread (${e.threadsWhy})`;
  return h(
    'p',
    { class: 'hint', id: 'threads-info', title: `The CPU engine's kernels: ${e.cpuKernels}` },
    `CPU engine: ${running}, ${kernelWords(e.cpuKernels)}. Threads: `,
    select,
    ` of ${e.cores} cores.`,
  );
}

async function renderCached() {
  const list = await engine.request('cachedModels').catch(() => []);
  const el = $('#cached-list');
  if (!el) return;
  mount(
    el,
    list.length
      ? h(
          'ul',
          {},
          list.map((m) =>
            h(
              'li',
              {},
              `${m.key} ${m.size ? bytes(m.size) : ''} `,
              h(
                'button',
                {
                  class: 'link',
                  onclick: async () => {
                    await engine.request('removeModel', { key: m.key });
                    notice(`Removed ${m.key} from this browser.`);
                    renderCached();
                  },
                },
                'remove',
              ),
            ),
          ),
        )
      : 'None yet.',
  );
}

/** A judge-card problem, said beside the Load button (kept in the state: the card is redrawn). */
function judgeError(text) {
  state.judgeError = text;
  renderJudge();
}

async function loadJudge(choice, file, url, backend, precision = 'int8') {
  let source;
  state.judgeError = null;
  if (choice === '__file') {
    if (!file) return judgeError('Choose a .gguf file first.');
    source = { file };
  } else if (choice === '__url') {
    if (!url) return judgeError('Enter a model URL first.');
    let u;
    try {
      u = splitHash(new URL(url, location.href).href);
    } catch (e) {
      return judgeError(`That is not a usable model URL: ${e.message}.`);
    }
    source = { key: `url-${await shortHash(u.url)}`, urls: [u.url], sha256: u.sha256 };
    if (!u.sha256)
      notice(
        'This URL names no SHA-256, so the model’s integrity cannot be checked: add #sha256= and the model’s 64-digit SHA-256 to the URL, as the command line takes it.',
      );
  } else {
    source = modelSource(state.manifest.find((x) => x.name === choice));
  }
  state.loading = { phase: 'download', done: 0, total: source.size || 0 };
  renderJudge();
  try {
    state.judge = await engine.request('loadJudge', { source, backend, maxTokens: 4096, options: { precision } });
    await db.put('settings', { choice, backend, precision }, 'judge');
    const pace = await db.get('settings', paceKey()).catch(() => null);
    state.pace = pace?.secsPerResponse ?? null;
    state.secsPerToken = pace?.secsPerToken ?? null;
    notice(`Judge ${state.judge.name} loaded on ${runsOn(state.judge)}.`);
  } catch (e) {
    state.judgeError = `Could not load the judge: ${e.message}`;
  }
  state.loading = null;
  renderAll();
}

/**
 * After a reload, where this browser graded before: the judge chosen last is loaded again from this
 * browser's cache (nothing is downloaded), so that one click resumes the run. A judge that is not
 * cached, or a first visit, waits for Load as before.
 */
export async function reloadKeptJudge() {
  if (state.judge || !state.benchmark || !state.responses.length || !state.graded.responses.length) return;
  const saved = await db.get('settings', 'judge').catch(() => null);
  const m = saved && state.manifest.find((x) => x.name === saved.choice);
  if (!m) return;
  const source = modelSource(m);
  const cached = await engine.request('cachedModels').catch(() => []);
  if (!cached.some((c) => c.key === source.key && c.sha256 === source.sha256)) return;
  notice(`Loading ${m.display}, kept in this browser, to resume grading…`, 'info', () => !state.judge);
  await loadJudge(saved.choice, null, null, saved.backend, saved.precision);
}

async function shortHash(s) {
  const d = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(s));
  return [...new Uint8Array(d)]
    .slice(0, 6)
    .map((b) => b.toString(16).padStart(2, '0'))
    .join('');
}

engine.on('download', (m) => {
  state.loading = { phase: 'download', done: m.done, total: m.total };
  throttle('judge', renderJudge);
});
engine.on('load', (m) => {
  state.loading = { phase: 'load', done: m.done, total: m.total };
  throttle('judge', renderJudge);
});
// The worker moved the judge to another backend (the GPU was lost mid-grade): show where it runs now.
engine.on('judge-changed', (m) => {
  state.judge = m.judge;
  renderJudge();
});
