// The CPU engine's thread count, one setting for the app and the benchmark page (every core by
// default). The engine reads it when it starts, so a change applies after a reload.

const KEY = 'rocketjudge-threads';

export function wantedThreads() {
  return Number(localStorage.getItem(KEY)) || navigator.hardwareConcurrency || 1;
}

export function saveThreads(n) {
  localStorage.setItem(KEY, String(n));
}
