// The worker owns the engine: the wasm module, the judge model, the grading loop. The page only
// renders. Messages are typed ({type, id, ...}); every request gets exactly one reply
// ({id, ok: true, result} or {id, ok: false, error}), and progress arrives as {type: 'progress'|...}.
//
// Nothing here talks to any host but the page's own origin (and, only when the user asks for it, the
// model URL they chose; the page's Content-Security-Policy enforces that).

import { put, all } from './lib/db.js';
import { fetchModel, openCachedModel, removeCachedModel, cachedModels } from './lib/modelstore.js';
import { Pace } from './lib/pace.js';
import { isSoftwareAdapter, adapterName } from './lib/adapter.js';

let wasm = null;        // the wasm-bindgen module
let generation = 0;     // bumped when a panic forces a fresh wasm instance
let judge = null;       // JudgeHandle
let judgeInfo = null;   // {name, backend, backendKind, device, adapter, why, answerTokens, model}
// Every stored judgment (IndexedDB, read once), by key(judge, model, session): the worker owns them;
// the page asks for them and for the views computed from them.
let judgments = null;
const judgmentKey = (j) => `${j.judge}\u0000${j.model_test}\u0000${j.session_id}`;
let loaded = null;      // {blob, name, maxTokens}: where the judge came from, to reload it on the CPU
let control = { paused: false, cancelled: false };
let grading = false;    // a grade loop is running
// Tests only: destroy the GPU device before the next response ({type: 'debugLoseDevice'}).
let loseDeviceRequested = false;

// Which engine build runs. The threaded one (pkg-threads/: shared memory, a pool of Web Workers,
// relaxed-simd dot products) needs a cross-origin isolated page (headers from `rocketjudge serve`, or
// the service worker of a static copy) and a browser with relaxed SIMD; otherwise pkg/ runs on this
// worker's one thread.
let plan = { dir: 'pkg', threads: 1, why: 'not started' };
let starting = null; // the first `init`'s promise

/** A minimal module using i32x4.relaxed_dot_i8x16_i7x16_add_s: validates only with relaxed SIMD. */
function hasRelaxedSimd() {
  const v128 = [0xfd, 0x0c, ...new Array(16).fill(0)];
  const body = [0x00, ...v128, ...v128, ...v128, 0xfd, 0x93, 0x02, 0x0b];
  const bytes = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, 0x03, 0x02, 0x01, 0x00,
    0x0a, body.length + 2, 0x01, body.length, ...body];
  try { return WebAssembly.validate(new Uint8Array(bytes)); } catch { return false; }
}

/** The build and thread count for `wanted` threads, and why. */
function choosePlan(wanted) {
  if (wanted <= 1) return { dir: 'pkg', threads: 1, why: 'one thread chosen' };
  if (!self.crossOriginIsolated || typeof SharedArrayBuffer === 'undefined') {
    return { dir: 'pkg', threads: 1, why: 'the page is not cross-origin isolated, so it cannot share memory between threads' };
  }
  if (!hasRelaxedSimd()) return { dir: 'pkg', threads: 1, why: 'this browser lacks WebAssembly relaxed SIMD, which the threaded engine is built with' };
  return { dir: 'pkg-threads', threads: wanted, why: `${wanted} threads` };
}

async function loadWasm() {
  // A fresh URL gives a fresh module instance: after a panic (a wasm trap) the old one is abandoned.
  try {
    wasm = await import(`../${plan.dir}/rocketjudge_wasm.js?instance=${generation}`);
    await wasm.default();
    if (plan.threads > 1) await wasm.initThreadPool(plan.threads);
  } catch (e) {
    if (plan.dir === 'pkg') throw e;
    // A static copy without the threaded build, or a pool that cannot start: one thread.
    plan = { dir: 'pkg', threads: 1, why: `the threaded engine did not start (${describeError(e)})` };
    return loadWasm();
  }
  return wasm;
}

function post(msg) {
  self.postMessage(msg);
}

function describeError(e) {
  if (e instanceof WebAssembly.RuntimeError) {
    return `internal error in the engine (${e.message}); it has been restarted, please retry`;
  }
  return e && e.message ? e.message : String(e);
}

/** The engine's kind of an error (`e.kind`, set by the wasm module), `internal` for a trap. */
function errorKind(e) {
  if (e instanceof WebAssembly.RuntimeError) return 'internal';
  return (e && e.kind) || 'other';
}

async function recoverIfTrapped(e) {
  if (e instanceof WebAssembly.RuntimeError) {
    generation += 1;
    judge = null;
    judgeInfo = null;
    await loadWasm();
    post({ type: 'engine-restarted' });
  }
}

/**
 * Which backend to use and why; on WebGPU also what the browser says about its adapter. `auto`
 * takes WebGPU on a hardware adapter only; `webgpu` takes any adapter (a software one too).
 */
async function chooseBackend(requested) {
  const hasGpuApi = typeof navigator !== 'undefined' && 'gpu' in navigator;
  const built = typeof wasm.webgpuAvailable === 'function' ? wasm.webgpuAvailable() : false;
  if (requested === 'cpu') return { backend: 'cpu', why: 'CPU chosen' };
  if (!built) return { backend: 'cpu', why: 'this build has no WebGPU backend' };
  if (!hasGpuApi) return { backend: 'cpu', why: 'this browser has no WebGPU (navigator.gpu is missing)' };
  const adapter = await navigator.gpu.requestAdapter({ powerPreference: 'high-performance' }).catch(() => null);
  if (!adapter) return { backend: 'cpu', why: 'the browser found no WebGPU adapter' };
  const info = adapter.info || {};
  const name = adapterName(adapter, 'unnamed adapter');
  if (requested !== 'webgpu' && isSoftwareAdapter(adapter)) {
    return { backend: 'cpu', why: `the WebGPU adapter (${name}) is software, not a GPU: the CPU engine is faster here` };
  }
  return {
    backend: 'webgpu',
    why: requested === 'webgpu' ? 'WebGPU chosen' : 'a hardware WebGPU adapter is available',
    adapter: {
      vendor: info.vendor || '', architecture: info.architecture || '', device: info.device || '', description: info.description || '',
      shaderF16: adapter.features.has('shader-f16'),
      maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
    },
  };
}

/** Load the current model (`loaded`) on a backend; progress goes out as `{type: progressType, done, total}`. */
function loadHandle(backend, progressType = 'load') {
  return loadFrom(loaded, backend, progressType);
}

/** Load a judge from `{blob, name, maxTokens, debugLayers?, options?}` on a backend. */
async function loadFrom({ blob, name, maxTokens, debugLayers, options }, backend, progressType) {
  const read = async (offset, length) => new Uint8Array(await blob.slice(offset, offset + length).arrayBuffer());
  const progress = (done, total) => post({ type: progressType, done, total });
  const header = await readHeader(blob);
  if (debugLayers) header.keepLayers(debugLayers);
  return wasm.loadJudge(header, name, backend, read, progress, maxTokens, options);
}

/** Free the judge's memory and forget it. */
function releaseJudge() {
  try { judge?.free(); } catch { /* already gone */ }
  judge = null;
  judgeInfo = null;
}

/** What the page shows about a loaded judge; `device` is the engine's typed BackendInfo. */
function describeHandle(handle) {
  const device = handle.info();
  return { name: handle.name(), backend: device.description, backendKind: device.kind, device, answerTokens: handle.answerTokens() };
}

/** Whether an error means the GPU itself failed (lost, out of memory, invalid): the WebGPU judge is then unusable. */
function isGpuFailure(e) {
  return judgeInfo?.backendKind === 'webgpu' && e?.kind === 'backend';
}

/** The stored judgments (read from IndexedDB on first use). */
async function stored() {
  if (!judgments) judgments = new Map((await all('judgments')).map((j) => [judgmentKey(j), j]));
  return judgments;
}

/** Store a judgment (IndexedDB first, so a reload loses nothing that was reported). */
async function keep(j) {
  await put('judgments', j);
  (await stored()).set(judgmentKey(j), j);
}

/** The judgments of one judge. */
async function judgmentsOf(judge) {
  return [...(await stored()).values()].filter((j) => j.judge === judge);
}

/**
 * The result views, each answered by `core` through the wasm module from the stored judgments of
 * `judge`: {view, judge, settings?, decoding?, categories?}. `settings` are ranking settings
 * ({method, tieMargin, equal, pairOrders, bootstrap, resample, seed}, each optional; defaults: `rankDefaults`).
 */
const VIEWS = {
  leaderboard: (js, r) => wasm.rank(js, r.settings),
  scores: (js) => wasm.scoreJudgments(js),
  categories: (js, r) => wasm.categoryTable(js, r.categories || {}),
  distributions: (js) => wasm.distributions(js),
  disagreement: (js) => wasm.disagreement(js),
  winRates: (js, r) => wasm.winRates(js, r.settings),
  judgmentsJsonl: (js) => wasm.judgmentsJsonl(js),
  scoresCsv: (js) => wasm.scoresCsv(js),
  rankingCsv: (js, r) => wasm.rankingCsv(wasm.rank(js, r.settings).entries),
  battlesJson: (js, r) => wasm.battlesJson(js, r.settings),
  // The user's labels ({labels}) refit the supervised scorer: the ranking before and after.
  calibration: (js, r) => wasm.calibrate(js, r.labels || [], r.settings),
  // A strong judge's verdicts ({strong: {name, bytes}}) against these judgments.
  strongAgreement: (js, r) => wasm.strongAgreement(js, r.strong.name, r.strong.bytes, r.settings),
};

/**
 * The live leaderboard (core's `settle`) of `judge`'s stored grades of the run in `scope` ({models,
 * sessions, total}), its sentence with the run's `pace` ({secsPerResponse?, elapsed?}); null when it
 * cannot be computed (a standing is information, never a reason to stop grading).
 */
async function runStanding(judgeName, scope, pace) {
  const models = new Set(scope.models);
  const sessions = new Set(scope.sessions);
  const js = (await judgmentsOf(judgeName)).filter((j) => models.has(j.model_test) && sessions.has(j.session_id));
  try {
    return wasm.standing(js, { models: scope.models, total: scope.total, queries: sessions.size, pace }, null);
  } catch (e) {
    post({ type: 'notice', text: `The live leaderboard could not be computed: ${describeError(e)}` });
    return null;
  }
}

/**
 * The GPU failed in the middle of grading: say so, drop the WebGPU judge and load the same model on
 * the CPU. What was graded is already stored; the caller grades the failed response again.
 */
async function fallBackToCpu(e) {
  const reason = describeError(e);
  post({ type: 'notice', text: `The GPU stopped working while grading (${reason}). Every response graded so far is kept; grading continues on the CPU, which is slower.` });
  const old = judge;
  judge = null;
  try { old?.free(); } catch { /* already gone */ }
  // Not `load` progress: the page shows that as a judge being loaded by the user.
  const handle = await loadHandle('cpu', 'fallback-load');
  judge = handle;
  judgeInfo = { ...judgeInfo, ...describeHandle(handle), adapter: null, adapterName: undefined, why: `WebGPU failed while grading: ${reason}` };
  post({ type: 'judge-changed', judge: judgeInfo });
}

/** Run `call(judge)`, moving to the CPU (once) when the GPU fails. */
async function onJudge(call) {
  try {
    if (loseDeviceRequested) {
      loseDeviceRequested = false;
      judge.loseDevice();
    }
    return await call(judge);
  } catch (e) {
    if (!isGpuFailure(e)) throw e;
    await fallBackToCpu(e);
    return call(judge);
  }
}

/** Grade one response (see onJudge). `options`: see JudgeHandle.grade. */
function gradeOne(query, response, model, options = null) {
  return onJudge((j) => j.grade(query, response, model, options));
}

/**
 * A run of the judge over `n` items (`grade`, `runDesign`): `call(judge, i)` for each, one at a time
 * (through onJudge), with pause and cancel honoured between items and the run marked as grading, so a
 * second run is refused meanwhile. `done(i, result)` stores and reports an item; a failed call goes to
 * `failed(i, message)` and the run goes on, unless the engine had to restart without its judge.
 * `stop()`, asked before each item, ends the run early (a settled ranking).
 * Returns {done (items passed), cancelled?, stopped?, settled?}.
 */
async function judgeRun(n, call, done, failed, stop = null) {
  // The judge answers one call at a time: a second run is refused, not interleaved.
  if (grading) throw Object.assign(new Error('the judge is busy with another run: wait for it to finish, or cancel it'), { kind: 'busy' });
  control = { paused: false, cancelled: false };
  grading = true;
  try {
    for (let i = 0; i < n; i++) {
      while (control.paused && !control.cancelled) await new Promise((r) => setTimeout(r, 100));
      if (control.cancelled) return { done: i, cancelled: true };
      if (stop && stop()) return { done: i, settled: true };
      let result;
      try {
        result = await onJudge((j) => call(j, i));
      } catch (e) {
        await recoverIfTrapped(e);
        failed(i, describeError(e));
        if (!judge) return { done: i, stopped: describeError(e) };
        continue;
      }
      await done(i, result);
      // Let pause/cancel messages in between items.
      await new Promise((r) => setTimeout(r, 0));
    }
  } finally {
    grading = false;
    loseDeviceRequested = false;
  }
  return { done: n };
}

/**
 * The CPU engine keeps the (quantized) weights in the module's memory, which 32-bit WebAssembly caps
 * at 4 GiB; activations, the KV cache and scratch need the rest. The WebGPU backend streams weights to
 * the GPU one tensor at a time and refuses, at load, a model larger than the device allows.
 */
const CPU_MODEL_LIMIT = 3 * 2 ** 30;

function checkFits(size, backend) {
  if (backend === 'cpu' && size > CPU_MODEL_LIMIT) {
    throw new Error(`this model (${(size / 2 ** 30).toFixed(1)} GiB) is too large for the CPU engine in a browser tab: 32-bit WebAssembly addresses at most 4 GiB, and the weights may take at most ${CPU_MODEL_LIMIT / 2 ** 30} GiB of it. Choose a smaller model${'gpu' in navigator ? '' : ' or a browser with WebGPU'}.`);
  }
}

/** Read the GGUF header from a Blob, growing the prefix until it parses. */
async function readHeader(blob) {
  let want = 1 << 20;
  for (;;) {
    const prefix = new Uint8Array(await blob.slice(0, Math.min(want, blob.size)).arrayBuffer());
    const needed = wasm.ModelHeader.bytesNeeded(prefix);
    if (needed === 0 || prefix.length >= blob.size) return new wasm.ModelHeader(prefix, blob.size);
    if (needed <= prefix.length) return new wasm.ModelHeader(prefix, blob.size);
    want = needed;
  }
}

// ------------------------------------------------------------------ probes, explanations, calibration, agreement

/** A second judge for the "replace the judge" probe: {name, handle}. */
let probeJudge = null;

/** The stored judgment of `model`'s response to `session` by the loaded judge, or an input error. */
async function storedJudgment(model, session) {
  const j = (await stored()).get(judgmentKey({ judge: judge.name(), model_test: model, session_id: session }));
  if (!j) throw Object.assign(new Error(`${model} on ${session} is not graded by ${judge.name()} yet: grade it first`), { kind: 'input' });
  return j;
}

/** The response with its graded answer replaced by `text`. */
function withAnswer(response, text) {
  return { ...response, output: [text, ...response.output.slice(1)] };
}

/** A response's score (core's, mean p(Yes) on 1–10). */
function scoreOf(judgment) {
  return wasm.explainScore(judgment).score;
}

/**
 * One probe on one response: {probe, query, response, model, options}. Returns {before, after, detail}
 * (scores on 1–10; for `position`, p(this response is better) shown first and shown second).
 * `options`: {amount} for pad (share added) and truncate (share kept), {item} for drop_item (index),
 * {text} for add_item, {prompt} for prompt_wording and instruction_level (a PromptStyle),
 * {other} (a response) for position. `judge` needs loadProbeJudge first.
 */
async function runProbe({ probe, query, response, model, options = {} }) {
  if (!judge) throw new Error('load a judge first');
  const before = await storedJudgment(model, response.session_id);
  const regrade = async (q, r, gradeOptions) => (await gradeOne(q, r, model, gradeOptions)).judgment;
  const scored = (j, detail = {}) => ({ before: scoreOf(before), after: scoreOf(j), detail: { ...detail, probs: j.norm_probability } });
  // Nothing to change (the report leaves these out).
  const unchanged = (detail = {}) => ({ before: scoreOf(before), after: scoreOf(before), detail: { ...detail, unchanged: true } });
  switch (probe) {
    case 'pad': case 'reorder': case 'truncate': {
      const t = wasm.probeText(probe, response.output[0], options.amount ?? (probe === 'pad' ? 0.3 : probe === 'truncate' ? 0.5 : 0));
      if (!t.changed) return unchanged({ text: t.text });
      return scored(await regrade(query, withAnswer(response, t.text)), { text: t.text });
    }
    case 'drop_item': {
      const i = options.item;
      // Over a whole set, a checklist without item i (or with one item only) is left as it is.
      if (!(i >= 0 && i < before.norm_probability.length) || before.norm_probability.length < 2) {
        return unchanged();
      }
      // Items are graded independently (each reads the shared prefix and itself only), so dropping
      // one leaves the others' p(Yes) as they were: no regrading.
      const probs = before.norm_probability.filter((_, k) => k !== i);
      return scored({ ...before, norm_probability: probs }, { item: query.checklist[i] });
    }
    case 'add_item': {
      const text = (options.text || '').trim();
      if (!text) throw Object.assign(new Error('write the checklist item to add'), { kind: 'input' });
      const added = await regrade({ ...query, checklist: [text] }, response);
      return scored({ ...before, norm_probability: [...before.norm_probability, added.norm_probability[0]] }, { item: text, p: added.norm_probability[0] });
    }
    case 'prompt_wording': case 'instruction_level':
      return scored(await regrade(query, response, { prompt: options.prompt }), { prompt: options.prompt });
    case 'judge': {
      if (!probeJudge) throw Object.assign(new Error('load a second judge for this probe first'), { kind: 'input' });
      const j = (await probeJudge.handle.grade(query, response, model, null)).judgment;
      return scored(j, { judge: probeJudge.name });
    }
    case 'position': {
      const other = options.other;
      if (!other) throw Object.assign(new Error('choose the response to compare with'), { kind: 'input' });
      const first = await judge.compare(query, response, other);
      const second = await judge.compare(query, other, response);
      // before: p(this better) shown first; after: shown second. A consistent judge gives the same.
      return { before: first.p_a, after: 1 - second.p_a, detail: { other: other.generator, first, second } };
    }
    default:
      throw Object.assign(new Error(`unknown probe ${probe}`), { kind: 'input' });
  }
}

/** The requests of the educator views (see web/educator.js). */
const EDUCATOR_HANDLERS = {
  probe: runProbe,

  /**
   * A probe over many responses ({probe, options, jobs: [{query, response, model, other?}]}), with
   * `probe-progress`; returns {outcomes, summary} (summary: core's probeSummary).
   */
  async probeAll({ probe, options = {}, jobs }) {
    const outcomes = [];
    control = { paused: false, cancelled: false };
    for (let i = 0; i < jobs.length; i++) {
      if (control.cancelled) break;
      const { query, response, model, other } = jobs[i];
      const r = await runProbe({ probe, query, response, model, options: other ? { ...options, other } : options });
      if (!r.detail.unchanged) outcomes.push({ session_id: response.session_id, model, before: r.before, after: r.after });
      post({ type: 'probe-progress', done: i + 1, total: jobs.length });
    }
    return { outcomes, summary: outcomes.length ? wasm.probeSummary(probe, outcomes) : null, skipped: jobs.length - outcomes.length };
  },

  /** Load a second judge for the judge probe ({source}: a manifest entry's source) on the CPU; the main judge stays. */
  async loadProbeJudge({ source }) {
    try { probeJudge?.handle.free(); } catch { /* already gone */ }
    probeJudge = null;
    const blob = await openModel(source, (size) => checkFits(size, 'cpu'));
    const handle = await loadFrom({ blob, name: source.key, maxTokens: 4096 }, 'cpu', 'probe-load');
    probeJudge = { name: source.key, handle };
    return { name: source.key };
  },

  /**
   * What the judge saw and how the score and rank came about ({query, response, model, settings?,
   * options?}): {prompt (engine's PromptView), judgment, score (explainScore), scores (this model's
   * response scores), entry (its leaderboard row), models (how many are ranked)}.
   */
  async explain({ query, response, model, settings, options }) {
    if (!judge) throw new Error('load a judge first');
    const judgment = await storedJudgment(model, response.session_id);
    const js = await judgmentsOf(judge.name());
    const ranking = wasm.rank(js, settings);
    return {
      prompt: judge.explain(query, response, options || null),
      judgment,
      score: wasm.explainScore(judgment),
      scores: wasm.scoreJudgments(js.filter((j) => j.model_test === model)).scores,
      entry: ranking.entries.find((e) => e.model === model),
      models: ranking.entries.length,
      method: ranking.method,
    };
  },
};

// ------------------------------------------------------------------ the other evaluation designs (seeds 001–004)

/** Stored records of the other designs (IndexedDB `designs`, read once), by key. */
let designRecords = null;

async function designsStored() {
  if (!designRecords) designRecords = new Map((await all('designs')).map((r) => [r.key, r]));
  return designRecords;
}

/**
 * A design checked by core (errors of kind `invalid` for combinations that mean nothing):
 * {type: 'pairwise', settings: {checklist, k, reference, decoding}}, {type: 'direct', settings:
 * {instruction, reference, checklist, k, decoding}} or {type: 'reasoned', settings: {protocol, samples,
 * temperature, aggregate, replyTokens, seed}}. Its id (the checked settings) names its stored records;
 * `pairs`: whether it judges pairs of responses (pairwise, or a pairwise reasoned protocol).
 */
function checkDesign({ type, settings }) {
  let checked;
  if (type === 'pairwise') checked = wasm.checkPairSettings(settings);
  else if (type === 'direct') checked = wasm.checkDirectSettings(settings);
  else if (type === 'reasoned') checked = wasm.checkReasonedSettings(settings);
  else throw Object.assign(new Error(`unknown evaluation type ${type}`), { kind: 'input' });
  const pairs = type === 'pairwise' || (type === 'reasoned' && wasm.reasonedProtocols().find((p) => p.name === checked.protocol).pairwise);
  return { type, settings: checked, id: `${type}:${JSON.stringify(checked)}`, pairs };
}

const designKey = (judgeName, id, session, a, b = '') => [judgeName, id, session, a, b].join('\u0000');

const DESIGN_HANDLERS = {
  /**
   * Run a design over responses ({design, jobs: [{query, response, model}]}) with the loaded judge:
   * every planned comparison (both orders), Direct score or reasoned score, each stored the moment it
   * is made, so a rerun (or a reload) continues with what is missing. Progress: `design-progress`
   * {done, total, pairs} (`pairs`: the tasks are comparisons), and
   * `design-reply` {reply, samples, score, vote} as each written reply is read (a pair's reply votes
   * `model_a` or `model_b`); a failed comparison: `design-error`. Returns {done, total, cancelled?, stopped?}.
   */
  async runDesign({ design, jobs }) {
    if (!judge) throw new Error('load a judge first');
    const d = checkDesign(design);
    const name = judge.name();
    const onReply = (reply, sample) => post({ type: 'design-reply', reply: reply + 1, samples: d.settings.samples, score: sample.score ?? null, vote: sample.vote ?? null });
    const tasks = d.pairs
      ? wasm.planPairs(jobs.map((j) => [j.response.session_id, j.model]), d.settings.reference ?? undefined)
        .map(([a, b]) => ({ a: jobs[a], b: jobs[b], key: designKey(name, d.id, jobs[a].response.session_id, jobs[a].model, jobs[b].model) }))
      : jobs.map((a) => ({ a, key: designKey(name, d.id, a.response.session_id, a.model) }));
    const store = await designsStored();
    const todo = tasks.filter((t) => !store.has(t.key));
    const before = tasks.length - todo.length;
    const r = await judgeRun(todo.length,
      (j, i) => {
        const { a, b } = todo[i];
        if (b && d.type === 'reasoned') return j.reasonPair(a.query, a.response, a.model, b.response, b.model, d.settings, onReply);
        if (b) return j.comparePair(a.query, a.response, a.model, b.response, b.model, d.settings);
        if (d.type === 'reasoned') return j.reason(a.query, a.response, a.model, d.settings, onReply);
        return j.direct(a.query, a.response, a.model, d.settings);
      },
      async (i, record) => {
        // `null`: an empty response has no perplexity; kept, so a rerun does not ask again.
        const kept = { key: todo[i].key, judge: name, design: d.id, record };
        await put('designs', kept);
        store.set(kept.key, kept);
        post({ type: 'design-progress', done: before + i + 1, total: tasks.length, pairs: d.pairs });
      },
      (i, error) => {
        const { a, b } = todo[i];
        post({ type: 'design-error', session_id: a.response.session_id, model: b ? `${a.model} vs ${b.model}` : a.model, error });
      });
    return { ...r, done: before + r.done, total: tasks.length };
  },

  /**
   * A design's results ({judge, design, settings?, decoding?}; `settings`: ranking settings, `decoding`
   * replaces the records'): {type, pairs, settings, count, unscored, jsonl, ranking?, consistency?,
   * rankError?, replies?, unreadable?}. `jsonl` is the records as `rocketjudge grade --type pairwise` /
   * `rocketjudge direct` / `rocketjudge reason` write them. Reasoned designs: `unscored` counts responses
   * (pairs) with no readable reply, `replies` all replies, `unreadable` each reply whose score (vote)
   * could not be read ({model, session_id, reply, text}; a pair's model is `A vs B`).
   */
  async designView({ judge: name, design, settings, decoding }) {
    const d = checkDesign(design);
    const rows = [...(await designsStored()).values()].filter((r) => r.judge === name && r.design === d.id);
    const records = rows.map((r) => r.record).filter(Boolean);
    const out = {
      type: d.type, pairs: d.pairs, settings: d.settings, count: records.length, unscored: rows.length - records.length,
      jsonl: records.map((r) => `${JSON.stringify(r)}\n`).join(''),
    };
    if (d.type === 'reasoned') {
      out.unscored = records.filter((r) => (d.pairs ? r.winner : r.score) == null).length;
      out.replies = records.reduce((n, r) => n + r.samples.length, 0);
      out.unreadable = records.flatMap((r) => r.samples.map((x, i) => ({
        model: d.pairs ? `${r.model_a} vs ${r.model_b}` : r.model_test, session_id: r.session_id, reply: i + 1, text: x.text, read: (d.pairs ? x.vote : x.score) != null,
      })).filter((x) => !x.read));
    }
    if (!records.length) return out;
    try {
      if (d.type === 'pairwise') Object.assign(out, wasm.rankPairs(records, settings, decoding ?? null));
      else if (d.pairs) out.ranking = wasm.rankReasonedPairs(records, settings);
      else if (d.type === 'reasoned') out.ranking = wasm.rankReasoned(records, settings);
      else out.ranking = wasm.rankDirect(records, settings, decoding ?? null);
    } catch (e) {
      out.rankError = describeError(e);
    }
    return out;
  },
};

/**
 * A manifest or URL model ({key, urls, sha256, size}): from this browser's cache when its stored hash
 * is the expected one, else downloaded (`download` progress) and checked.
 */
async function openModel(source, fits) {
  return (await openCachedModel(source.key, source.sha256)) || fetchModel(source, wasm, (done, total) => post({ type: 'download', done, total }), fits);
}

const handlers = {
  ...EDUCATOR_HANDLERS,
  ...DESIGN_HANDLERS,
  /** Start the engine on `threads` threads (default: every core) where the page allows it. */
  async init({ threads } = {}) {
    const cores = navigator.hardwareConcurrency || 1;
    // Once per worker: a thread pool cannot be started twice (a new thread count needs a new worker,
    // which the page gets by reloading); a later or concurrent call waits for the first and reports
    // what runs.
    starting ??= (async () => {
      plan = choosePlan(Math.max(1, Math.min(threads || cores, 64)));
      await loadWasm();
    })();
    await starting;
    return {
      promptVersion: wasm.promptVersion(),
      webgpuBuilt: typeof wasm.webgpuAvailable === 'function' && wasm.webgpuAvailable(),
      isolated: self.crossOriginIsolated === true,
      cores,
      threads: plan.threads,
      threadsWhy: plan.why,
      cpuKernels: wasm.cpuKernels(),
    };
  },

  /** Core calls, run here so the page never blocks: {fn, args}. */
  async core({ fn, args }) {
    if (!(fn in wasm) || typeof wasm[fn] !== 'function') throw new Error(`unknown engine call ${fn}`);
    return wasm[fn](...args);
  },

  async cachedModels() {
    return cachedModels();
  },

  async removeModel({ key }) {
    await removeCachedModel(key);
    return true;
  },

  /**
   * Load a judge from a manifest entry ({key, url, sha256, size}), a URL, or a File.
   * Downloads into the model store with a byte progress bar, checks SHA-256 when known.
   */
  async loadJudge({ source, backend: requested, maxTokens, options, debugLayers }) {
    // Release the previous judge's memory (a grade in flight keeps its own reference).
    releaseJudge();
    const choice = await chooseBackend(requested);
    const fits = (size) => checkFits(size, choice.backend);
    let blob;
    let name;
    if (source.file) {
      blob = source.file;
      name = source.file.name.replace(/\.gguf$/i, '');
      fits(blob.size);
    } else {
      name = source.key;
      blob = await openModel(source, fits);
    }
    const header = await readHeader(blob);
    const info = header.info();
    header.free();
    // debugLayers (tests only): keep the model's first N blocks.
    // options: {precision: 'int8'|'f32'} for the CPU, {kernels: 'auto'|'gpu'|'software', allowF16,
    // memoryBudget} for WebGPU (all optional).
    loaded = { blob, name, maxTokens: maxTokens || 4096, options, debugLayers };
    let handle;
    try {
      handle = await loadHandle(choice.backend);
    } catch (e) {
      if (choice.backend !== 'webgpu') throw e;
      // The GPU refused (limits, device loss): fall back to the CPU and say why.
      post({ type: 'notice', text: `WebGPU could not load this model (${describeError(e)}); using the CPU instead.` });
      choice.backend = 'cpu';
      choice.why = `WebGPU failed: ${describeError(e)}`;
      choice.adapter = null;
      handle = await loadHandle('cpu');
    }
    judge = handle;
    judgeInfo = { ...describeHandle(handle), adapter: choice.adapter || null, why: choice.why, model: info };
    if (judgeInfo.backendKind === 'webgpu') {
      // The engine's name for the adapter, else what the browser tells (it may withhold the description).
      const a = judgeInfo.adapter || {};
      judgeInfo.adapterName = judgeInfo.device.adapter || [a.vendor, a.architecture, a.device, a.description].filter(Boolean).join(' ') || 'unnamed adapter';
      judgeInfo.backend = judgeInfo.backend.replace(/^webgpu: +\(/, `webgpu: ${judgeInfo.adapterName} (`);
    }
    return judgeInfo;
  },

  /**
   * Grade a run: `jobs` ([{query, response, model}]: the responses still to grade, model by model in
   * file order) in `order` (core's schedule: `interleaved`, `model` or `adaptive`) from `seed` (core's
   * default when absent).
   * `scope` ({models, sessions, total}: the whole run, what is graded included) gives the live
   * leaderboard, posted as {type: 'standing'} at the start and after every query's worth of responses;
   * with `until: 'settled'` the run stops once that leaderboard is settled. Each judgment is written
   * to IndexedDB before it is reported, so a reload loses at most the response in flight.
   */
  async grade({ jobs, order = 'interleaved', seed = null, scope = null, until = null }) {
    if (!judge) throw new Error('load a judge first');
    const started = performance.now();
    const startedOn = judgeInfo.backendKind;
    const defaults = wasm.runChoices();
    const { rule } = defaults;
    seed ??= defaults.seed;
    const keys = jobs.map((j) => ({ model: j.model, session_id: j.response.session_id, category: j.query.category ?? null }));
    const done = new Uint8Array(jobs.length);
    // The job of each step, chosen once (a step retried on the CPU after a GPU failure keeps its job).
    const picked = [];
    let live = scope ? await runStanding(judge.name(), scope, {}) : null;
    if (live) post({ type: 'standing', standing: live });
    const pick = (i) => (picked[i] ??= wasm.nextJob(keys, order, seed, done, order === 'adaptive' ? live : null, rule.minQueries));
    const pace = new Pace();
    let stepStarted = 0;
    const r = await judgeRun(jobs.length,
      (j, i) => { stepStarted = performance.now(); const k = pick(i); return j.grade(jobs[k].query, jobs[k].response, jobs[k].model, null); },
      async (i, result) => {
        pace.add((performance.now() - stepStarted) / 1000);
        done[picked[i]] = 1;
        await keep(result.judgment);
        const secs = (performance.now() - started) / 1000;
        const remaining = jobs.length - i - 1;
        post({
          type: 'graded', judgment: result.judgment,
          detail: { prefixTokens: result.prefixTokens, suffixTokens: result.suffixTokens, truncatedChars: result.truncatedChars, backend: judgeInfo.backendKind },
          done: i + 1, total: jobs.length, perMinute: pace.perMinute(), secsPerResponse: pace.secsPerResponse(), etaSec: pace.secondsLeft(remaining),
        });
        if (scope && ((i + 1) % scope.models.length === 0 || i + 1 === jobs.length)) {
          live = await runStanding(judge.name(), scope, { secsPerResponse: pace.secsPerResponse(), elapsed: secs });
          if (live) post({ type: 'standing', standing: live });
        }
      },
      (i, error) => {
        // No job chosen: the schedule itself failed, which ends the run.
        if (picked[i] === undefined) throw new Error(`the grading order failed: ${error}`);
        // Not graded in this run: skipped, so the schedule moves on.
        done[picked[i]] = 1;
        post({ type: 'grade-error', session_id: jobs[picked[i]].response.session_id, model: jobs[picked[i]].model, error });
      },
      () => until === 'settled' && !!live && live.settled);
    const base = { graded: r.done, ...(live ? { sentence: live.sentence } : {}) };
    if (r.cancelled) return { ...base, cancelled: true };
    if (r.stopped) return { ...base, stopped: r.stopped };
    if (r.settled) return { ...base, settled: true, left: jobs.length - r.done };
    return startedOn === judgeInfo.backendKind ? base : { ...base, movedTo: judgeInfo.backendKind };
  },

  /** The live leaderboard of `judge`'s stored grades of a run (`scope` as for `grade`), or null. */
  async standing({ judge: name, scope, secsPerResponse = null }) {
    return runStanding(name, scope, secsPerResponse ? { secsPerResponse } : {});
  },

  /**
   * Regrade after a checklist edit: `query` with its new checklist, `keep` ([[newIndex, oldIndex]]:
   * items whose grades stay), `grade` (new indices: items graded now) for every response in `jobs`
   * ([{response, model}]). Stores and returns the merged judgments.
   */
  async regrade({ query, keep: kept, grade, jobs }) {
    if (!judge) throw new Error('load a judge first');
    const partial = { ...query, checklist: grade.map((i) => query.checklist[i]) };
    const out = [];
    for (const { response, model } of jobs) {
      let fresh;
      try {
        fresh = (await gradeOne(partial, response, model)).judgment;
      } catch (e) {
        await recoverIfTrapped(e);
        throw e;
      }
      const prev = (await stored()).get(judgmentKey(fresh));
      const probs = query.checklist.map(() => null);
      for (const [ni, oi] of kept) probs[ni] = prev ? prev.norm_probability[oi] : null;
      grade.forEach((ni, k) => { probs[ni] = fresh.norm_probability[k]; });
      const merged = { ...fresh, norm_probability: probs, judgment: wasm.judgmentLabels(probs) };
      await keep(merged);
      out.push(merged);
    }
    return out;
  },

  /**
   * The benchmark page's run on the loaded judge (web/bench.js): a short warm-up and `repeat` timed
   * rounds of the prefix step and the item step, then `decodeTokens` generated on top of the prefix.
   * Returns the workload (the same token ids go to wllama) and the times in ms.
   */
  async bench({ prefixTokens, items, suffixTokens, repeat, decodeTokens = 64 }) {
    if (!judge) throw new Error('load a judge first');
    const w = judge.benchWorkload(prefixTokens, items, suffixTokens);
    const rounds = [];
    // Round 0 warms up on a short piece of the workload (a full one would double a slow run).
    const warm = { prefix: w.prefix.slice(0, 64), suffixes: w.suffixes.slice(0, 1) };
    for (let r = 0; r <= repeat; r++) {
      post({ type: 'bench-progress', engine: 'rocketjudge', round: r, of: repeat });
      const { prefix, suffixes } = r === 0 ? warm : w;
      const t0 = performance.now();
      await judge.benchPrefix(prefix);
      const t1 = performance.now();
      const pYes = await judge.benchItems(prefix.length, suffixes);
      const t2 = performance.now();
      if (r > 0) rounds.push({ prefixMs: t1 - t0, itemsMs: t2 - t1, pYes });
    }
    // Generation on top of the last round's prefix (its items stored nothing), greedy, as `generate`.
    const t0 = performance.now();
    if (decodeTokens > 0) await judge.benchDecode(w.prefix.length, w.suffixes[0][0], decodeTokens);
    const decodeMs = performance.now() - t0;
    const cpu = judgeInfo.backendKind === 'cpu';
    return { workload: w, rounds, decodeTokens, decodeMs, backend: judgeInfo.backend, threads: plan.threads, kernels: cpu ? (judgeInfo.device.precision === 'int8' ? wasm.cpuKernels() : judgeInfo.device.kernels) : null, kernelRace: cpu ? wasm.cpuKernelRace() : null,
      wasmMemoryBytes: wasm.wasmMemoryBytes(), jsHeapBytes: self.performance?.memory?.usedJSHeapSize ?? null };
  },

  /**
   * The judge writes: a continuation of `prompt` (the user's message in the judge's chat template
   * when `chat`) under `settings` ({maxTokens, temperature, topP, seed, stop}; greedy by default).
   * Posts `generate-token` events ({n, piece, ms}) as tokens come; resolves with the engine's result
   * ({prompt, tokens, text, stop, promptTokens}) and the time to the first token and in all, in ms.
   */
  async generate({ prompt, chat = true, settings = {} }) {
    if (!judge) throw new Error('load a judge first');
    const t0 = performance.now();
    let n = 0;
    let firstMs = null;
    const result = await judge.generate(prompt, chat, settings, (piece) => {
      const ms = performance.now() - t0;
      firstMs ??= ms;
      post({ type: 'generate-token', n: ++n, piece, ms });
    });
    return { ...result, firstMs, ms: performance.now() - t0 };
  },

  /**
   * A checklist for `query` written by the loaded judge in this tab under `policy` (RocketEval's
   * creation prompt, or one of seed 002's: core's `CreationPolicy`), greedy, at most `maxTokens` per
   * reply (`generate-token` events as it writes), parsed as a strong model's reply is. Resolves with
   * {items (null: none found), replies, tokens, promptVersion}; the page shows the items for editing.
   */
  async writeChecklist({ query, policy = 'rocketeval', maxTokens = 512 }) {
    if (!judge) throw new Error('load a judge first');
    let n = 0;
    return judge.writeChecklist(query, policy, maxTokens, (piece) => post({ type: 'generate-token', n: ++n, piece }));
  },

  /** The loaded judge's GGUF (a Blob), for the benchmark page to hand to wllama. */
  async judgeBlob() {
    if (!loaded) throw new Error('load a judge first');
    return loaded.blob;
  },

  /** Free the judge's memory (the benchmark page runs one engine at a time). */
  async unloadJudge() {
    releaseJudge();
    return true;
  },

  /** Every stored judgment (the page counts, resumes and inspects with them). */
  async judgments() {
    return [...(await stored()).values()];
  },

  /** A result view (see VIEWS). */
  async view(r) {
    const answer = VIEWS[r.view];
    if (!answer) throw Object.assign(new Error(`unknown view ${r.view}`), { kind: 'input' });
    // `decoding` ({method, samples?, temperature?, seed?}): how the items' probabilities become
    // scores (core's `decoding`), replacing what the judgments record.
    const js = await judgmentsOf(r.judge);
    return answer(r.decoding ? js.map((j) => ({ ...j, decoding: r.decoding })) : js, r);
  },

  /** The ranking settings' defaults and choices (core's). */
  async rankDefaults() {
    return wasm.rankDefaults();
  },
};

self.onmessage = async (ev) => {
  const msg = ev.data;
  if (msg.type === 'pause') { control.paused = true; return; }
  if (msg.type === 'resume') { control.paused = false; return; }
  if (msg.type === 'cancel') { control.cancelled = true; return; }
  if (msg.type === 'debugLoseDevice') {
    // Tests only. During grading the device is destroyed before the next response (the judge is busy
    // with the current one), otherwise now.
    if (grading) loseDeviceRequested = true;
    else if (judge) judge.loseDevice();
    return;
  }
  const h = handlers[msg.type];
  if (!h) { post({ id: msg.id, ok: false, error: `unknown request ${msg.type}` }); return; }
  try {
    post({ id: msg.id, ok: true, result: await h(msg) });
  } catch (e) {
    await recoverIfTrapped(e).catch(() => {});
    // A malformed file's error says where (file, line, field) and what, for the page to phrase.
    const place = e && e.kind === 'format' ? { file: e.file, line: e.line, field: e.field, detail: e.detail } : undefined;
    post({ id: msg.id, ok: false, error: describeError(e), kind: errorKind(e), place });
  }
};
