"""Regenerates examples/platform/data/measurements.csv.

The data are synthetic but shaped like a plate-reader assay: each sample has
a compound concentration, a treatment group and the absorbance measured.
Absorbance rises linearly with concentration (Beer-Lambert) and the treated
group reads a little higher. A fixed seed and only the standard library keep
the file byte-for-byte reproducible on any Python 3.

    python3 examples/gen_measurements.py > examples/platform/data/measurements.csv
"""
import csv
import random
import sys

SEED = 20240611
ROWS = 300


def main():
    rng = random.Random(SEED)
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["sample_id", "plate", "group", "temperature_c", "concentration_um", "absorbance"])
    for i in range(ROWS):
        group = "treated" if i % 2 else "control"
        plate = f"P{i // 96 + 1}"
        conc = round(rng.uniform(0.5, 50.0), 2)
        temp = round(rng.gauss(37.0, 0.4), 2)
        shift = 0.08 if group == "treated" else 0.0
        absorb = 0.05 + 0.021 * conc + shift + rng.gauss(0.0, 0.04)
        w.writerow([f"S{i + 1:04d}", plate, group, f"{temp:.2f}", f"{conc:.2f}", f"{max(absorb, 0.0):.4f}"])


if __name__ == "__main__":
    main()
