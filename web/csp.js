// The app's Content-Security-Policy, defined once. `rocketjudge serve` sends it as a header (adding
// its --model-origin hosts to connect-src); sw.js adds it to the worker scripts of a static copy,
// where no header and no <meta> tag reaches them; index.html and bench.html repeat `policy` in a
// <meta> tag (HTML cannot import it; a test checks the copies are this text, and `rocketjudge site`
// rewrites all of them together). Scripts, workers and connections stay on this origin: nothing the
// page holds can be sent anywhere else.
self.ROCKETJUDGE_CSP = {
  policy: "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self' blob:; connect-src 'self'; img-src 'self' data: blob:; style-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'",
  // Headers only: a <meta> policy cannot carry frame-ancestors.
  headerOnly: "frame-ancestors 'none'",
};
