// The engine worker's protocol, written down once and used by both sides: the page's client
// (web/lib/rpc.js) refuses to send a request, signal or core call that is not listed here, and the
// worker (web/worker/main.js) checks at start that it answers exactly the requests listed here.
//
// Three kinds of message cross:
// - a request {type, id, ...fields} gets exactly one reply: {id, ok: true, result} or
//   {id, ok: false, error, kind, place?} (`kind`: the engine's error kind; `place` for a malformed
//   file: {file, line, field, detail});
// - an event {type, ...fields} goes from the worker to the page while a request runs;
// - a signal {type} goes from the page to the worker and gets no reply (pause, resume, cancel; during
//   a grading run, untilSettled and untilDone turn its stop-when-settled on and off).
//
// Each entry says what its fields are and, for a request, what its result is, and names the worker
// module that handles it. `core` requests call one pure function of the wasm module by name; only the
// names in CORE_CALLS cross.

/** Requests: the page asks, the worker answers once. */
export const REQUESTS = {
  // web/worker/engine.js: the wasm module
  init: {
    module: 'engine',
    fields: '{threads?}',
    result: '{promptVersion, webgpuBuilt, isolated, cores, threads, threadsWhy, cpuKernels}',
  },
  core: { module: 'engine', fields: '{fn (a CORE_CALLS name), args}', result: "the function's value" },

  // web/worker/models.js: models kept in this browser
  cachedModels: { module: 'models', fields: '{}', result: '[{key, bytes, sha256}]' },
  removeModel: { module: 'models', fields: '{key}', result: 'true' },

  // web/worker/judge.js: the loaded judge
  loadJudge: {
    module: 'judge',
    fields:
      '{source: {key, urls, sha256, size} | {file}, backend: auto|cpu|webgpu, maxTokens?, options?, debugLayers?}',
    result: '{name, backend, backendKind, device (BackendInfo), why, answerTokens, model}',
  },
  gpu: { module: 'judge', fields: '{}', result: "{available, hardware, name, f16, why}: the browser's WebGPU adapter" },
  unloadJudge: { module: 'judge', fields: '{}', result: 'true' },
  judgeBlob: { module: 'judge', fields: '{}', result: "the judge's GGUF (a Blob)" },

  // web/worker/grading.js: grading and the stored judgments
  grade: {
    module: 'grading',
    fields: '{jobs: [{query, response, model}], order?, seed?, scope?: {models, sessions, total, keys}, until?}',
    result: '{graded, sentence?, cancelled?, stopped?, settled?, left?, movedTo?}',
  },
  standing: {
    module: 'grading',
    fields: '{judge, scope, secsPerResponse?}',
    result: 'the live leaderboard (core Standing) or null',
  },
  regrade: {
    module: 'grading',
    fields: '{query, keep: [[newIndex, oldIndex]], grade: [newIndex], jobs: [{response, model}]}',
    result: '[judgment]',
  },
  pending: {
    module: 'grading',
    fields: '{judge, candidates: [{model, session_id, items}]}',
    result: "[index]: the candidates left to grade (core's resume rule)",
  },
  work: {
    module: 'grading',
    fields: '{jobs: [{query, response}]}',
    result: '{tokens}: the tokens the loaded judge runs to grade them (null: not known)',
  },
  graded: {
    module: 'grading',
    fields: '{judge?}',
    result: '{judge, responses: [{model_test, session_id}]}',
  },
  judgments: { module: 'grading', fields: '{}', result: '[judgment]: every stored judgment' },

  // web/worker/views.js: results computed by core from the stored judgments
  view: {
    module: 'views',
    fields:
      '{view (see VIEWS there), judge, scope?: {keys}, settings?, decoding?, categories?, labels?, strong?, session?}',
    result: "the view's value",
  },
  rankDefaults: { module: 'views', fields: '{}', result: '{settings, methods}' },

  // web/worker/probes.js: the educator's probes and explanations
  probe: { module: 'probes', fields: '{probe, query, response, model, options?}', result: '{before, after, detail}' },
  probeAll: {
    module: 'probes',
    fields: '{probe, options?, jobs: [{query, response, model, other?}]}',
    result: '{outcomes, summary, skipped}',
  },
  loadProbeJudge: { module: 'probes', fields: '{source}', result: '{name}' },
  explain: {
    module: 'probes',
    fields: '{query, response, model, settings?, options?}',
    result: '{prompt, judgment, score, scores, entry, models, method}',
  },

  // web/worker/designs.js: the other evaluation designs (seeds 001–004)
  runDesign: {
    module: 'designs',
    fields: '{design: {type, settings}, jobs: [{query, response, model}]}',
    result: '{done, total, cancelled?, stopped?}',
  },
  designView: {
    module: 'designs',
    fields: '{judge, design, settings?, decoding?}',
    result:
      '{type, pairs, settings, count, unscored, jsonl, ranking?, consistency?, rankError?, replies?, unreadable?}',
  },

  // web/worker/writing.js: the judge writes
  generate: {
    module: 'writing',
    fields: '{prompt, chat?, settings?: {maxTokens, temperature, topP, seed, stop}}',
    result: '{prompt, tokens, text, stop, promptTokens, firstMs, ms}',
  },
  writeChecklist: {
    module: 'writing',
    fields: '{query, policy?, maxTokens?}',
    result: '{items, replies, tokens, promptVersion}',
  },

  // web/worker/bench.js: the benchmark page
  bench: {
    module: 'bench',
    fields: '{prefixTokens, items, suffixTokens, repeat, decodeTokens?}',
    result:
      '{workload, rounds, decodeTokens, decodeMs, backend, threads, kernels, kernelRace, wasmMemoryBytes, jsHeapBytes}',
  },
};

/** Events: the worker tells the page while a request runs. */
export const EVENTS = {
  download: '{done, total}: bytes of a model being downloaded',
  load: "{done, total}: tensors of the user's judge being loaded",
  'fallback-load': '{done, total}: the same judge reloaded on the CPU after the GPU failed',
  'probe-load': "{done, total}: the judge probe's second judge being loaded",
  notice: '{text}: something the user should know (a fallback, a view that could not be computed)',
  'judge-changed': "{judge}: the judge now runs elsewhere (loadJudge's result)",
  'engine-restarted': '{}: the engine trapped and was restarted without its judge',
  graded: '{judgment, detail, done, total, perMinute, secsPerResponse, secsPerToken, etaSec, standing?}',
  'grade-error': '{session_id, model, error}',
  standing: "{standing}: the run's live leaderboard",
  'probe-progress': '{done, total}',
  'design-progress': '{done, total, pairs}',
  'design-reply': '{reply, samples, score, vote}',
  'design-error': '{session_id, model, error}',
  'generate-token': '{n, piece, ms?}',
  'bench-progress': '{engine, round, of}',
};

/** Signals: the page tells the worker, no reply. `debugLoseDevice` is for tests only. */
export const SIGNALS = ['pause', 'resume', 'cancel', 'untilSettled', 'untilDone', 'debugLoseDevice'];

/**
 * The wasm module's pure functions the page may call by name (the `core` request): parsers of
 * uploads, core's lists and small computations. `debugPanic` is for tests only (a trap and the
 * engine's restart).
 */
export const CORE_CALLS = [
  'parseQueries',
  'parseQueriesWithChecklists',
  'parseResponses',
  'parseQueryRubrics',
  'parseLabels',
  'parseRanking',
  'labelsJsonl',
  'creationPrompt',
  'creationPolicies',
  'parseChecklistReply',
  'compareRankings',
  'strongAgreement',
  'reasonedProtocols',
  'designChoices',
  'probeKinds',
  'probeText',
  'promptStyles',
  'promptVersion',
  'runChoices',
  'kernelSelfTest',
  'debugPanic',
];

/** Why a message cannot be sent or handled, or null. */
export function refusal(kind, type) {
  if (kind === 'request' && !(type in REQUESTS)) return `unknown request ${type}`;
  if (kind === 'event' && !(type in EVENTS)) return `unknown event ${type}`;
  if (kind === 'signal' && !SIGNALS.includes(type)) return `unknown signal ${type}`;
  if (kind === 'core' && !CORE_CALLS.includes(type)) return `unknown engine call ${type}`;
  return null;
}
