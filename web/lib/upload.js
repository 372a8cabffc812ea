// Uploaded files, checked before a parser sees them, and every problem said in plain words: an empty
// file, a file that is not text, one JSON document where JSON Lines are expected, and the parsers'
// errors (file, line, field, what was expected) without their internal notation, shown beside the
// control they concern.

import { h } from './dom.js';

/** What each upload control takes, in words. */
export const EXPECTED = {
  jsonl: 'JSON Lines (one JSON object per line)',
  'jsonl-or-json': 'JSON Lines (one JSON object per line) or, for AlpacaEval outputs, one JSON list',
  json: 'a JSON document',
  'json-or-jsonl': 'a JSON list or JSON Lines',
  'jsonl-json-or-csv': 'JSON Lines, a JSON list or CSV',
};

/** A problem with an upload, already in plain words. */
export class UploadError extends Error {}

/**
 * The bytes of `file` when it can be what `expect` (a key of EXPECTED) names; an UploadError when it
 * is empty, not text, or (for JSON Lines) one JSON document spread over several lines.
 */
export async function readUpload(file, expect = 'jsonl') {
  const bytes = new Uint8Array(await file.arrayBuffer());
  const what = EXPECTED[expect];
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new UploadError(
      `${file.name} is not a text file (it holds bytes that are not UTF-8 text): expected ${what}.`,
    );
  }
  if (!text.trim()) throw new UploadError(`${file.name} is empty: expected ${what}.`);
  if (text.includes('\0'))
    throw new UploadError(`${file.name} is not a text file (it holds NUL bytes): expected ${what}.`);
  if (expect !== 'json') {
    const lines = text.split('\n').filter((l) => l.trim()).length;
    // A JSON list is a format of its own where one is allowed (AlpacaEval outputs, rankings, Arena
    // battles); any other JSON document over several lines is not JSON Lines.
    const list = expect !== 'jsonl' && text.trimStart().startsWith('[');
    if (lines > 1 && !list && isJson(text)) {
      throw new UploadError(
        `${file.name} is one JSON document over ${lines} lines, not JSON Lines: expected each JSON object on a line of its own.`,
      );
    }
  }
  return bytes;
}

function isJson(text) {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** An error from reading an upload, in plain words: the parser's place (file, line, field) and what was wrong. */
export function plainError(e) {
  if (e instanceof UploadError || !e.place) return String(e.message).replace(/`/g, '"');
  const { file, line, field, detail } = e.place;
  const where = `${file}${line ? `, line ${line}` : ''}`;
  if (/^invalid JSON/.test(detail))
    return `${where}: not valid JSON (expected one complete JSON object${line ? ' on the line' : ''}).`;
  return `${where}${field ? `, field "${field}"` : ''}: ${detail.replace(/`/g, '"')}.`.replace(/\.\.$/, '.');
}

/**
 * A file control (one file): the chosen file is checked as `expect` names (a key of EXPECTED) and
 * given with its bytes to `use(file, bytes)`; a failure of either goes, in plain words, to
 * `failed(message)`; `done()` runs after both (the view's redraw).
 */
export function uploadControl({ id, accept, label, expect = 'jsonl', title }, { use, failed, done = () => {} }) {
  const input = h('input', { type: 'file', accept, id, 'aria-label': label, title });
  input.addEventListener('change', async () => {
    const file = input.files[0];
    if (!file) return;
    try {
      await use(file, await readUpload(file, expect));
    } catch (e) {
      failed(plainError(e));
    }
    done();
  });
  return input;
}
