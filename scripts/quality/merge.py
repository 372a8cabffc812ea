#!/usr/bin/env python3
"""Pool quality-report subsets that were graded separately into one larger subset.

  python3 scripts/quality/merge.py --parts s2,s4 --tag s6 JUDGE [JUDGE ...]
  QUALITY_INPUTS=.cache/quality/inputs-s6 QUALITY_TAG=s6 python3 scripts/quality/report.py JUDGE

Reads .cache/quality/inputs-<part>/ and .cache/quality/<judge>-<part>/ for every part and writes the
union to inputs-<tag>/ and <judge>-<tag>/. Records are keyed by session_id (whole record when it has
none); the same key with different contents in two parts is an error, not a silent pick. A judge's
Direct baseline is pooled only when every part has it. Nothing is graded here and no part is changed.
"""
import argparse
import json
import os
import sys

Q = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".cache", "quality"))


def key(record):
    return record.get("session_id") if isinstance(record, dict) and "session_id" in record else json.dumps(record, sort_keys=True)


def read(path):
    """(records, is_jsonl) of a JSONL file or a JSON array."""
    with open(path, encoding="utf-8") as f:
        if path.endswith(".jsonl"):
            return [json.loads(l) for l in f if l.strip()], True
        return json.load(f), False


def merge_file(sources, dest):
    pooled, jsonl = {}, True
    for src in sources:
        records, jsonl = read(src)
        for r in records:
            k = key(r)
            if k in pooled and pooled[k] != r:
                sys.exit(f"error: {src}: record {k!r} differs from the one in an earlier part")
            pooled.setdefault(k, r)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with open(dest, "w", encoding="utf-8") as f:
        if jsonl:
            f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in pooled.values())
        else:
            json.dump(list(pooled.values()), f, ensure_ascii=False, indent=0)


def merge_tree(parts, dest, skip=()):
    """Merge every .json/.jsonl file found under any of the `parts` folders into `dest`."""
    files = {}
    for part in parts:
        for folder, _, names in os.walk(part):
            rel = os.path.relpath(folder, part)
            top = rel.split(os.sep)[0]
            if top in skip or top.endswith(".partial"):  # .partial: an interrupted Direct run
                continue
            for n in names:
                if n.endswith((".json", ".jsonl")):
                    files.setdefault(os.path.normpath(os.path.join(rel, n)), []).append(os.path.join(folder, n))
    for rel, sources in sorted(files.items()):
        merge_file(sources, os.path.join(dest, rel))
    return len(files)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", required=True, help="comma-separated subset tags, e.g. s2,s4")
    ap.add_argument("--tag", required=True, help="tag of the pooled subset, e.g. s6")
    ap.add_argument("judges", nargs="*")
    a = ap.parse_args()
    parts = a.parts.split(",")
    inputs = [os.path.join(Q, f"inputs-{p}") for p in parts]
    for d in inputs:
        if not os.path.isfile(os.path.join(d, "queries.jsonl")):
            sys.exit(f"error: {d}: no queries.jsonl (prepare it with scripts/quality/prepare.py)")
    print(f"inputs-{a.tag}: {merge_tree(inputs, os.path.join(Q, f'inputs-{a.tag}'))} files")
    for judge in a.judges:
        runs = [os.path.join(Q, f"{judge}-{p}") for p in parts]
        missing = [r for r in runs if not os.path.isdir(os.path.join(r, "judgments"))]
        if missing:
            sys.exit(f"error: {missing[0]}: not graded (run scripts/quality/run.sh {judge} on that subset first)")
        # Direct (and Direct on the human pairs) only when every part has it, or its numbers would
        # describe a different subset than the checklist grading's.
        skip = [d for d in ("direct", "direct-human") if not all(os.path.isdir(os.path.join(r, d)) for r in runs)]
        dest = os.path.join(Q, f"{judge}-{a.tag}")
        n = merge_tree(runs, dest, skip)
        with open(os.path.join(dest, "timing.txt"), "w") as f:
            f.write(f"pooled from {', '.join(parts)}\n")
        print(f"{judge}-{a.tag}: {n} files" + (f" (without {', '.join(skip)}: not in every part)" if skip else ""))


if __name__ == "__main__":
    main()
