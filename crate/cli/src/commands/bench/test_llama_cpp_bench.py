"""llama_cpp_bench.py asks llama.cpp for its best: one batch as long as the context, the prompt on the
thread count it was given (not every logical CPU), a pilot over that count and one thread, the
workload with flash attention on and off, the faster response reported, and the faster prefill where
that is the other run. llama-cpp-python is replaced by a recorder here (the suite does not build
llama.cpp; `rocketjudge bench` runs the real one), so this checks what the harness asks for and
reports, not llama.cpp's speed. Run by scripts/test.sh with the gguf venv's python (numpy)."""
import io
import json
import os
import sys
import tempfile
import types
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import llama_cpp_bench  # noqa: E402


def recorder(speed):
    """A stand-in llama_cpp module: each Llama records its settings; `speed(settings, n)` is how many
    seconds a token takes under them in an evaluation of n tokens (the clock is the module's own,
    advanced by eval)."""
    made, clock, log = [], [0.0], []

    class Llama:
        def __init__(self, **kw):
            # What llama.cpp logs at load, through the callback the harness set.
            for kind, mib in (("CPU_Mapped", 300.0), ("CPU_REPACK", 180.5)):
                for callback in log:
                    callback(1, f"load_tensors: {kind:>12} model buffer size = {mib:8.2f} MiB\n".encode(), None)
            self.kw, self.n_tokens, self.closed = kw, 0, False
            self.n_batch = min(kw["n_ctx"], kw["n_batch"])
            self.context_params = types.SimpleNamespace(n_ubatch=min(self.n_batch, kw["n_ubatch"]))
            made.append(self)

        def eval(self, tokens):
            assert not self.closed and len(tokens) <= self.n_batch
            clock[0] += len(tokens) * speed(self.kw, len(tokens))
            self.n_tokens += len(tokens)

        def reset(self):
            self.n_tokens = 0

        def close(self):
            self.closed = True

        def n_vocab(self):
            return 4

    module = types.ModuleType("llama_cpp")
    module.Llama, module.__version__ = Llama, "recorder"
    module.llama_supports_gpu_offload = lambda: False
    module.llama_log_callback = lambda f: f
    module.llama_log_set = lambda callback, user_data: log.append(callback)
    return module, made, clock


class Harness(unittest.TestCase):
    def run_bench(self, cfg, speed):
        module, made, clock = recorder(speed)
        sys.modules["llama_cpp"] = module
        real_clock = llama_cpp_bench.time.perf_counter
        llama_cpp_bench.time.perf_counter = lambda: clock[0]
        try:
            with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
                json.dump(cfg, f)
            sys.argv = ["llama_cpp_bench.py", f.name]
            out = io.StringIO()
            with redirect_stdout(out):
                llama_cpp_bench.main()
        finally:
            llama_cpp_bench.time.perf_counter = real_clock
            del sys.modules["llama_cpp"]
            os.unlink(f.name)
        return json.loads(out.getvalue()), made

    def cfg(self, **kw):
        base = {"model": "m.gguf", "threads": 2, "prefix": list(range(1500)), "suffixes": [[1] * 40] * 8,
                "repeat": 2, "decode_tokens": 0, "first_token": 1}
        return {**base, **kw}

    def test_the_faster_thread_count_runs_the_workload_both_ways(self):
        # One thread is faster here (a busy machine); flash attention makes everything faster.
        def speed(kw, n):
            return (1.0 if kw["n_threads"] == 1 else 2.0) * (0.5 if kw["flash_attn"] else 1.0)

        report, made = self.run_bench(self.cfg(), speed)
        tried = [(m.kw["n_threads"], m.kw["flash_attn"]) for m in made]
        self.assertEqual(tried, [(2, False), (1, False), (1, True), (1, False)])
        self.assertTrue(all(m.closed for m in made), "each model is closed before the next")
        self.assertEqual([p["threads"] for p in report["pilot"]], [2, 1])
        self.assertEqual([p["prefix_tokens_per_s"] for p in report["pilot"]], [0.5, 1.0])
        self.assertEqual(report["settings"]["threads"], 1)
        self.assertTrue(report["settings"]["flash_attn"])
        self.assertNotIn("best_prefill", report, "the faster response is also the faster prefill")
        self.assertEqual(len(report["runs"]), 2)
        # The prefix is evaluated in one call: 1500 tokens at 0.5 s a token; 8 items of 40.
        self.assertAlmostEqual(report["prefill_s"], 750.0)
        self.assertAlmostEqual(report["items_s"], 8 * 40 * 0.5)

    def test_a_faster_prefill_in_the_other_run_is_reported_too(self):
        # Flash attention prefills faster (long evaluations) but evaluates the items slower (short
        # ones), by enough that the response is faster without it.
        def speed(kw, n):
            return (0.9 if n > 100 else 3.0) if kw["flash_attn"] else 1.0

        report, _ = self.run_bench(self.cfg(), speed)
        self.assertEqual((report["settings"]["threads"], report["settings"]["flash_attn"]), (2, False))
        self.assertEqual(report["best_prefill"]["settings"]["flash_attn"], True)
        self.assertAlmostEqual(report["best_prefill"]["prefill_s"], 1500 * 0.9)
        self.assertAlmostEqual(report["prefill_s"], 1500.0)
        self.assertAlmostEqual(report["items_s"], 8 * 40.0)

    def test_the_batch_spans_the_context_and_the_prompt_uses_the_given_threads(self):
        report, made = self.run_bench(self.cfg(threads=3), lambda kw, n: 1.0)
        for m in made:
            self.assertGreaterEqual(m.kw["n_batch"], 1500 + 40)
            self.assertEqual(m.kw["n_ubatch"], 512)
            self.assertEqual(m.kw["n_threads_batch"], m.kw["n_threads"])
        self.assertGreaterEqual(report["settings"]["n_batch"], 1500)

    def test_a_cpu_row_keeps_its_products_on_the_cpu(self):
        # A build with a GPU backend and no layers on it would still send large products to the GPU.
        _, made = self.run_bench(self.cfg(), lambda kw, n: 1.0)
        self.assertTrue(made and all(m.kw["op_offload"] is False for m in made))
        _, made = self.run_bench(self.cfg(gpu_layers=-1), lambda kw, n: 1.0)
        self.assertTrue(all("op_offload" not in m.kw for m in made), "on the GPU llama.cpp's default")

    def test_the_weights_buffer_types_come_from_llama_cpps_log(self):
        report, _ = self.run_bench(self.cfg(), lambda kw, n: 1.0)
        self.assertEqual(report["weight_buffers"], ["CPU_Mapped", "CPU_REPACK"])

    def test_without_the_pilot_or_on_the_gpu_fewer_settings_are_tried(self):
        _, made = self.run_bench(self.cfg(pilot=False), lambda kw, n: 1.0)
        self.assertEqual([(m.kw["n_threads"], m.kw["flash_attn"]) for m in made], [(2, False)])
        _, made = self.run_bench(self.cfg(gpu_layers=-1), lambda kw, n: 1.0)
        self.assertEqual([(m.kw["n_threads"], m.kw["flash_attn"]) for m in made], [(2, True), (2, False)],
                         "threads are not piloted on the GPU")


if __name__ == "__main__":
    unittest.main()
