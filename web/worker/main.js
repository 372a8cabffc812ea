// The engine worker: it owns the wasm module, the judge model, the stored judgments and the
// grading loop; the page only renders. This file routes the protocol (web/protocol.js): each
// request to the one module that handles it (named in the protocol), signals to the judge's run
// control, and each reply or error back to the page.

import { REQUESTS, SIGNALS } from '../protocol.js';
import { describeError, errorKind, recoverIfTrapped, handlers as engineRequests } from './engine.js';
import { handlers as models } from './models.js';
import { handlers as judge, signal } from './judge.js';
import { handlers as grading } from './grading.js';
import { handlers as views } from './views.js';
import { handlers as probes } from './probes.js';
import { handlers as designs } from './designs.js';
import { handlers as writing } from './writing.js';
import { handlers as bench } from './bench.js';

const MODULES = { engine: engineRequests, models, judge, grading, views, probes, designs, writing, bench };

/** Each request's handler, from the module the protocol names; a request without one is a bug here. */
const handlers = Object.fromEntries(
  Object.entries(REQUESTS).map(([type, { module }]) => {
    const h = MODULES[module]?.[type];
    if (!h) throw new Error(`web/protocol.js: request ${type} has no handler in web/worker/${module}.js`);
    return [type, h];
  }),
);
for (const [module, hs] of Object.entries(MODULES)) {
  for (const type of Object.keys(hs)) {
    if (REQUESTS[type]?.module !== module)
      throw new Error(`web/worker/${module}.js answers ${type}, which web/protocol.js does not list there`);
  }
}

self.onmessage = async (ev) => {
  const msg = ev.data;
  if (SIGNALS.includes(msg.type)) {
    signal(msg.type);
    return;
  }
  const h = handlers[msg.type];
  if (!h) {
    self.postMessage({ id: msg.id, ok: false, error: `unknown request ${msg.type}`, kind: 'input' });
    return;
  }
  try {
    self.postMessage({ id: msg.id, ok: true, result: await h(msg) });
  } catch (e) {
    await recoverIfTrapped(e).catch(() => {});
    // A malformed file's error says where (file, line, field) and what, for the page to phrase.
    const place =
      e && e.kind === 'format' ? { file: e.file, line: e.line, field: e.field, detail: e.detail } : undefined;
    self.postMessage({ id: msg.id, ok: false, error: describeError(e), kind: errorKind(e), place });
  }
};
