// Building the page from data without ever parsing data as HTML: every string becomes a text node
// or an attribute value; URLs from data are never put into href/src.

/**
 * Create an element. `attrs`: class, on<event> handlers, boolean and string attributes, `style` as an
 * object. Children: nodes or strings (as text), arrays are flattened, null/false skipped.
 * @returns {HTMLElement}
 */
export function h(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'style' && typeof v === 'object') Object.assign(e.style, v);
    else if (k.startsWith('on') && typeof v === 'function') e.addEventListener(k.slice(2), v);
    else if (k === 'href' || k === 'src') e.setAttribute(k, safeUrl(v));
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c == null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

/** Only same-origin relative URLs, blob: and data: are allowed in href/src. */
function safeUrl(v) {
  const s = String(v);
  if (s.startsWith('blob:') || s.startsWith('data:') || s.startsWith('#')) return s;
  const u = new URL(s, location.href);
  return u.origin === location.origin ? s : '#';
}

/** The message(s) about a control, to stand right beside it (role=alert: read out when shown); null
 * when there is none. For views drawn from state: keep the message in the state. */
export function messagesBeside(id, messages) {
  const lines = errorLines(messages);
  return lines.length ? h('div', { class: 'upload-errors', id, role: 'alert' }, lines) : null;
}

/** An empty place beside a control for its message, filled in place (`slot.say(text)`; `say(null)`
 * clears it): for controls whose view is not redrawn after the failure. */
export function messageSlot(id) {
  const el = h('div', { class: 'upload-errors', id, role: 'alert' });
  el.say = (text) => mount(el, errorLines(text));
  return el;
}

/** One error paragraph per message (none for null or an empty list). */
function errorLines(messages) {
  return [messages]
    .flat()
    .filter(Boolean)
    .map((m) => h('p', { class: 'notice error' }, m));
}

/** Attributes of a box of text that may scroll: a named region that takes keyboard focus (so the
 * arrow keys scroll it). */
export function scrollable(name) {
  return { tabindex: 0, role: 'region', 'aria-label': name };
}

/** Replace the children of `el`; every table in them gets its headers aligned (see alignHeaders). */
export function mount(el, ...children) {
  el.replaceChildren(
    ...children
      .flat(Infinity)
      .filter((c) => c != null && c !== false)
      .map((c) => (c instanceof Node ? c : document.createTextNode(String(c)))),
  );
  el.querySelectorAll('table').forEach(alignHeaders);
}

/**
 * A column's header stands where its values stand: a header above numbers (cells of class `num`,
 * right-aligned) is right-aligned too, so a number is never read under its neighbour's header.
 */
export function alignHeaders(table) {
  const head = table.tHead && table.tHead.rows[0];
  const first = table.tBodies[0] && table.tBodies[0].rows[0];
  if (!head || !first) return;
  [...head.cells].forEach((th, i) => {
    const td = first.cells[i];
    if (td) th.classList.toggle('num', td.classList.contains('num'));
  });
}

export function $(sel, root = document) {
  return root.querySelector(sel);
}

/** Offer `text` as a file download (nothing is uploaded anywhere). */
export function download(name, text, type = 'application/json') {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = h('a', { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function fmt(x, digits = 2) {
  return x == null || Number.isNaN(x) ? '–' : Number(x).toFixed(digits);
}

export function bytes(n) {
  if (!n) return '0 B';
  const u = ['B', 'KB', 'MB', 'GB'];
  const i = Math.min(u.length - 1, Math.floor(Math.log10(n) / 3));
  return `${(n / 10 ** (3 * i)).toFixed(i ? 1 : 0)} ${u[i]}`;
}

export function duration(s) {
  if (!Number.isFinite(s)) return '–';
  s = Math.round(s);
  if (s >= 3600) return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
}
