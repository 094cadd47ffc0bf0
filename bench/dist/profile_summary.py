#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Summarises a cbgpu-multi-bench --profile file (one JSON line of stage timings per training).

    bench/dist/profile_summary.py stages.jsonl [--per A:B ...]

Prints, per training, each stage's time per call in microseconds and its calls: the backend calls
("boosting.*", per rank "rank N: boosting.*" on several GPUs), the device time inside them
("... (device): ..."), the hand-offs of a sharded training ("dist.<call>" and its wake / work / skew /
tail / gap before) and its set-up and tear-down phases. With --per A:B (line numbers from 1, e.g. the
50- and 100-iteration trainings of one device list), the difference B - A per iteration, by stage.
"""
import argparse
import json


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--per", action="append", default=[], help="A:B, two line numbers (from 1)")
    args = ap.parse_args()
    lines = load(args.file)
    for i, p in enumerate(lines, 1):
        print(f"{i}: devices {p['devices']}, {p['iterations']} iterations")
        for name, t in sorted(p["stages"].items()):
            per = f"{1000 * t['ms'] / t['calls']:.1f} us x {t['calls']}" if t["calls"] > 0 else f"{t['ms']:.3f} ms"
            print(f"   {name}: {per}")
    for spec in args.per:
        a, b = (lines[int(x) - 1] for x in spec.split(":"))
        n = b["iterations"] - a["iterations"]
        if n <= 0:
            print(f"{spec}: not a pair of trainings with more iterations second")
            continue
        print(f"{spec}: per iteration over {n} iterations")
        for name, tb in sorted(b["stages"].items()):
            ta = a["stages"].get(name, {"ms": 0.0, "calls": 0})
            calls = (tb["calls"] - ta["calls"]) / n
            print(f"   {name}: {(tb['ms'] - ta['ms']) / n:.3f} ms, {calls:.2f} calls")


if __name__ == "__main__":
    main()
