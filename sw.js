// Cross-origin isolation and the page's policy for static hosting. A static host (GitHub Pages, an S3
// bucket, a plain file server) cannot send the Cross-Origin-Opener-Policy and
// Cross-Origin-Embedder-Policy headers that make a page cross-origin isolated, which the CPU engine
// needs for threads (shared memory), nor the Content-Security-Policy header. This service worker adds
// them to the page and to its worker scripts as they pass through it: a worker takes its policy from
// its own response, not from the page's <meta> tag, and web/worker/ downloads models. Every other
// request (scripts, wasm, models) goes to the network untouched. `rocketjudge serve` sends the
// headers itself, and web/isolate.js then registers nothing. The worker sees only this origin's
// requests and keeps nothing.

importScripts('web/csp.js');
const { policy, headerOnly } = self.ROCKETJUDGE_CSP;
const CSP = `${policy}; ${headerOnly}`;

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET' || new URL(request.url).origin !== self.location.origin) return;
  if (request.mode !== 'navigate' && request.destination !== 'worker') return;
  event.respondWith(
    (async () => {
      const response = await fetch(request);
      // A redirect keeps its own URL only if passed on as it is (isolation then starts on the next load).
      if (response.status === 0 || response.redirected) return response;
      const headers = new Headers(response.headers);
      headers.set('Cross-Origin-Opener-Policy', 'same-origin');
      headers.set('Cross-Origin-Embedder-Policy', 'require-corp');
      headers.set('Content-Security-Policy', CSP);
      return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
    })(),
  );
});
