# SPDX-License-Identifier: Apache-2.0
"""Writes the identity corpus's datasets (deterministic) into the given folder."""
import sys, os
import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(20261126)

def write(name, n):
    num = rng.normal(size=(n, 6))
    num[rng.random((n, 6)) < 0.05] = np.nan
    cats = [rng.integers(0, c, size=n) for c in (5, 40, 300)]
    score = np.nan_to_num(num[:, 0]) + 0.5 * np.nan_to_num(num[:, 1]) ** 2 + (cats[0] == 2) - 0.3 * (cats[1] % 3) \
        + 0.2 * rng.normal(size=n)
    reg = score
    binary = (score > np.median(score)).astype(int)
    classes = np.array(["ant", "bee", "cat"])[np.digitize(score, np.quantile(score, [0.33, 0.66]))]
    prob = 1 / (1 + np.exp(-score))
    count = rng.poisson(np.exp(0.3 * np.clip(score, -3, 3)))
    weight = rng.uniform(0.2, 2.0, size=n)
    baseline = 0.1 * rng.normal(size=n)
    with open(os.path.join(out, name), "w") as f:
        for i in range(n):
            row = [f"{reg[i]:.6f}", str(binary[i]), classes[i], f"{prob[i]:.6f}", str(count[i]),
                   f"{weight[i]:.4f}", f"{baseline[i]:.5f}"]
            row += ["nan" if np.isnan(v) else f"{v:.5f}" for v in num[i]]
            row += [f"c{c[i]}" for c in cats]
            f.write("\t".join(row) + "\n")

write("learn.tsv", 3000)
write("test.tsv", 1000)
# Column roles: 0 reg, 1 binary, 2 class, 3 probability, 4 count, 5 weight, 6 baseline, 7-12 num, 13-15 categ.
def cd(name, label, extra=()):
    with open(os.path.join(out, name), "w") as f:
        for c in range(7):
            if c == label:
                f.write(f"{c}\tLabel\n")
            elif c in extra:
                f.write(f"{c}\t{'Weight' if c == 5 else 'Baseline'}\n")
            else:
                f.write(f"{c}\tAuxiliary\n")
        for c in range(7, 13):
            f.write(f"{c}\tNum\tn{c}\n")
        for c in range(13, 16):
            f.write(f"{c}\tCateg\tk{c}\n")
for label, tag in ((0, "reg"), (1, "bin"), (2, "cls"), (3, "prob"), (4, "cnt")):
    cd(f"{tag}.cd", label)
    cd(f"{tag}_w.cd", label, (5,))
    cd(f"{tag}_b.cd", label, (6,))
