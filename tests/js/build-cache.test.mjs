// The compiled-dependency cache of scripts/lib/build-cache.sh, on real cargo builds of a probe crate
// named like ours (rocketjudge-*) with one registry dependency (cfg-if, already in cargo's download
// cache: the suite has built the workspace by now). What it must hold: a fresh clone starts from the
// cached build and recompiles only its own crate, even where its files are older than the cached
// build (cargo hashes a workspace crate by its path relative to the workspace, so without dropping
// its fingerprints another checkout's binary would look fresh); a checkout that has a target/ is
// left alone; the cache is rewritten only when its inputs or its build folders change.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
const work = mkdtempSync(join(tmpdir(), 'rj-build-cache-'));
const cache = join(work, 'cache');
const env = { ...process.env, CARGO_TERM_COLOR: 'never' };
delete env.CARGO_TARGET_DIR;
delete env.CARGO_BUILD_BUILD_DIR;
after(() => rmSync(work, { recursive: true, force: true }));

/** A checkout of the probe crate whose binary prints `says`; its files dated `mtime` (seconds). */
function checkout(name, says, mtime) {
  const dir = join(work, name);
  mkdirSync(join(dir, 'src'), { recursive: true });
  const files = {
    'Cargo.toml':
      '[package]\nname = "rocketjudge-probe"\nversion = "0.1.0"\nedition = "2021"\n\n' +
      '[dependencies]\ncfg-if = "=1.0.5"\n',
    'src/main.rs': `fn main() {\n    cfg_if::cfg_if! { if #[cfg(unix)] { println!("${says}"); } }\n}\n`,
  };
  for (const [file, text] of Object.entries(files)) {
    writeFileSync(join(dir, file), text);
    if (mtime) utimesSync(join(dir, file), mtime, mtime);
  }
  return dir;
}

/** Run the cache's shell function `fn` in `dir` on the cache `at`; what it logged. */
function cacheFn(dir, fn, at = cache) {
  return execFileSync(
    'bash',
    [
      '-c',
      `set -euo pipefail; source "${ROOT}/scripts/lib/setup.sh"; source "${ROOT}/scripts/lib/build-cache.sh"; ${fn} 2>&1`,
    ],
    { cwd: dir, env: { ...env, ROCKETJUDGE_BUILD_CACHE: at }, encoding: 'utf8' },
  );
}

/** `cargo build --release --offline -v` in `dir`: what cargo said (its stderr). */
function cargoBuild(dir) {
  const r = spawnSync('cargo', ['build', '--release', '--offline', '-v'], { cwd: dir, env, encoding: 'utf8' });
  assert.equal(r.status, 0, `cargo build in ${dir} failed: ${r.stderr}`);
  return r.stderr;
}

/** What the probe built in `dir` prints. */
const run = (dir) => execFileSync(join(dir, 'target/release/rocketjudge-probe'), { encoding: 'utf8' }).trim();

const fingerprints = (target) => readdirSync(join(target, 'release/.fingerprint'));

test('a fresh clone starts from the cached build and recompiles only its own crate, even when its files are older', () => {
  const first = checkout('first', 'first');
  cargoBuild(first);
  assert.match(cacheFn(first, 'save_build_cache'), /keeping the compiled dependencies/);
  assert.ok(existsSync(join(cache, 'stamp')));
  const kept = fingerprints(join(cache, 'target'));
  assert.ok(
    kept.some((f) => f.startsWith('cfg-if-')),
    kept.join(' '),
  );
  assert.deepEqual(
    kept.filter((f) => f.startsWith('rocketjudge-')),
    [],
    'our own crates are not kept as built',
  );

  // Files dated before the cached build: cargo alone would take the first checkout's binary as fresh.
  const older = checkout('older', 'older', Date.parse('2001-01-01') / 1000);
  assert.match(cacheFn(older, 'seed_build_cache'), /starting from the compiled dependencies/);
  const log = cargoBuild(older);
  assert.match(log, /Fresh cfg-if/, log);
  assert.match(log, /Compiling rocketjudge-probe/, log);
  assert.equal(run(older), 'older');
});

test('a checkout that has a target/ is left as it is, and an unchanged cache is not written again', () => {
  const dir = checkout('own', 'own');
  mkdirSync(join(dir, 'target'));
  writeFileSync(join(dir, 'target/mine'), '');
  assert.equal(cacheFn(dir, 'seed_build_cache'), '');
  assert.deepEqual(readdirSync(join(dir, 'target')), ['mine']);

  // The first test's cache holds release/; a build with the same inputs and folders keeps it as it is.
  const again = checkout('again', 'again');
  cacheFn(again, 'seed_build_cache');
  cargoBuild(again);
  const before = statSync(join(cache, 'target')).ino;
  assert.equal(cacheFn(again, 'save_build_cache'), '');
  assert.equal(statSync(join(cache, 'target')).ino, before);
  // A build folder the cache lacks (the ARM cross-build, say) is worth keeping.
  mkdirSync(join(again, 'target/aarch64-unknown-linux-gnu'));
  assert.match(cacheFn(again, 'save_build_cache'), /keeping the compiled dependencies/);
  assert.ok(existsSync(join(cache, 'target/aarch64-unknown-linux-gnu')));
});

test('a cache copied by hand, our crates included, still leaves them to be rebuilt', () => {
  const first = checkout('by-hand', 'by hand');
  cargoBuild(first);
  const handCache = join(work, 'hand-cache');
  mkdirSync(handCache);
  cpSync(join(first, 'target'), join(handCache, 'target'), { recursive: true, preserveTimestamps: true });
  const older = checkout('older-by-hand', 'older by hand', Date.parse('2001-01-01') / 1000);
  assert.match(cacheFn(older, 'seed_build_cache', handCache), /starting from the compiled dependencies/);
  assert.match(cargoBuild(older), /Compiling rocketjudge-probe/);
  assert.equal(run(older), 'older by hand');
});
