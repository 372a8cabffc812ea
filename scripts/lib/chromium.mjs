// Headless Chromium for the browser tests and the benchmark scripts: no background traffic of its
// own; `args` added, and any flags in ROCKETJUDGE_BENCH_CHROME_ARGS (e.g.
// `--js-flags=--perf-basic-prof` to profile the tab).

import { chromium } from 'playwright-core';

export function launchChromium(args = []) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...args,
      ...(process.env.ROCKETJUDGE_BENCH_CHROME_ARGS || '').split(' ').filter(Boolean),
    ],
  });
}
