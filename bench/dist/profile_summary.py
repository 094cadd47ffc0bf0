#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Summarises a CBGPU_DIST_PROFILE file (one JSON line per sharded training, src/dist/rank_threads.hpp).

    bench/dist/profile_summary.py profile.jsonl [--per A:B ...]
    bench/dist/profile_summary.py --boosting stages.jsonl


Prints, per training, the time inside the training loop (backend calls and the trainer's gaps between
them), the set-up and tear-down phases and each rank's collectives and reads. With --per A:B (line
numbers from 1, e.g. the 100- and 200-iteration trainings of cbgpu-multi-bench), the difference B - A
divided by the difference of their weak_target calls: the loop's cost per iteration, by call.
With --boosting, the file is a CBGPU_BOOSTING_PROFILE one (kernels/train/boosting_device.cu, one line per
training and device): each call's (and leaf-pass stage's) device time per call in microseconds.
"""
import argparse
import json


def load(path):
    with open(path) as f:
        return [json.loads(line)["dist_profile"] for line in f if line.strip() and "dist_profile" in line]


def loop_ms(p):
    return sum(c["wall_ms"] + c["gap_before_ms"] for name, c in p["calls"].items() if name not in ("setup", "teardown"))


def boosting(path):
    with open(path) as f:
        lines = [json.loads(line)["boosting_profile"] for line in f if "boosting_profile" in line]
    for i, p in enumerate(lines, 1):
        calls = ", ".join(f"{name} {1000 * c['ms'] / c['calls']:.1f} us x {c['calls']}"
                          for name, c in p.items() if c.get("calls", 0) > 0)
        print(f"{i}: {calls}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--per", action="append", default=[], help="A:B, two line numbers (from 1)")
    ap.add_argument("--boosting", action="store_true", help="a CBGPU_BOOSTING_PROFILE file")
    args = ap.parse_args()
    if args.boosting:
        boosting(args.file)
        return
    lines = load(args.file)
    for i, p in enumerate(lines, 1):
        its = p["calls"].get("weak_target", {}).get("n", 0)
        phases = ", ".join(f"{k} {v:.1f}" for k, v in p.get("phases_ms", {}).items())
        print(f"{i}: {its} iterations, loop {loop_ms(p):.1f} ms; phases (ms): {phases or 'none'}")
        for r, t in enumerate(p["ranks"]):
            print(f"   rank {r}: collectives {t['collectives']}, enqueue {t['collective_host_ms']:.2f} ms, "
                  f"device-to-host reads {t['d2h_copies']}")
    for spec in args.per:
        a, b = (lines[int(x) - 1] for x in spec.split(":"))
        n = b["calls"]["weak_target"]["n"] - a["calls"]["weak_target"]["n"]
        if n <= 0:
            print(f"{spec}: not a pair of trainings with more iterations second")
            continue
        print(f"{spec}: per iteration over {n} iterations: loop {(loop_ms(b) - loop_ms(a)) / n:.3f} ms")
        for name, cb in b["calls"].items():
            ca = a["calls"].get(name)
            if ca is None or name in ("setup", "teardown"):
                continue
            d = {k: (cb[k] - ca[k]) / n for k in cb}
            if d["n"] <= 0:
                continue
            print(f"   {name}: {d['n']:.2f} calls, wall {d['wall_ms']:.3f}, work {d['work_ms']:.3f}, "
                  f"wake {d['wake_ms']:.3f}, skew {d['skew_ms']:.3f}, tail {d['tail_ms']:.3f}, "
                  f"gap before {d['gap_before_ms']:.3f} ms")


if __name__ == "__main__":
    main()
