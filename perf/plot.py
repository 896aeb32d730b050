#!/usr/bin/env python3
"""Plots of llmk-perf's JSON (with the peers it imported): one PNG a command.

  bars RESULT.json[:RUN] [-o OUT.png] [--metric tflops|gbs] [--ceiling TFLOPS]
      per precision, a bar per implementation and peer of its achieved
      TFLOP/s (GB/s for an operation whose records have no FLOP count, e.g.
      layernorm_backward), with the device's ceiling drawn: for GB/s the run's
      own peer:copy of that precision (a device copy of as many bytes, read +
      write), else the machine's device_copy_gbs; for TFLOP/s --ceiling, or
      the datasheet peak of a known GPU (DEVICE_PEAKS below).
  climb [LABEL=]FILE[:RUN] ... --impls NAMES [--precision LIST] [-o OUT.png]
      the same operation and shape over time: a line per implementation
      through the given runs, in the order given (the documented history);
      RUN names one run of a file of several ("runs": {...}), or a prefix of
      several (their median, the bar from their min to their max).
  docs [--out docs/plots]
      the PNGs docs/performance.md shows, from docs/results.
  --selftest
      checks what the plots are made of on docs/results (and, where
      matplotlib is installed, draws them into a temporary folder).

A record without "precision" ran in fp32 (files from before precisions); a
record's value is its median time's. Needs matplotlib for the PNGs:
  python3 -m venv ~/.cache/llmk/plot-venv && ~/.cache/llmk/plot-venv/bin/pip install matplotlib
  ~/.cache/llmk/plot-venv/bin/python perf/plot.py ...
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(REPO, "docs", "results")

# Dense peak TFLOP/s per precision (bf16-fp32grad: the bf16 tensor cores).
# H200 SXM: NVIDIA's H200 Tensor Core GPU datasheet gives FP32 67 TFLOPS,
# TF32 Tensor Core 989 and BF16 1,979 TFLOPS "with sparsity"; dense is half
# (132 SMs at 1.83-1.98 GHz: FP32 66.9, TF32 494.7, BF16 989.4, as for the
# H100 SXM, the same GH100 die and clocks). Its HBM3e: 4.8 TB/s (the copy
# measured here reaches 4.0-4.2 TB/s read + write: the runs' peer:copy).
DEVICE_PEAKS = {
    "H200": {"fp32": 66.9, "tf32": 494.7, "bf16": 989.4, "bf16-fp32grad": 989.4},
}

IMPL_COLOR, PEER_COLOR, TORCH_COLOR, CEILING_COLOR = "#2f6db3", "#8c8c8c", "#e08a2c", "#c0392b"


def need_matplotlib():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        sys.exit("plot.py: matplotlib is not installed. Get it in a virtualenv outside the repo:\n"
                 "  python3 -m venv ~/.cache/llmk/plot-venv && "
                 "~/.cache/llmk/plot-venv/bin/pip install matplotlib\n"
                 "and run plot.py with ~/.cache/llmk/plot-venv/bin/python")


# ---- what the plots are made of ---------------------------------------------


def load(spec):
    """FILE or FILE:RUN -> a list of (machine, records), one per run: a plain
    llmk-perf file is one run; a file of several runs needs RUN, a run's name
    or a prefix of several."""
    path, run = spec, None
    if not os.path.exists(path) and ":" in spec:
        path, run = spec.rsplit(":", 1)
    with open(path) as f:
        data = json.load(f)
    if "runs" in data:
        if run is None:
            raise SystemExit(f"plot.py: {path} holds several runs; name one as {path}:RUN "
                             f"(or a prefix): {', '.join(data['runs'])}")
        keys = [k for k in data["runs"] if k == run or k.startswith(run)]
        if not keys:
            raise SystemExit(f"plot.py: {path} has no run '{run}': {', '.join(data['runs'])}")
        return [(data["runs"][k].get("machine", {}), data["runs"][k]["records"]) for k in keys]
    if run is not None:
        raise SystemExit(f"plot.py: {path} is a single run; ':{run}' names nothing there")
    return [(data.get("machine", {}), data["records"])]


def precision_of(r):
    return r.get("precision") or "fp32"


def operation_of(records):
    keys = set().union(*(r.keys() for r in records)) if records else set()
    if "NH" in keys:
        return "attention_backward"
    if "OC" in keys:
        return "matmul_backward"
    return "layernorm_backward"


def metric_of(records):
    """TFLOP/s where the records count FLOPs, else GB/s."""
    return "tflops" if any(r.get("gflops") is not None for r in records) else "gbs"


def value(r, metric):
    if r.get("skipped") or r.get("ms_median") is None:
        return None
    if metric == "tflops":
        return r["gflops"] * 1e-3 if r.get("gflops") is not None else None
    return r.get("gbs")


def is_ceiling_row(r):
    return r["impl"] == "peer:copy"


def ceiling(machine, records, precision, metric, given=None):
    """(value, label) of the device's ceiling for a precision, or (None, None)."""
    if given is not None:
        return given, f"given ceiling {given:g} TFLOP/s" if metric == "tflops" else f"{given:g} GB/s"
    if metric == "gbs":
        for r in records:
            if is_ceiling_row(r) and precision_of(r) == precision and not r.get("imported") \
                    and r.get("gbs"):
                return r["gbs"], f"device copy {r['gbs']:.0f} GB/s (this run)"
        if machine.get("device_copy_gbs"):
            return machine["device_copy_gbs"], f"device copy {machine['device_copy_gbs']:.0f} GB/s"
        return None, None
    gpu = machine.get("gpu") or ""
    for name, peaks in DEVICE_PEAKS.items():
        if name in gpu and precision in peaks:
            return peaks[precision], f"{name} dense peak {peaks[precision]:g} TFLOP/s (datasheet)"
    return None, None


def shape_text(r):
    keys = [k for k in ("B", "T", "C", "OC", "NH") if k in r]
    flags = [k for k in ("gelu", "overwrite_dinp", "accumulate_dqkv") if r.get(k)]
    return " ".join(f"{k}={r[k]}" for k in keys) + (f" ({', '.join(flags)})" if flags else "")


def bar_rows(records, precision, metric):
    """[(label, value or None, color)] of one precision, in the table's order."""
    rows = []
    for r in records:
        # peer:copy is the ceiling in GB/s and no computation at all in
        # TFLOP/s (llmk-perf still divides the operation's FLOPs by its time).
        if precision_of(r) != precision or is_ceiling_row(r):
            continue
        if value(r, metric) is None and not r.get("skipped") and r.get("ms_median") is not None:
            continue  # timed, but not in this metric
        name = r["impl"] + ("*" if r.get("imported") else "")
        peer = r.get("kind") == "peer" or r["impl"].startswith("peer:")
        color = TORCH_COLOR if "pytorch" in r["impl"] else PEER_COLOR if peer else IMPL_COLOR
        rows.append((name, value(r, metric), color))
    return rows


def climb_points(specs, precision, impls, metric):
    """Per impl, a list over the points of (median, lo, hi) or None; and the
    points' labels and ceilings (median over a point's runs)."""
    labels, series, ceilings = [], {name: [] for name in impls}, []
    for spec in specs:
        label, _, target = spec.rpartition("=") if "=" in spec else ("", "", spec)
        runs = load(target)
        labels.append(label or os.path.splitext(os.path.basename(target.split(":")[0]))[0])
        for name in impls:
            vals = []
            for _, records in runs:
                # The first record of the name: older files name a peer like
                # an implementation after it (h200-seed-shape.json's second "cublas").
                r = next((r for r in records if r["impl"] == name and precision_of(r) == precision),
                         None)
                if r is not None and value(r, metric) is not None:
                    vals.append(value(r, metric))
            series[name].append((statistics.median(vals), min(vals), max(vals)) if vals else None)
        cs = [ceiling(m, recs, precision, metric)[0] for m, recs in runs]
        cs = [c for c in cs if c]
        ceilings.append(statistics.median(cs) if cs else None)
    return labels, series, ceilings


# ---- drawing -----------------------------------------------------------------


UNIT = {"tflops": "TFLOP/s", "gbs": "GB/s"}


def draw_bars(spec, out, metric=None, given_ceiling=None, title=None):
    plt = need_matplotlib()
    runs = load(spec)
    if len(runs) != 1:
        raise SystemExit("plot.py bars: name one run, not a prefix of several")
    machine, records = runs[0]
    metric = metric or metric_of(records)
    precisions = list(dict.fromkeys(precision_of(r) for r in records))
    panels = [(p, bar_rows(records, p, metric)) for p in precisions]
    heights = [0.27 * len(rows) + 0.8 for _, rows in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(8, sum(heights) + 0.7),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, (precision, rows) in zip(axes[:, 0], panels):
        limit, label = ceiling(machine, records, precision, metric, given_ceiling)
        values = [v for _, v, _ in rows if v is not None]
        top = max(values + ([limit] if limit else []) + [1e-9]) * 1.18
        ys = list(range(len(rows)))[::-1]
        ax.barh(ys, [v or 0 for _, v, _ in rows], color=[c for _, _, c in rows], height=0.7)
        for y, (_, v, _) in zip(ys, rows):
            text = "skipped" if v is None else f"{v:,.0f}" if v >= 100 else f"{v:.3g}"
            ax.text((v or 0) + top * 0.005, y, text, va="center", fontsize=7,
                    color="#555" if v is None else "black")
        ax.set_yticks(ys)
        ax.set_yticklabels([n for n, _, _ in rows], fontsize=8)
        ax.set_xlim(0, top)
        if limit:
            ax.axvline(limit, color=CEILING_COLOR, linestyle="--", linewidth=1.2)
            ax.set_title("dashed: " + label, fontsize=7.5, loc="right", color=CEILING_COLOR)
        ax.set_ylim(-0.6, len(rows) - 0.1)
        ax.set_title(precision, fontsize=9, loc="left")
        ax.tick_params(axis="x", labelsize=7)
        ax.grid(axis="x", alpha=0.3)
    axes[-1, 0].set_xlabel(f"{UNIT[metric]} (median call; higher is better)", fontsize=8)
    gpu = machine.get("gpu") or machine.get("cpu") or ""
    fig.suptitle(title or f"{operation_of(records)} {shape_text(records[0])} — {gpu}", fontsize=10)
    fig.text(0.01, 0.005, "blue: llmk   grey: peers   orange: PyTorch   *: imported "
             "(timed by perf/torch_baseline.py)   dashed: the device's ceiling", fontsize=6.5,
             color="#444")
    fig.tight_layout(rect=(0, 0.02, 1, 0.97))
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def draw_climb(specs, impls, precisions, out, metric=None, title=None, given_ceiling=None):
    plt = need_matplotlib()
    first_machine, first = load(specs[0].rpartition("=")[2] if "=" in specs[0] else specs[0])[0]
    metric = metric or metric_of(first)
    fig, axes = plt.subplots(1, len(precisions), figsize=(4.2 * len(precisions) + 2.4, 3.9),
                             squeeze=False)
    markers = "osD^vP*X"
    for ax, precision in zip(axes[0], precisions):
        labels, series, ceilings = climb_points(specs, precision, impls, metric)
        xs = list(range(len(labels)))
        for i, name in enumerate(impls):
            pts = [(x, p) for x, p in zip(xs, series[name]) if p]
            if not pts:
                continue
            ax.errorbar([x for x, _ in pts], [p[0] for _, p in pts],
                        yerr=[[p[0] - p[1] for _, p in pts], [p[2] - p[0] for _, p in pts]],
                        marker=markers[i % len(markers)], capsize=3, label=name, linewidth=1.4)
        if given_ceiling:
            ax.axhline(given_ceiling, color=CEILING_COLOR, linestyle="--", linewidth=1)
        elif metric == "gbs":
            cx = [(x, c) for x, c in zip(xs, ceilings) if c]
            ax.plot([x for x, _ in cx], [c for _, c in cx], color=CEILING_COLOR, linestyle="--",
                    marker="_", label="device copy (each run's)")
        else:
            limit, label = ceiling(first_machine, first, precision, metric)
            if limit:
                ax.axhline(limit, color=CEILING_COLOR, linestyle="--", linewidth=1, label=label)
        ax.set_xticks(xs)
        ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=7)
        ax.set_ylim(bottom=0)
        ax.set_title(precision, fontsize=9, loc="left")
        ax.set_ylabel(f"{UNIT[metric]} (median call)", fontsize=8)
        ax.tick_params(axis="y", labelsize=7)
        ax.grid(alpha=0.3)
    # One legend, beside the last panel: the lines are the same in each.
    axes[0, -1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.suptitle(title or f"{operation_of(first)} {shape_text(first[0])}: the climb", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


# ---- the docs' plots -----------------------------------------------------------


def R(name):
    return os.path.join(RESULTS, name)


MATMUL_CLIMB = [  # docs/performance.md's H200 runs of the seed shape, oldest first
    "11-29 first run=" + R("h200-seed-shape.json"),
    "11-30 core before=" + R("h200-core-before-seed.json"),
    "11-30 core after=" + R("h200-core-after-seed.json"),
    "11-30 Kokkos 4.6=" + R("h200-kokkos4.6-seed.json"),
    "12-01 framework=" + R("h200-matmul-seed-after-framework.json"),
    "12-01 wrapper (2 runs)=" + R("h200-matmul-before-after-wrapper.json") + ":A2/matmul-after-",
]
LAYERNORM_CLIMB = [
    "first version=" + R("h200-layernorm-C768.json"),
    "rows in registers=" + R("h200-layernorm-rows-C768.json"),
    "same, device time=" + R("h200-layernorm-rows-C768-device.json"),
]


def docs_plots(out_dir):
    """(what, function, arguments) of each PNG docs/performance.md links."""
    j = lambda name: os.path.join(out_dir, name)  # noqa: E731
    return [
        (j("matmul-seed-h200.png"), draw_bars,
         dict(spec=R("h200-matmul-seed-after-framework.json"),
              title="matmul_backward, seed shape B=8 T=1024 C=768 OC=3072, H200 (12-01)")),
        (j("layernorm-C768-h200.png"), draw_bars,
         dict(spec=R("h200-layernorm-rows-C768-device.json"),
              title="layernorm_backward B=8 T=1024 C=768 (dinp +=), H200, llmk: device time")),
        (j("attention-T1024-h200.png"), draw_bars,
         dict(spec=R("h200-attention-T1024.json"),
              title="attention_backward, B=8 T=1024 C=768 NH=12, H200 (12-01)")),
        (j("matmul-seed-climb-h200.png"), draw_climb,
         dict(specs=MATMUL_CLIMB, impls=["tiled", "cublas", "cublaslt", "kokkoskernels"],
              precisions=["fp32"],
              title="matmul_backward seed shape, fp32 (TF32 off), H200: each run")),
        (j("layernorm-C768-climb-h200.png"), draw_climb,
         dict(specs=LAYERNORM_CLIMB, impls=["blocked", "peer:llmc-style",
                                            "peer:pytorch-compile-kernels"],
              precisions=["fp32", "bf16"],
              title="layernorm_backward C=768, H200: llmk against the fastest peers")),
    ]


def make_docs(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for out, fn, kw in docs_plots(out_dir):
        fn(out=out, **kw)
        print(f"wrote {os.path.relpath(out, REPO)} ({os.path.getsize(out) // 1024} KB)")


# ---- self-test -----------------------------------------------------------------


def selftest():
    """Checks on docs/results, with values read off its files by hand."""
    failures = []

    def expect(what, got, want, rel=1e-9):
        ok = got is not None and want is not None and abs(got - want) <= rel * abs(want)
        print(f"  {'ok' if ok else 'FAILED'}: {what}: {got} (expected {want})")
        if not ok:
            failures.append(what)

    machine, recs = load(R("h200-matmul-seed-after-framework.json"))[0]
    expect("matmul: metric", 1.0 if metric_of(recs) == "tflops" else 0.0, 1.0)
    rows = dict((n, v) for n, v, _ in bar_rows(recs, "bf16", "tflops"))
    # 4·8192·768·3072 + 8192·3072 FLOPs in 0.14278 ms
    expect("matmul bf16 cublas TFLOP/s", rows.get("cublas"),
           (4 * 8192 * 768 * 3072 + 8192 * 3072) / 0.1427839994430542e-3 * 1e-12)
    expect("matmul fp32 ceiling (H200 datasheet)", ceiling(machine, recs, "fp32", "tflops")[0], 66.9)
    expect("matmul bf16 ceiling", ceiling(machine, recs, "bf16", "tflops")[0], 989.4)
    machine, recs = load(R("h200-seed-shape.json"))[0]
    expect("an old file's record without precision is fp32",
           float(len(bar_rows(recs, "fp32", "tflops"))), float(len(recs)))

    machine, recs = load(R("h200-layernorm-rows-C768-device.json"))[0]
    expect("layernorm: metric GB/s", 1.0 if metric_of(recs) == "gbs" else 0.0, 1.0)
    expect("layernorm bf16 ceiling: its peer:copy", ceiling(machine, recs, "bf16", "gbs")[0],
           2753.762286311071)
    names = [n for n, _, _ in bar_rows(recs, "fp32", "gbs")]
    expect("layernorm: peer:copy is the ceiling, not a bar", float("peer:copy" in names), 0.0)
    expect("layernorm: imported rows marked", float("peer:pytorch-eager*" in names), 1.0)

    machine, recs = load(R("h200-attention-T1024.json"))[0]
    names = [n for n, _, _ in bar_rows(recs, "bf16", "tflops")]
    expect("attention: peer:copy (FLOPs over a copy's time) is not a TFLOP/s bar",
           float("peer:copy" in names), 0.0)
    expect("attention: cublas is", float("cublas" in names), 1.0)

    runs = load(R("h200-matmul-before-after-wrapper.json") + ":A2/matmul-after-")
    expect("a run prefix takes each of its runs", float(len(runs)), 2.0)
    labels, series, _ = climb_points(MATMUL_CLIMB, "fp32", ["tiled", "cublas"], "tflops")
    flops = 4 * 8192 * 768 * 3072 + 8192 * 3072
    expect("climb: tiled, first run (3.917 ms)", series["tiled"][0][0],
           flops / 3.9171680212020874e-3 * 1e-12)
    expect("climb: tiled, last point: the median of two runs (2.228, 2.213 ms)",
           series["tiled"][-1][0],
           statistics.median([flops / 2.2284159660339355e-3, flops / 2.2127039432525635e-3]) * 1e-12)
    expect("climb: cublas of the first run is the implementation's, not the peer's (1.711 ms)",
           series["cublas"][0][0], flops / 1.710976004600525e-3 * 1e-12)
    _, series, ceilings = climb_points(LAYERNORM_CLIMB, "fp32", ["blocked"], "gbs")
    expect("layernorm climb: the first version's GB/s", series["blocked"][0][0], 1203.461821507872)
    expect("layernorm climb: its copy", ceilings[0], 2911.0088659577423)

    try:
        import matplotlib  # noqa: F401
        have = True
    except ImportError:
        have = False
        print("  (matplotlib not installed: the PNGs are not drawn; see --help)")
    if have:
        with tempfile.TemporaryDirectory() as tmp:
            for out, fn, kw in docs_plots(tmp):
                fn(out=out, **kw)
                with open(out, "rb") as f:
                    ok = f.read(8) == b"\x89PNG\r\n\x1a\n" and os.path.getsize(out) > 5000
                print(f"  {'ok' if ok else 'FAILED'}: drew {os.path.basename(out)} "
                      f"({os.path.getsize(out) // 1024} KB)")
                if not ok:
                    failures.append("drawing " + os.path.basename(out))
    print(f"{len(failures)} failed" if failures else "all checks hold")
    return 1 if failures else 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--selftest"]:
        return selftest()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[2:]))
    ap.add_argument("--selftest", action="store_true", help="the checks on docs/results")
    sub = ap.add_subparsers(dest="command")
    b = sub.add_parser("bars", help="a run's implementations and peers against the ceiling")
    b.add_argument("result", help="llmk-perf's JSON (FILE, or FILE:RUN)")
    b.add_argument("-o", "--out", help="the PNG (default: the JSON's name, .png)")
    b.add_argument("--metric", choices=list(UNIT), help="default: TFLOP/s if the records count FLOPs")
    b.add_argument("--ceiling", type=float, help="the ceiling, in the metric's unit")
    b.add_argument("--title")
    c = sub.add_parser("climb", help="the same operation over runs")
    c.add_argument("points", nargs="+", help="[LABEL=]FILE[:RUN], oldest first")
    c.add_argument("--impls", required=True, help="comma list of rows to follow")
    c.add_argument("--precision", default="fp32", help="comma list: a panel each")
    c.add_argument("-o", "--out", required=True)
    c.add_argument("--metric", choices=list(UNIT))
    c.add_argument("--ceiling", type=float)
    c.add_argument("--title")
    d = sub.add_parser("docs", help="docs/performance.md's PNGs from docs/results")
    d.add_argument("--out", default=os.path.join(REPO, "docs", "plots"))
    args = ap.parse_args(argv)
    if args.selftest:
        return selftest()
    if args.command == "bars":
        out = args.out or os.path.splitext(args.result.split(":")[0])[0] + ".png"
        print("wrote", draw_bars(args.result, out, args.metric, args.ceiling, args.title))
    elif args.command == "climb":
        print("wrote", draw_climb(args.points, args.impls.split(","), args.precision.split(","),
                                  args.out, args.metric, args.title, args.ceiling))
    elif args.command == "docs":
        make_docs(args.out)
    else:
        ap.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
