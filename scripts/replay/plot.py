#!/usr/bin/env python3
"""Curves of `rocketjudge replay --csv`: Spearman's rho with the complete run's ranking and the share of
adjacent pairs separated, against the share of the run graded, one colour per order (each seed a thin
line, the median over seeds a thick one).

    python3 scripts/replay/plot.py CSV TITLE OUT.png      (needs matplotlib: pip install matplotlib)
"""
import csv
import math
import statistics
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLOURS = {"model": "#9ca3af", "interleaved": "#2563eb", "adaptive": "#dc2626"}
LABELS = {"model": "model by model", "interleaved": "interleaved (default)", "adaptive": "adaptive"}


def main(path, title, out):
    runs = defaultdict(list)  # (order, seed) -> [(share, rho, separated)]
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            rho = float(r["spearman"]) if r["spearman"] else float("nan")
            runs[(r["order"], r["seed"])].append((float(r["share"]), rho, float(r["separated_share"])))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharex=True)
    for order in ["model", "interleaved", "adaptive"]:
        mine = [v for (o, _), v in runs.items() if o == order]
        if not mine:
            continue
        for k, ax in ((1, axes[0]), (2, axes[1])):
            for v in mine:
                ax.plot([p[0] for p in v], [p[k] for p in v], color=COLOURS[order], alpha=0.25, lw=0.8)
            xs = [p[0] for p in mine[0]]
            med = []
            for i in range(len(xs)):
                vals = [v[i][k] for v in mine if i < len(v) and not math.isnan(v[i][k])]
                med.append(statistics.median(vals) if vals else float("nan"))
            ax.plot(xs, med, color=COLOURS[order], lw=2.2, label=f"{LABELS[order]} ({len(mine)} seed{'s' if len(mine) > 1 else ''})")
    axes[0].axhline(0.9, color="#111827", lw=0.8, ls="--")
    axes[0].set_ylabel("Spearman's ρ with the complete run's ranking")
    axes[0].set_ylim(-1.05, 1.05)
    axes[1].set_ylabel("adjacent pairs separated (≥ 95% of replicates)")
    axes[1].set_ylim(-0.02, 1.02)
    for ax in axes:
        ax.set_xlabel("share of the run graded")
        ax.grid(alpha=0.3)
    axes[0].legend(loc="lower right", fontsize=8)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
