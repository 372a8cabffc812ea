// "Benchmark this device": our engine and wllama (llama.cpp compiled to wasm, threads and WebGPU)
// side by side in this tab — the same GGUF blob, the same thread count, the same token ids.
//
// The workload is one graded response: a prefix (the grading prompt with the response) shared by
// checklist items. Our engine runs the prefix once and all items in one pass; wllama keeps the
// prefix's KV cache and evaluates each item on top of it (llama-server's prompt cache), its best way.
// Each engine runs alone (the other's memory freed), a short warm-up round then `repeat` timed
// rounds, medians reported. Wall-clock times from this page for both engines.
//
// URL parameters (the headless command, scripts/bench-browser.sh, uses them): model, threads,
// backends=cpu,webgpu, prefix, items, suffix, repeat, decode (tokens generated after the prefix: decode
// speed; 0 leaves it out), precision, kernels (our CPU kernels by name,
// e.g. to compare them; default: the winner of the engine's race between them), wllama=off (our engine
// only), run=1 (start at once). The result also lands as JSON in #bench-json.

import { EngineClient } from './lib/rpc.js';
import { h, mount, $, fmt, duration } from './lib/dom.js';
import { readManifest, modelSource } from './lib/manifest.js';
import { wantedThreads } from './lib/threads.js';

const params = new URLSearchParams(location.search);
const num = (k, d) => (params.has(k) ? Number(params.get(k)) : d);
const cores = navigator.hardwareConcurrency || 1;
const threads = Math.max(1, Math.min(num('threads', wantedThreads()), 64));
// On a software WebGPU adapter (SwiftShader, llvmpipe) a full response takes hours: WebGPU then runs
// this small workload, only to show that both engines work there.
// Tokens generated greedily on top of the prefix, one forward each (decode speed).
const DECODE = Math.max(0, num('decode', 64));
const TINY = { prefixTokens: 16, items: 2, suffixTokens: 4, decodeTokens: Math.min(DECODE, 2) };

const engine = new EngineClient(new URL('./worker/main.js', import.meta.url));
let manifest = [];
let adapter = null; // {name, software} or null
let running = false;

function status(text, kind = 'info') {
  mount(
    $('#status'),
    h('span', { class: 'badge privacy' }, 'Private: nothing leaves this tab'),
    text ? h('div', { class: `notice ${kind}` }, text) : null,
  );
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Summarise rounds of {prefixMs, itemsMs}: prefix tokens/s and seconds per graded response (medians). */
function summarise(rounds, prefixTokens) {
  const prefixMs = median(rounds.map((r) => r.prefixMs));
  const totalMs = median(rounds.map((r) => r.prefixMs + r.itemsMs));
  return { prefixTokensPerSec: prefixTokens / (prefixMs / 1000), secondsPerResponse: totalMs / 1000, rounds };
}

/** Our engine on `backend`: load, run, and hand back the model blob for wllama. */
async function runOurs(source, backend, workload, repeat, precision) {
  status(`rocketjudge: loading ${source.key} on ${backend}…`);
  const options = { precision, ...(params.get('kernels') ? { cpuKernels: params.get('kernels') } : {}) };
  const maxTokens = workload.prefixTokens + Math.max(workload.suffixTokens, workload.decodeTokens) + 8;
  const judge = await engine.request('loadJudge', { source, backend, maxTokens, options });
  if (judge.backendKind !== backend) {
    const blob = await engine.request('judgeBlob');
    await engine.request('unloadJudge');
    return { skipped: `rocketjudge could not run on ${backend}: ${judge.why}`, blob };
  }
  const r = await engine.request('bench', { ...workload, repeat });
  const blob = await engine.request('judgeBlob');
  await engine.request('unloadJudge');
  const decodeTokensPerSec = r.decodeTokens > 0 ? r.decodeTokens / (r.decodeMs / 1000) : null;
  // The CPU's description names its kernels already; WebGPU's does not.
  const kernels = r.kernels && !r.backend.includes(r.kernels) ? `, ${r.kernels}` : '';
  return {
    label: `rocketjudge (${r.backend}${kernels})`,
    ...summarise(r.rounds, r.workload.prefix.length),
    decodeTokensPerSec,
    backend: r.backend,
    kernels: r.kernels,
    kernelRace: r.kernelRace,
    wasmMemoryBytes: r.wasmMemoryBytes,
    jsHeapBytes: r.jsHeapBytes,
    threads: r.threads,
    tokens: r.workload,
    blob,
  };
}

/**
 * wllama at its best on `backend`, with the same blob and the same text (its completion API takes
 * text prompts; the workload is cut between words so that it tokenizes to the same ids:
 * llama-server's own token counts are kept to show it). Its settings that matter are tried first on a
 * short piece (a pilot): the page's thread count against one thread (its extra threads have added
 * little in some browsers), flash attention on and off; the fastest runs the workload. A software
 * adapter's small workload only shows that both engines run: there wllama runs once, at the page's
 * thread count with flash attention on, without a pilot (each try loads the model and compiles its
 * shaders again). Its batch holds the whole prompt.
 * `setCompat(null)`: wllama never fetches its Safari build from a CDN.
 */
async function runWllama(blob, backend, tokens, repeat, decodeTokens, tiny) {
  const { Wllama } = await import('./vendor/wllama/index.js');
  const version = (
    await fetch(new URL('./vendor/wllama/VERSION', import.meta.url))
      .then((r) => (r.ok ? r.text() : ''))
      .catch(() => '')
  ).trim();
  const configs = tiny
    ? []
    : [...new Set([threads, 1])].flatMap((t) => [true, false].map((flashAttn) => ({ threads: t, flashAttn })));
  const pilot = [];
  for (const c of configs) {
    const r = await wllamaRounds(Wllama, blob, backend, tokens, c, 1, true, 0);
    pilot.push({ ...c, prefixTokensPerSec: r.prefixTokensPerSec });
  }
  const best = pilot.length
    ? pilot.reduce((a, b) => (b.prefixTokensPerSec > a.prefixTokensPerSec ? b : a))
    : { threads, flashAttn: true };
  // Its timed rounds are the page's longest wait on a CPU (about 3.5 minutes a round of the default
  // workload on 2 cores): their time left, from the pilot's pace and the tokens a round evaluates.
  const roundTokens = tokens.prefix.length + tokens.suffixes.reduce((n, s) => n + s.length, 0);
  const secsPerRound = best.prefixTokensPerSec ? roundTokens / best.prefixTokensPerSec : null;
  const full = await wllamaRounds(Wllama, blob, backend, tokens, best, repeat, false, decodeTokens, secsPerRound);
  // Its build, from its CMakeLists: emscripten -O3 -msimd128 (no relaxed SIMD), 64-bit memory, JSPI.
  const build = 'Memory64, JSPI, SIMD128 without relaxed SIMD';
  const label = `wllama ${version} (${build}; ${full.threads} thread${full.threads === 1 ? '' : 's'}, flash attention ${best.flashAttn ? 'on' : 'off'}${full.webgpu ? ', WebGPU' : ''}`;
  return { ...full, version: version || null, build, flashAttn: best.flashAttn, pilot, label };
}

/**
 * `repeat` timed rounds of wllama with settings `c` (after a warm-up), then `decodeTokens` generated;
 * a `pilot` runs a short piece with one item. `secsPerRound` (where known): the status says the
 * rounds' time left.
 */
async function wllamaRounds(Wllama, blob, backend, tokens, c, repeat, pilot, decodeTokens, secsPerRound = null) {
  const what = `${c.threads} thread${c.threads === 1 ? '' : 's'}, flash attention ${c.flashAttn ? 'on' : 'off'}`;
  status(`wllama: loading the same file on ${backend} (${what})…`);
  // ?wllamaLog=1: wllama's and llama.cpp's own log in the console.
  const verbose = params.get('wllamaLog') === '1';
  const quiet = { debug() {}, log() {}, info() {}, warn: console.warn, error: console.error };
  const wl = new Wllama(
    { default: new URL('./vendor/wllama/wllama.wasm', import.meta.url).href },
    { logger: verbose ? console : quiet, suppressNativeLog: !verbose },
  );
  if (typeof wl.setCompat === 'function') wl.setCompat(null);
  const { prefix, suffixes, suffixTexts } = tokens;
  const prefixText = pilot ? tokens.prefixText.split(' ').slice(0, 200).join(' ') : tokens.prefixText;
  const nCtx = prefix.length + Math.max(...suffixes.map((s) => s.length), decodeTokens) + 64;
  try {
    await wl.loadModel([blob], {
      n_ctx: nCtx,
      n_batch: nCtx,
      n_ubatch: nCtx,
      flash_attn: c.flashAttn,
      n_threads: c.threads,
      n_gpu_layers: backend === 'webgpu' ? 999 : 0,
      n_parallel: 1,
    });
    const complete = (prompt, cache) =>
      wl.createCompletion({ prompt, max_tokens: 1, temperature: 0, cache_prompt: cache });
    const rounds = [];
    const seen = { prefixTokens: 0, itemTokens: [], cachedTokens: Infinity };
    for (let r = 0; r <= repeat; r++) {
      const left =
        secsPerRound && r > 0 ? ` About ${duration((repeat - r + 1) * secsPerRound)} left for its rounds.` : '';
      status(
        `wllama on ${backend} (${what})${pilot ? ', trying its settings on a short piece' : ''}: round ${r} of ${repeat}${r === 0 ? ' (warm-up)' : ''}…${left}`,
      );
      // Round 0 warms up on a short piece (as our engine's does): the first words and one item.
      const text = r === 0 ? prefixText.split(' ').slice(0, 48).join(' ') : prefixText;
      const items = r === 0 || pilot ? suffixTexts.slice(0, 1) : suffixTexts;
      const t0 = performance.now();
      // The prefix from scratch (no reuse of the previous round), then each item on top of it.
      const first = await complete(text, false);
      const t1 = performance.now();
      const itemTokens = [];
      for (const s of items) {
        const out = await complete(text + s, true);
        if (out.timings && r > 0) {
          seen.cachedTokens = Math.min(seen.cachedTokens, out.timings.cache_n);
          itemTokens.push(out.timings.prompt_n);
        }
      }
      const t2 = performance.now();
      if (r > 0) {
        rounds.push({ prefixMs: t1 - t0, itemsMs: t2 - t1 });
        seen.prefixTokens = first.timings ? first.timings.prompt_n + first.timings.cache_n : NaN;
        seen.itemTokens = itemTokens;
      }
    }
    // Decode: generating on top of the cached prefix, decodeTokens + 1 tokens against 1 (greedy, the
    // end of generation ignored); llama-server's own count and speed of the generated tokens are kept.
    let decode = null;
    if (decodeTokens > 0) {
      status(`wllama on ${backend} (${what}): generating ${decodeTokens} tokens…`);
      const gen = (n) =>
        wl.createCompletion({
          prompt: prefixText,
          max_tokens: n,
          temperature: 0,
          cache_prompt: true,
          ignore_eos: true,
        });
      await gen(1);
      const t0 = performance.now();
      await gen(1);
      const t1 = performance.now();
      const out = await gen(decodeTokens + 1);
      const t2 = performance.now();
      const generated = out.timings ? out.timings.predicted_n : decodeTokens + 1;
      decode = {
        tokensPerSec: (generated - 1) / ((t2 - t1 - (t1 - t0)) / 1000),
        generated,
        ownTokensPerSec: out.timings?.predicted_per_second ?? null,
      };
    }
    return {
      ...summarise(rounds, pilot ? seen.prefixTokens : prefix.length),
      decodeTokensPerSec: decode?.tokensPerSec ?? null,
      decode,
      threads: wl.getNumThreads(),
      multithread: wl.isMultithread(),
      webgpu: backend === 'webgpu',
      // llama-server's counts: the prompt's tokens, and those taken from the cache for each item (the
      // prefix, when its KV is reused).
      tokens: { prefix: seen.prefixTokens, items: seen.itemTokens },
      prefixReused: Number.isFinite(seen.cachedTokens) ? seen.cachedTokens >= prefix.length - 1 : null,
    };
  } finally {
    await wl.exit().catch(() => {});
  }
}

async function run(opts) {
  if (running) return;
  running = true;
  // Run is disabled while a run lasts, and the result area says what runs instead of "Not run yet".
  $('#bench-run').disabled = true;
  mount(
    $('#result'),
    h(
      'p',
      { class: 'hint', id: 'bench-running' },
      `Running on ${opts.backends.join(' and ')}: each engine loads the model, warms up and runs ${opts.repeat} timed round${opts.repeat === 1 ? '' : 's'}; wllama first tries its settings on a short piece. The table fills in as each backend finishes.`,
    ),
  );
  const report = {
    model: opts.model,
    threads,
    cores,
    isolated: self.crossOriginIsolated === true,
    userAgent: navigator.userAgent,
    adapter,
    precision: opts.precision,
    rows: [],
  };
  try {
    const m = manifest.find((x) => x.name === opts.model);
    if (!m) throw new Error(`model ${opts.model} is not in models/manifest.json`);
    const source = modelSource(m);
    for (const backend of opts.backends) {
      const tiny = backend === 'webgpu' && (!adapter || adapter.software);
      const workload = tiny ? TINY : opts.workload;
      const row = {
        backend,
        workload,
        reduced: tiny ? 'software WebGPU adapter: a small workload, only to show both engines run' : null,
      };
      if (backend === 'webgpu' && !adapter) {
        row.skipped = 'this browser has no WebGPU adapter';
        report.rows.push(row);
        continue;
      }
      // A backend that fails is reported in its row; the other rows keep their numbers.
      try {
        const ours = await runOurs(source, backend, workload, opts.repeat, opts.precision);
        row.rocketjudge = {
          ...ours,
          blob: undefined,
          tokens: ours.tokens && {
            prefix: ours.tokens.prefix.length,
            items: ours.tokens.suffixes.map((x) => x.length),
          },
        };
        if (ours.skipped) row.skipped = ours.skipped;
        else if (params.get('wllama') !== 'off')
          row.wllama = await runWllama(ours.blob, backend, ours.tokens, opts.repeat, workload.decodeTokens, tiny);
      } catch (e) {
        console.error(e);
        row.skipped = `failed on ${backend}: ${e.message || e}`;
        row.rocketjudge = row.wllama = undefined;
      }
      if (row.wllama) {
        row.ratio = {
          prefixTokensPerSec: row.rocketjudge.prefixTokensPerSec / row.wllama.prefixTokensPerSec,
          secondsPerResponse: row.rocketjudge.secondsPerResponse / row.wllama.secondsPerResponse,
          decodeTokensPerSec: row.wllama.decodeTokensPerSec
            ? row.rocketjudge.decodeTokensPerSec / row.wllama.decodeTokensPerSec
            : null,
        };
      }
      report.rows.push(row);
      renderResult(report);
    }
    report.done = true;
    status('Done.');
  } catch (e) {
    report.error = e.message || String(e);
    console.error(e);
    status(`The benchmark failed: ${report.error}`, 'error');
  }
  renderResult(report);
  // Without the per-round p(Yes) (long); the table has the rest.
  $('#bench-json').textContent = JSON.stringify(report, (k, v) => (k === 'pYes' ? undefined : v));
  running = false;
  $('#bench-run').disabled = false;
}

const MIB = 2 ** 20;

/** Our engine's memory after a run: wasm (its peak) and, where the browser says, the JS heap. */
function memory(o) {
  if (!Number.isFinite(o.wasmMemoryBytes)) return '–';
  return `wasm ${fmt(o.wasmMemoryBytes / MIB, 0)} MiB${Number.isFinite(o.jsHeapBytes) ? `, JS ${fmt(o.jsHeapBytes / MIB, 0)} MiB` : ''}`;
}

function renderResult(report) {
  const rows = [];
  for (const r of report.rows) {
    const w = r.workload;
    const label = `${r.backend}${r.reduced ? ' (small workload)' : ''}`;
    if (r.skipped) {
      rows.push(h('tr', {}, h('td', {}, label), h('td', { colspan: 7 }, r.skipped)));
      continue;
    }
    const o = r.rocketjudge;
    const wl = r.wllama;
    rows.push(
      h(
        'tr',
        {},
        h('td', {}, label),
        h('td', {}, o.label),
        h('td', { class: 'num' }, fmt(o.prefixTokensPerSec, 1)),
        h('td', { class: 'num' }, fmt(o.secondsPerResponse, 2)),
        h('td', { class: 'num' }, fmt(o.decodeTokensPerSec, 1)),
        h('td', {}, ''),
        h('td', { class: 'num' }, memory(o)),
        h('td', {}, `${w.prefixTokens} + ${w.items} × ${w.suffixTokens} tokens`),
      ),
    );
    if (wl) {
      rows.push(
        h(
          'tr',
          {},
          h('td', {}, ''),
          h('td', {}, `${wl.label}${wl.prefixReused === false ? '; prefix KV NOT reused' : ', prefix KV reused'})`),
          h('td', { class: 'num' }, fmt(wl.prefixTokensPerSec, 1)),
          h('td', { class: 'num' }, fmt(wl.secondsPerResponse, 2)),
          h('td', { class: 'num' }, fmt(wl.decodeTokensPerSec, 1)),
          h(
            'td',
            { class: 'num' },
            `prefix ×${fmt(r.ratio.prefixTokensPerSec)}, time ×${fmt(r.ratio.secondsPerResponse)}${r.ratio.decodeTokensPerSec ? `, decode ×${fmt(r.ratio.decodeTokensPerSec)}` : ''}`,
          ),
          h('td', {}, '–'),
          h('td', {}, ''),
        ),
      );
    }
  }
  mount(
    $('#result'),
    h(
      'p',
      { class: 'hint' },
      `${report.model} · ${report.threads} thread${report.threads === 1 ? '' : 's'} of ${report.cores} · ${report.isolated ? 'cross-origin isolated' : 'not isolated (one thread)'} · WebGPU: ${report.adapter ? `${report.adapter.name}${report.adapter.software ? ' (software)' : ''}` : 'none'}`,
    ),
    h(
      'div',
      { class: 'scroll' },
      h(
        'table',
        { id: 'bench-table' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            [
              'backend',
              'engine',
              'prefix tokens/s',
              's / graded response',
              'decode tokens/s',
              'ratio (ours / wllama)',
              'memory',
              'workload',
            ].map((t) => h('th', {}, t)),
          ),
        ),
        h('tbody', {}, rows),
      ),
    ),
    h(
      'p',
      { class: 'hint' },
      `wllama runs with the settings that were fastest on a short piece first: this page's thread count or one, flash attention on or off (its pilot is in the JSON below; on a software adapter it runs once, at this page's thread count with flash attention on). Ratios: prefix throughput (higher is better for rocketjudge) and seconds per graded response (lower is better). Medians of the timed rounds after one warm-up. Decode: ${DECODE} tokens (${TINY.decodeTokens} on a software adapter) generated greedily on top of the prefix, one forward each (wllama: a completion of that many + 1 tokens against one of 1, end of generation ignored). Memory: our engine's WebAssembly memory after the run (its peak: wasm memory only grows; 32-bit wasm stops at 4 GiB) and the JavaScript heap of its worker where the browser reports it.`,
    ),
    report.error ? h('p', { class: 'notice error' }, report.error) : null,
  );
}

function renderSetup() {
  const modelSel = h(
    'select',
    { id: 'bench-model', 'aria-label': 'Judge model' },
    manifest.map((m) =>
      h(
        'option',
        { value: m.name, selected: m.name === (params.get('model') || 'qwen2.5-coder-0.5b') },
        m.display || m.name,
      ),
    ),
  );
  const field = (id, label, value) =>
    h('label', {}, `${label} `, h('input', { type: 'number', id, value, min: 1, size: 6 }));
  const cpuBox = h('input', { type: 'checkbox', id: 'bench-cpu', checked: true });
  const gpuBox = h('input', { type: 'checkbox', id: 'bench-webgpu', checked: !!adapter });
  const go = h('button', { id: 'bench-run', class: 'primary', onclick: () => run(readSetup()) }, 'Run the benchmark');
  mount(
    $('#setup'),
    h(
      'div',
      { class: 'row' },
      modelSel,
      field('bench-prefix', 'prefix tokens', num('prefix', 1500)),
      field('bench-items', 'items', num('items', 8)),
      field('bench-suffix', 'tokens per item', num('suffix', 40)),
      field('bench-repeat', 'timed rounds', num('repeat', 2)),
    ),
    h('div', { class: 'row' }, h('label', {}, cpuBox, ' CPU'), h('label', {}, gpuBox, ' WebGPU'), go),
    h(
      'p',
      { class: 'hint' },
      `rocketjudge runs on ${threads} thread${threads === 1 ? '' : 's'} (the app's setting; ?threads=N here); wllama is tried on ${threads === 1 ? '1 thread' : `${threads} threads and on 1`} and runs on its faster. `,
      adapter
        ? `WebGPU adapter: ${adapter.name}${adapter.software ? ' — software, so WebGPU runs a small workload only' : ''}.`
        : 'No WebGPU adapter in this browser.',
      ' The model is downloaded once (and cached) if this browser does not have it yet.',
    ),
  );
}

function readSetup() {
  const v = (id) => Number($(`#${id}`).value);
  return {
    model: $('#bench-model').value,
    workload: {
      prefixTokens: v('bench-prefix'),
      items: v('bench-items'),
      suffixTokens: v('bench-suffix'),
      decodeTokens: DECODE,
    },
    repeat: Math.max(1, v('bench-repeat')),
    backends: [$('#bench-cpu').checked && 'cpu', $('#bench-webgpu').checked && 'webgpu'].filter(Boolean),
    precision: params.get('precision') || 'int8',
  };
}

engine.on('download', (m) => status(`Downloading the model: ${Math.round((100 * m.done) / (m.total || 1))}%`));
engine.on('bench-progress', (m) =>
  status(`rocketjudge: round ${m.round} of ${m.of}${m.round === 0 ? ' (warm-up)' : ''}…`),
);

async function boot() {
  status('Starting…');
  try {
    await engine.request('init', { threads });
    const gpu = await engine.request('gpu');
    adapter = gpu.available ? { name: gpu.name, software: !gpu.hardware } : null;
    manifest = await readManifest();
  } catch (e) {
    status(`Could not start: ${e.message}`, 'error');
    return;
  }
  renderSetup();
  status('');
  if (params.get('run') === '1') {
    const opts = readSetup();
    if (params.has('backends')) opts.backends = params.get('backends').split(',').filter(Boolean);
    run(opts);
  }
}

boot();
