"""Example post-processing: summarise an earlier run's collected outputs.

    scidex-jail run --id example-post --profile post_process \
        --input OUTPUTS --ro "$PWD/examples" \
        -- /usr/bin/python3 "$PWD/examples/postprocess.py" OUTPUTS

OUTPUTS is the --collect directory of an analysis.py run; inside the jail it
is readable (read-only) at the same path. Writes summary.json and summary.md
into the working directory: the headline statistics, each input file with
its size and sha256 (so the summary pins exactly what it summarised), and
whether the plot is a well-formed PNG.
"""
import csv
import hashlib
import json
import os
import sys

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: postprocess.py OUTPUTS_DIR")
    src = sys.argv[1]
    files = []
    for dirpath, dirnames, filenames in os.walk(src):
        # Caches the analysis left behind (matplotlib, fontconfig) are not results.
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            p = os.path.join(dirpath, name)
            files.append({"path": os.path.relpath(p, src), "size": os.path.getsize(p), "sha256": sha256(p)})

    with open(os.path.join(src, "results.csv"), newline="") as f:
        stats = {row["statistic"]: float(row["value"]) for row in csv.DictReader(f)}
    with open(os.path.join(src, "dose_response.png"), "rb") as f:
        png_ok = f.read(len(PNG_MAGIC)) == PNG_MAGIC

    summary = {
        "source": src,
        "files": files,
        "n": int(stats["n"]),
        "slope_per_um": stats["slope_per_um"],
        "r_squared": stats["r_squared"],
        "treatment_effect": stats["treatment_effect"],
        "significant": stats["welch_p"] < 0.05,
        "plot_is_png": png_ok,
    }
    with open("summary.json", "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    with open("summary.md", "w") as f:
        f.write(f"# Summary of {src}\n\n")
        f.write(f"- samples: {summary['n']}\n")
        f.write(f"- slope: {summary['slope_per_um']:.5f} per µM (r² {summary['r_squared']:.3f})\n")
        f.write(f"- treatment effect: {summary['treatment_effect']:+.4f}"
                f" ({'significant' if summary['significant'] else 'not significant'} at 5%)\n")
        f.write(f"- plot: {'PNG' if png_ok else 'NOT a PNG'}\n\n")
        for e in files:
            f.write(f"    {e['sha256']}  {e['size']:>8}  {e['path']}\n")
    print(f"summarised {len(files)} files from {src}: slope {summary['slope_per_um']:.5f}, "
          f"effect {summary['treatment_effect']:+.4f}, plot {'ok' if png_ok else 'bad'}")


if __name__ == "__main__":
    main()
