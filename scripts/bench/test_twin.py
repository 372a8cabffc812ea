"""twin_gguf.py: a twin keeps the judge's header byte for byte, its size and its tensor layout, has no
non-finite scale, and our engine loads and runs the benchmark workload on it (SmolLM2, the packaged
judge). Run by scripts/test.sh with the gguf venv's python (numpy)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import twin_gguf  # noqa: E402

MODEL = os.path.join(os.environ.get("ROCKETJUDGE_CACHE", os.path.expanduser("~/.cache/rocketjudge")), "models", "smollm2-135m.gguf")


class Twin(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.skel = os.path.join(cls.dir.name, "m.skel")
        cls.twin = os.path.join(cls.dir.name, "m.gguf")
        twin_gguf.skeleton(MODEL, cls.skel)
        twin_gguf.fill(cls.skel, cls.twin, seed=0)
        cls.meta, _ = twin_gguf.read_skeleton(cls.skel)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def test_header_size_and_layout_are_the_judges(self):
        self.assertEqual(os.path.getsize(self.twin), os.path.getsize(MODEL))
        n = self.meta["data_start"]
        with open(self.twin, "rb") as a, open(MODEL, "rb") as b:
            self.assertEqual(a.read(n), b.read(n))
            # the weights themselves are not the judge's
            self.assertNotEqual(a.read(1 << 16), b.read(1 << 16))

    def test_scales_are_finite_and_norms_are_ones(self):
        data = np.memmap(self.twin, np.uint8, "r")
        for t in self.meta["tensors"]:
            name, block, size, scales = twin_gguf.TYPES[t["type"]]
            raw = data[self.meta["data_start"] + t["offset"]:][: t["nbytes"]]
            if name == "F32" and "norm" in t["name"]:
                self.assertTrue(np.all(raw.view(np.float32) == 1.0), t["name"])
            for at in scales:
                blocks = raw.reshape(-1, size)
                self.assertTrue(np.all(np.isfinite(blocks[:, at:at + 2].copy().view(np.float16))), t["name"])

    def test_every_quantized_layout_is_ggmls(self):
        # Block sizes and the places of the f16 scales, checked by llama.cpp's gguf-py: its sizes agree,
        # and its dequantization of random blocks is finite (a scale at the wrong offset would be
        # random bytes, among them infinities and NaNs).
        import gguf
        from gguf.quants import dequantize

        rng = np.random.default_rng(1)
        for ggml_type, (name, block, size, scales) in twin_gguf.TYPES.items():
            q = gguf.GGMLQuantizationType(ggml_type)
            self.assertEqual(gguf.GGML_QUANT_SIZES[q], (block, size), name)
            if scales:
                values = dequantize(twin_gguf.random_blocks(ggml_type, 4096, rng), q)
                self.assertTrue(np.all(np.isfinite(values)), name)
                self.assertLess(float(np.abs(values).max()), 64.0, name)

    def test_the_engine_runs_the_workload_on_it(self):
        out = subprocess.run([os.path.join(ROOT, "target/release/rocketjudge"), "bench", "--model", self.twin, "--prefix-tokens", "64",
                              "--items", "2", "--suffix-tokens", "8", "--repeat", "1", "--reference", "none", "--threads", "2",
                              "--format", "json"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        r = json.loads(out.stdout)["rocketjudge"]
        self.assertGreater(r["prefill_tokens_per_s"], 0)


if __name__ == "__main__":
    unittest.main()
