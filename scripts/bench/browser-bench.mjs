// The browser benchmark, headless: open bench.html (served by `rocketjudge serve`) in Chromium, run
// rocketjudge and wllama side by side on the same model, threads and tokens, and print the table.
// Called by scripts/bench-browser.sh, which builds and serves first. Prints the page's JSON with --json.
//
//   node scripts/bench/browser-bench.mjs --origin http://127.0.0.1:PORT --model qwen2.5-coder-0.5b \
//     [--threads N] [--backends cpu,webgpu] [--prefix 1500] [--items 8] [--suffix 40] [--repeat 2]
//     [--decode 64] [--kernels NAME] [--no-wllama] [--json]

import { parseArgs } from 'node:util';
import { launchChromium } from '../lib/chromium.mjs';

const { values: a } = parseArgs({
  options: {
    origin: { type: 'string' },
    model: { type: 'string', default: 'qwen2.5-coder-0.5b' },
    threads: { type: 'string' },
    backends: { type: 'string', default: 'cpu,webgpu' },
    prefix: { type: 'string', default: '1500' },
    items: { type: 'string', default: '8' },
    suffix: { type: 'string', default: '40' },
    repeat: { type: 'string', default: '2' },
    decode: { type: 'string' },
    precision: { type: 'string', default: 'int8' },
    kernels: { type: 'string' },
    'no-wllama': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    timeout: { type: 'string', default: '3600' },
  },
});
if (!a.origin) throw new Error('--origin is required (scripts/bench-browser.sh passes it)');

const browser = await launchChromium([
  '--enable-unsafe-webgpu',
  '--enable-features=Vulkan',
  ...(process.env.ROCKETJUDGE_WEBGPU_ADAPTER === 'hardware' ? [] : ['--use-webgpu-adapter=swiftshader']),
]);
try {
  const page = await (await browser.newContext()).newPage();
  page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
  // ROCKETJUDGE_BENCH_DEBUG=1: the page's console too (wllama's and the engine's messages).
  if (process.env.ROCKETJUDGE_BENCH_DEBUG) page.on('console', (m) => console.error(`console.${m.type()}: ${m.text()}`));
  const q = new URLSearchParams({
    model: a.model,
    backends: a.backends,
    prefix: a.prefix,
    items: a.items,
    suffix: a.suffix,
    repeat: a.repeat,
    precision: a.precision,
    run: '1',
  });
  if (a.threads) q.set('threads', a.threads);
  if (a.kernels) q.set('kernels', a.kernels);
  if (a.decode) q.set('decode', a.decode);
  if (a['no-wllama']) q.set('wllama', 'off');
  if (process.env.ROCKETJUDGE_BENCH_DEBUG) q.set('wllamaLog', '1');
  let last = '';
  const tick = setInterval(async () => {
    const s = await page
      .locator('#status')
      .innerText()
      .catch(() => '');
    if (s && s !== last) {
      process.stderr.write(`${s.replace(/\s+/g, ' ')}\n`);
      last = s;
    }
  }, 2000);
  await page.goto(`${a.origin}/bench.html?${q}`);
  await page.waitForFunction(() => document.querySelector('#bench-json')?.textContent, null, {
    timeout: Number(a.timeout) * 1000,
    polling: 1000,
  });
  clearInterval(tick);
  const report = JSON.parse(await page.locator('#bench-json').textContent());
  if (a.json) {
    console.log(JSON.stringify(report, null, 2));
  } else {
    print(report);
  }
  process.exitCode = report.error || report.rows.some((r) => r.skipped?.startsWith('failed')) ? 1 : 0;
} finally {
  await browser.close();
}

function print(r) {
  const f = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '–');
  console.log(
    `${r.model} · ${r.threads} threads of ${r.cores} · ${r.isolated ? 'cross-origin isolated' : 'NOT isolated'} · WebGPU: ${r.adapter ? `${r.adapter.name}${r.adapter.software ? ' (software)' : ''}` : 'none'} · CPU products: ${r.precision}`,
  );
  console.log(r.userAgent);
  const rows = [['backend', 'engine', 'prefix tok/s', 's/response', 'decode tok/s', 'wasm memory MiB', 'workload']];
  const ratios = [];
  for (const row of r.rows) {
    const w = row.workload;
    const wtxt = `${w.prefixTokens} + ${w.items} × ${w.suffixTokens}${row.reduced ? ' (small: software adapter)' : ''}`;
    if (row.skipped) {
      rows.push([row.backend, `skipped: ${row.skipped}`, '', '', '', '', wtxt]);
      continue;
    }
    const o = row.rocketjudge;
    rows.push([
      row.backend,
      o.label,
      f(o.prefixTokensPerSec, 1),
      f(o.secondsPerResponse),
      f(o.decodeTokensPerSec, 1),
      f(o.wasmMemoryBytes / 2 ** 20, 0),
      wtxt,
    ]);
    if (row.wllama) {
      const wl = row.wllama;
      rows.push([
        '',
        `${wl.label}, prefix KV ${wl.prefixReused === false ? 'NOT ' : ''}reused)`,
        f(wl.prefixTokensPerSec, 1),
        f(wl.secondsPerResponse),
        f(wl.decodeTokensPerSec, 1),
        '',
        '',
      ]);
      ratios.push(
        `${row.backend}: prefix tokens/s ×${f(row.ratio.prefixTokensPerSec)} of wllama's; seconds per response ×${f(row.ratio.secondsPerResponse)} of wllama's${row.ratio.decodeTokensPerSec ? `; decode tokens/s ×${f(row.ratio.decodeTokensPerSec)} of wllama's` : ''}`,
      );
    }
  }
  const width = rows[0].map((_, c) => Math.max(...rows.map((x) => x[c].length)));
  for (const x of rows)
    console.log(
      x
        .map((c, i) => c.padEnd(width[i]))
        .join('  ')
        .trimEnd(),
    );
  for (const x of ratios) console.log(`ratio ${x}`);
  for (const row of r.rows) {
    const pilot = row.wllama?.pilot;
    if (pilot?.length)
      console.log(
        `${row.backend}: wllama's pilot (prefix tok/s on a short piece): ${pilot.map((p) => `${p.threads} thread${p.threads === 1 ? '' : 's'}, flash attention ${p.flashAttn ? 'on' : 'off'}: ${p.prefixTokensPerSec.toFixed(1)}`).join('; ')}`,
      );
    const race = row.rocketjudge?.kernelRace;
    if (race)
      console.log(
        `${row.backend}: our kernels' race on the first products (median time over each product's fastest): ${race.map((k) => `${k.kernel} ×${k.medianRatio.toFixed(2)}`).join(', ')}`,
      );
  }
  if (r.error) console.log(`error: ${r.error}`);
}
