// The judge models the page offers (models/manifest.json, written by `rocketjudge serve` and
// `rocketjudge site`) and where each one's bytes come from.

/** The manifest's models, `[]` when there is none (then models come from files or URLs). */
export async function readManifest() {
  return (await (await fetch('models/manifest.json')).json()).models;
}

/**
 * Where a manifest model's bytes come from: `rocketjudge serve` serves the cached file at
 * models/<name>.gguf; a static build (`rocketjudge site`) lists its parts (`web.parts`, joined in
 * order) or a URL elsewhere (`web.url`). URLs are absolute: the worker resolves relative ones against
 * its own script, not the page.
 */
export function modelSource(m) {
  const web = m.web || {};
  const urls = web.parts ? web.parts.map((p) => p.url) : [web.url || `models/${m.name}.gguf`];
  return { key: m.name, urls: urls.map((u) => new URL(u, location.href).href), sha256: m.sha256, size: m.size };
}

/**
 * The judge the manifest recommends for this device, by its `role`: the one "recommended" where it
 * keeps pace (`fast`: a hardware GPU, or the threaded CPU engine with relaxed SIMD), else the one
 * that is "fast and rough" (the 1.5B takes about 2.5 times the 0.5B's time, which one thread without
 * relaxed SIMD cannot spare).
 */
export function recommendedModel(models, fast) {
  const role = (prefix) => models.find((x) => (x.role || '').startsWith(prefix));
  const m = (fast ? null : role('fast and rough')) || role('recommended');
  return m ? m.name : null;
}

/**
 * How far to trust `judge`'s rankings: {text: its manifest entry's `trust` note, measured: where its
 * figures were measured}; a judge the manifest does not know gets the general caution.
 */
export function trustNote(models, judge) {
  const trust = (models || []).find((m) => m.name === judge)?.trust;
  if (!trust) return { text: 'Small judges vary: validate against a reference before trusting a ranking.' };
  // Where the figures come from (a measurement and its report in the repository) is for a hover, not the page.
  return { text: trust.note, measured: `Measured: ${trust.measured}.` };
}

/**
 * `url#sha256=HEX` (as pip's links and `rocketjudge --model URL#sha256=HEX`) → {url, sha256}; throws
 * on a malformed hash.
 */
export function splitHash(href) {
  const u = new URL(href);
  const m = /^sha256=(.*)$/.exec(u.hash.slice(1));
  u.hash = '';
  if (!m) return { url: u.href, sha256: null };
  if (!/^[0-9a-fA-F]{64}$/.test(m[1])) throw new Error('the #sha256= part of the URL must be 64 hexadecimal digits');
  return { url: u.href, sha256: m[1].toLowerCase() };
}
