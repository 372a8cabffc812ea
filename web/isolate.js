// Make the page cross-origin isolated on hosts that cannot send the headers for it (see ../sw.js):
// register the service worker that adds them, and reload once when it takes control. Where the page
// is isolated already (`rocketjudge serve`), or service workers are unavailable (a private window,
// file://, a browser policy), nothing happens and the engine runs on one thread.
(() => {
  const flag = 'rocketjudge-isolation-reload';
  if (self.crossOriginIsolated) {
    sessionStorage.removeItem(flag);
    return;
  }
  if (!('serviceWorker' in navigator) || !self.isSecureContext) return;
  // Once per tab session: if the reload did not isolate the page, do not loop.
  const reloadOnce = () => {
    if (sessionStorage.getItem(flag)) return;
    sessionStorage.setItem(flag, '1');
    location.reload();
  };
  navigator.serviceWorker.register(new URL('../sw.js', document.currentScript.src)).then(
    () => {
      if (navigator.serviceWorker.controller) reloadOnce();
      else navigator.serviceWorker.addEventListener('controllerchange', reloadOnce);
    },
    () => {
      /* not allowed here: one thread */
    },
  );
})();
