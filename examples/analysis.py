"""Example analysis: dose-response of an absorbance assay.

Run it under the jail (see run-example.sh):

    scidex-jail run --id example --root examples/platform --ro "$PWD/examples" \
        -- /usr/bin/python3 "$PWD/examples/analysis.py"

It reads data/measurements.csv from the platform checkout (read-only inside
the jail), fits absorbance against concentration, compares the treated and
control groups with Welch's t-test, and writes into its working directory
(the run directory, the only writable place):

    results.csv       one row per statistic
    by_group.csv      summary statistics per group
    dose_response.png the data, the fitted line per group

Where data/ is: argv[1] if given, else $SCIDEX_DATA_DIR, else
platform/data next to this script (the layout of examples/).
"""
import os
import sys

# Agg renders to files only: no display, no GUI toolkit to import. Set
# before pyplot is imported.
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy import stats  # noqa: E402


def data_dir():
    if len(sys.argv) > 1:
        return sys.argv[1]
    if os.environ.get("SCIDEX_DATA_DIR"):
        return os.environ["SCIDEX_DATA_DIR"]
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "platform", "data")


def main():
    path = os.path.join(data_dir(), "measurements.csv")
    df = pd.read_csv(path)

    fit = stats.linregress(df["concentration_um"], df["absorbance"])
    # Compare groups on the residuals of the common fit, so the concentration
    # each sample happened to get does not blur the treatment effect.
    resid = df["absorbance"] - (fit.intercept + fit.slope * df["concentration_um"])
    treated = resid[df["group"] == "treated"]
    control = resid[df["group"] == "control"]
    t = stats.ttest_ind(treated, control, equal_var=False)

    results = pd.DataFrame(
        [
            ("n", len(df)),
            ("slope_per_um", fit.slope),
            ("intercept", fit.intercept),
            ("r_squared", fit.rvalue**2),
            ("slope_stderr", fit.stderr),
            ("treatment_effect", treated.mean() - control.mean()),
            ("welch_t", t.statistic),
            ("welch_p", t.pvalue),
            ("temperature_mean_c", df["temperature_c"].mean()),
            ("temperature_sd_c", df["temperature_c"].std()),
        ],
        columns=["statistic", "value"],
    )
    results.to_csv("results.csv", index=False)
    by_group = df.groupby("group")[["concentration_um", "absorbance", "temperature_c"]].agg(["mean", "std", "count"])
    by_group.to_csv("by_group.csv")

    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    xs = np.linspace(df["concentration_um"].min(), df["concentration_um"].max(), 50)
    for name, colour in (("control", "tab:blue"), ("treated", "tab:orange")):
        g = df[df["group"] == name]
        ax.scatter(g["concentration_um"], g["absorbance"], s=8, alpha=0.6, color=colour, label=name)
        gfit = stats.linregress(g["concentration_um"], g["absorbance"])
        ax.plot(xs, gfit.intercept + gfit.slope * xs, color=colour)
    ax.set_xlabel("concentration (µM)")
    ax.set_ylabel("absorbance")
    ax.set_title("dose response")
    ax.legend()
    fig.tight_layout()
    fig.savefig("dose_response.png")

    print(f"samples: {len(df)} from {path}")
    print(f"fit: absorbance = {fit.intercept:.4f} + {fit.slope:.5f} * conc (r^2 = {fit.rvalue**2:.3f})")
    print(f"treated - control: {treated.mean() - control.mean():+.4f} (Welch t = {t.statistic:.2f}, p = {t.pvalue:.2g})")
    print("wrote results.csv, by_group.csv, dose_response.png")


if __name__ == "__main__":
    main()
