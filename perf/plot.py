#!/usr/bin/env python3
"""Plots of llmk-perf's JSON (with the peers it imported): one PNG a command.

  docs [--out docs/plots]
      every PNG the docs show, redrawn from results/ (the files each plot is
      made of: docs_plots() below; docs/performance.md names them too).
  bars RESULT[@PRECISIONS] [RESULT[@PRECISIONS] ...] [-o OUT.png] [--metric tflops|gbs]
       [--ceiling TFLOPS] [--title TEXT]
      per precision, a bar per implementation and peer of its achieved
      TFLOP/s (GB/s for an operation whose records have no FLOP count, e.g.
      layernorm_backward), with the device's ceiling drawn: for GB/s the run's
      own peer:copy of that precision (a device copy of as many bytes, read +
      write), else the machine's device_copy_gbs; for TFLOP/s --ceiling, or
      the datasheet peak of a known GPU (DEVICE_PEAKS below). RESULT is FILE
      or FILE:RUN; @fp32,bf16 takes only those precisions from it. A panel's
      rows come from the first RESULT that has its precision; rows of a later
      RESULT in the same panel are marked with a dagger (another run).
  climb [LABEL=]FILE[:RUN] ... --impls NAMES [--precision LIST] [-o OUT.png]
      the same operation and shape over several runs: a line per
      implementation through the given runs, in the order given; RUN names one
      run of a file of several ("runs": {...}), or a prefix of several (their
      median, the bar from their min to their max).
  gpt2 LOG [LOG ...] [-o OUT.png] [--labels A,B,...]
      llmk-gpt2-backward's printed output (a log of it): the whole backward
      against PyTorch's times in the same call, and the fenced steps of the
      first log.
  --selftest
      checks what the plots are made of on results/ (and, where matplotlib
      is found, draws every docs plot into a temporary folder).

A record without "precision" ran in fp32 (files from before precisions); a
record's value is its median time's.

Needs matplotlib, which scripts/setup.sh installs (Debian's
python3-matplotlib, for Debian's /usr/bin/python3):

  python3 perf/plot.py docs

Where `python3` is another interpreter (pyenv, a venv) that cannot import
Debian's packages, run `/usr/bin/python3 perf/plot.py ...`; plot.py also
restarts itself under /usr/bin/python3 when its own interpreter lacks
matplotlib and that one has it.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(REPO, "results")
DEBIAN_PYTHON = "/usr/bin/python3"

# Dense peak TFLOP/s per precision (bf16-fp32grad: the bf16 tensor cores).
# H200 SXM: NVIDIA's H200 Tensor Core GPU datasheet gives FP32 67 TFLOPS,
# TF32 Tensor Core 989 and BF16 1,979 TFLOPS "with sparsity"; dense is half
# (132 SMs at 1.83-1.98 GHz: FP32 66.9, TF32 494.7, BF16 989.4, as for the
# H100 SXM, the same GH100 die and clocks). Its HBM3e: 4.8 TB/s (the copy
# measured here reaches 4.0-4.2 TB/s read + write: the runs' peer:copy).
DEVICE_PEAKS = {
    "H200": {"fp32": 66.9, "tf32": 494.7, "bf16": 989.4, "bf16-fp32grad": 989.4},
}
PRECISIONS = ("fp32", "tf32", "bf16", "bf16-fp32grad")

IMPL_COLOR, PEER_COLOR, TORCH_COLOR, CEILING_COLOR = "#2f6db3", "#8c8c8c", "#e08a2c", "#c0392b"
OTHER_RUN = "\u2020"  # a row from another run than its panel's first


def have_matplotlib():
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        return False


def restart_under_debian_python():
    """Where this interpreter lacks matplotlib (a pyenv or venv python3 that
    cannot see Debian's packages) and Debian's /usr/bin/python3 has it (what
    scripts/setup.sh installs), run the same command there instead."""
    if have_matplotlib() or os.environ.get("LLMK_PLOT_RESTARTED") or not os.path.exists(DEBIAN_PYTHON):
        return
    if os.path.realpath(sys.executable) == os.path.realpath(DEBIAN_PYTHON):
        return
    probe = subprocess.run([DEBIAN_PYTHON, "-c", "import matplotlib"], capture_output=True)
    if probe.returncode != 0:
        return
    print(f"plot.py: {sys.executable} has no matplotlib; running under {DEBIAN_PYTHON}",
          file=sys.stderr)
    sys.stdout.flush()
    os.execve(DEBIAN_PYTHON, [DEBIAN_PYTHON, os.path.abspath(__file__)] + sys.argv[1:],
              dict(os.environ, LLMK_PLOT_RESTARTED="1"))


def need_matplotlib():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        sys.exit("plot.py: matplotlib is not installed for this python3. scripts/setup.sh installs\n"
                 "Debian's (apt-get install python3-matplotlib); run plot.py with /usr/bin/python3.")


# ---- what the plots are made of ---------------------------------------------


def split_precisions(spec):
    """FILE[:RUN][@P1,P2] -> (FILE[:RUN], [P1, P2] or None)."""
    if "@" in spec:
        head, _, tail = spec.rpartition("@")
        wanted = tail.split(",")
        if head and all(p in PRECISIONS for p in wanted):
            return head, wanted
    return spec, None


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
    if "Vp" in keys:
        return "classifier_backward"
    if "V" in keys:
        return "encoder_backward"
    if "dweight_rel_err" in keys:
        return "layernorm_backward"
    return "gelu_backward"


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
    keys = [k for k in ("B", "T", "C", "OC", "NH", "V") if k in r]
    flags = [k for k in ("gelu", "overwrite_dinp", "overwrite_dqkv") if r.get(k)]
    return " ".join(f"{k}={r[k]}" for k in keys) + (f" ({', '.join(flags)})" if flags else "")


def bar_rows(records, precision, metric, impls=None, mark=""):
    """[(label, value or None, color)] of one precision, in the table's order;
    impls: only these rows (a name ending in * is a prefix: "peer:pytorch*")."""
    rows = []
    for r in records:
        # peer:copy is the ceiling in GB/s and no computation at all in
        # TFLOP/s (llmk-perf still divides the operation's FLOPs by its time).
        if precision_of(r) != precision or is_ceiling_row(r):
            continue
        if impls and not any(r["impl"] == i or (i.endswith("*") and r["impl"].startswith(i[:-1]))
                             for i in impls):
            continue
        if value(r, metric) is None and not r.get("skipped") and r.get("ms_median") is not None:
            continue  # timed, but not in this metric
        name = r["impl"] + ("*" if r.get("imported") else "") + mark
        peer = r.get("kind") == "peer" or r["impl"].startswith("peer:")
        color = TORCH_COLOR if "pytorch" in r["impl"] else PEER_COLOR if peer else IMPL_COLOR
        rows.append((name, value(r, metric), color))
    return rows


def bar_panels(sources, metric=None, given_ceiling=None):
    """sources: [{"spec": FILE[:RUN], "precisions": [...] or None, "impls": [...] or None}].
    -> (metric, [(precision, rows, (ceiling, label))], first run's (machine, records)).
    A panel's rows come first from the first source with that precision; rows
    of later sources in the same panel are marked OTHER_RUN."""
    runs = []
    for src in sources:
        loaded = load(src["spec"])
        if len(loaded) != 1:
            raise SystemExit("plot.py bars: name one run, not a prefix of several")
        runs.append((src, loaded[0]))
    metric = metric or metric_of(runs[0][1][1])
    panels = {}  # precision -> [rows, ceiling, label]
    for src, (machine, records) in runs:
        order = list(dict.fromkeys(precision_of(r) for r in records))
        for precision in order:
            if src.get("precisions") and precision not in src["precisions"]:
                continue
            first = precision not in panels
            rows = bar_rows(records, precision, metric, src.get("impls"),
                            "" if first else OTHER_RUN)
            if first:
                limit, label = ceiling(machine, records, precision, metric, given_ceiling)
                panels[precision] = [rows, limit, label]
            else:
                panels[precision][0].extend(rows)
    result = [(p, rows, (limit, label)) for p, (rows, limit, label) in panels.items() if rows]
    return metric, result, runs[0][1]


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


def read_gpt2_log(path):
    """llmk-gpt2-backward's printed output -> {"implementations": str,
    "steps": [(name, ms)], "llmk": ms (no fences), "pytorch": {name: ms}}."""
    out = {"implementations": "", "steps": [], "llmk": None, "pytorch": {}}
    in_steps = False
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("implementations:"):
                out["implementations"] = line.split(":", 1)[1].strip()
            elif line.startswith("step (fenced after each)"):
                in_steps = True
            elif line.startswith("sum of the steps"):
                in_steps = False
            elif in_steps:
                m = re.match(r"^(.*?)\s+([0-9.]+)\s+[0-9.]+%$", line)
                if m:
                    out["steps"].append((m.group(1).strip(), float(m.group(2))))
            m = re.match(r"^llmk backward \(no fences\)\s+([0-9.]+)", line)
            if m:
                out["llmk"] = float(m.group(1))
            m = re.match(r"^PyTorch (\S+)\s+([0-9.]+)", line)
            if m:
                out["pytorch"][m.group(1)] = float(m.group(2))
    if out["llmk"] is None:
        raise SystemExit(f"plot.py gpt2: {path} has no 'llmk backward (no fences)' line")
    return out


# ---- drawing -----------------------------------------------------------------


UNIT = {"tflops": "TFLOP/s", "gbs": "GB/s"}


def draw_bars(sources, out, metric=None, given_ceiling=None, title=None):
    """sources: a list of {"spec", "precisions", "impls"} (or one FILE[:RUN][@P,...] string)."""
    plt = need_matplotlib()
    if isinstance(sources, str):
        sources = [sources]
    sources = [dict(zip(("spec", "precisions"), split_precisions(s))) if isinstance(s, str) else s
               for s in sources]
    metric, panels, (machine, records) = bar_panels(sources, metric, given_ceiling)
    heights = [0.27 * len(rows) + 0.8 for _, rows, _ in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(8, sum(heights) + 0.8),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    marked = False
    for ax, (precision, rows, (limit, label)) in zip(axes[:, 0], panels):
        marked = marked or any(n.endswith(OTHER_RUN) for n, _, _ in rows)
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
    legend = ("blue: llmk   grey: peers   orange: PyTorch   *: imported (timed by "
              "perf/torch_baseline.py)   dashed: the device's ceiling")
    if marked:
        legend += f"   {OTHER_RUN}: another run"
    fig.text(0.01, 0.005, legend, fontsize=6.5, color="#444")
    fig.tight_layout(rect=(0, 0.025, 1, 0.97))
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


def draw_gpt2(logs, out, labels=None, title=None):
    """The whole backward of each log (llmk) and PyTorch's bf16 times of the
    first, beside the first log's fenced steps."""
    plt = need_matplotlib()
    runs = [read_gpt2_log(p) for p in logs]
    labels = labels or [f"llmk ({r['implementations']})" for r in runs]
    bars = [(label, r["llmk"], IMPL_COLOR) for label, r in zip(labels, runs)]
    names = {"compile_bf16": "PyTorch torch.compile (bf16 autocast)",
             "eager_bf16": "PyTorch eager (bf16 autocast)"}
    bars += [(names[k], runs[0]["pytorch"][k], TORCH_COLOR) for k in names if k in runs[0]["pytorch"]]
    steps = runs[0]["steps"]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 3.6), gridspec_kw={"width_ratios": [1.1, 1]})
    ys = list(range(len(bars)))[::-1]
    ax.barh(ys, [v for _, v, _ in bars], color=[c for _, _, c in bars], height=0.65)
    top = max(v for _, v, _ in bars) * 1.2
    for y, (_, v, _) in zip(ys, bars):
        ax.text(v + top * 0.01, y, f"{v:.2f}", va="center", fontsize=8)
    ax.set_yticks(ys)
    ax.set_yticklabels([n for n, _, _ in bars], fontsize=8)
    ax.set_xlim(0, top)
    ax.set_xlabel("ms per backward (median; lower is better)", fontsize=8)
    ax.set_title("the whole backward, no fences", fontsize=9, loc="left")
    ax.grid(axis="x", alpha=0.3)
    ax.tick_params(axis="x", labelsize=7)
    sy = list(range(len(steps)))[::-1]
    bx.barh(sy, [v for _, v in steps], color=IMPL_COLOR, height=0.65)
    stop = max(v for _, v in steps) * 1.2
    for y, (_, v) in zip(sy, steps):
        bx.text(v + stop * 0.01, y, f"{v:.2f}", va="center", fontsize=8)
    bx.set_yticks(sy)
    bx.set_yticklabels([n for n, _ in steps], fontsize=8)
    bx.set_xlim(0, stop)
    bx.set_xlabel("ms (each step fenced: their sum exceeds the unfenced time)", fontsize=8)
    bx.set_title(f"llmk's steps ({labels[0]})", fontsize=9, loc="left")
    bx.grid(axis="x", alpha=0.3)
    bx.tick_params(axis="x", labelsize=7)
    fig.suptitle(title or "GPT-2 backward", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


# ---- the docs' plots -----------------------------------------------------------


def H(name):
    return os.path.join(RESULTS, "h200", name)


def src(name, precisions=None, impls=None):
    return {"spec": H(name), "precisions": precisions, "impls": impls}


def docs_plots(out_dir):
    """(PNG, function, arguments) of each plot the docs show: README.md and
    docs/performance.md. Each from the results files its table names."""
    j = lambda name: os.path.join(out_dir, name)  # noqa: E731
    return [
        (j("gpt2-124M-h200.png"), draw_gpt2,
         dict(logs=[H("h200-gpt2-124M-bf16-L5.log"), H("h200-gpt2-124M-bf16-blocked-L5.log")],
              labels=["llmk (defaults)", "llmk, blocked layer norms"],
              title="GPT-2 124M backward, bf16, B=8 T=1024, H200")),
        (j("matmul-seed-h200.png"), draw_bars,
         dict(sources=[src("h200-matmul-with-compile-peers.json")],
              title="matmul_backward, seed shape B=8 T=1024 C=768 OC=3072 (dinp =), H200")),
        (j("layernorm-C768-h200.png"), draw_bars,
         dict(sources=[src("h200-layernorm-warp-rows-C768-device-L5.json"),
                       src("h200-layernorm-rows-C768-device.json", impls=["peer:pytorch*"])],
              title="layernorm_backward B=8 T=1024 C=768 (dinp +=), H200, llmk: device time")),
        (j("attention-T1024-h200.png"), draw_bars,
         dict(sources=[src("h200-gpu-run-perf-attention-B8-T1024-H3.json", ["fp32"]),
                       src("h200-attention-flash-mma-ds-B8-T1024-J5.json", ["bf16"]),
                       src("h200-gpu-run-perf-attention-B8-T1024-H3.json", ["bf16"],
                           ["materialized", "flash"])],
              title="attention_backward (and _recompute) B=8 T=1024 C=768 NH=12, H200, "
                    "llmk: device time")),
        (j("gelu-h200.png"), draw_bars,
         dict(sources=[src("h200-gelu.json")],
              title="gelu_backward B=8 T=1024 C=3072 (dinp +=), H200")),
        (j("encoder-h200.png"), draw_bars,
         dict(sources=[src("h200-encoder-folded-check-L1-checked.json")],
              title="encoder_backward B=8 T=1024 C=768 V=50257, Zipf tokens, checked, H200")),
        (j("classifier-h200.png"), draw_bars,
         dict(sources=[src("h200-classifier-warp-merge-H1.json"),
                       src("h200-classifier-row-in-shared-S3.json", impls=["peer:pytorch*"])],
              title="classifier_backward B=8 T=1024 V=50257 Vp=50304, bf16, H200, "
                    "llmk: device time")),
    ]


def docs_plot_args(png):
    """The arguments docs_plots() draws a PNG with."""
    return next(kw for out, _, kw in docs_plots(".") if os.path.basename(out) == png)


def make_docs(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for out, fn, kw in docs_plots(out_dir):
        fn(out=out, **kw)
        print(f"wrote {os.path.relpath(out, REPO)} ({os.path.getsize(out) // 1024} KB)")


# ---- self-test -----------------------------------------------------------------

# Two runs of the documented history, for climb's checks.
MATMUL_CLIMB = [
    "first run=" + H("h200-seed-shape.json"),
    "core before=" + H("h200-core-before-seed.json"),
    "framework=" + H("h200-matmul-seed-after-framework.json"),
    "wrapper (2 runs)=" + H("h200-matmul-before-after-wrapper.json") + ":A2/matmul-after-",
]
LAYERNORM_CLIMB = [
    "first version=" + H("h200-layernorm-C768.json"),
    "rows in registers=" + H("h200-layernorm-rows-C768-device.json"),
    "warp_rows=" + H("h200-layernorm-warp-rows-C768-device-L5.json"),
]


def selftest():
    """Checks on results/, with values read off its files by hand."""
    failures = []

    def expect(what, got, want, rel=1e-9):
        ok = got is not None and want is not None and abs(got - want) <= rel * abs(want)
        print(f"  {'ok' if ok else 'FAILED'}: {what}: {got} (expected {want})")
        if not ok:
            failures.append(what)

    flops = 4 * 8192 * 768 * 3072 + 8192 * 3072
    machine, recs = load(H("h200-matmul-with-compile-peers.json"))[0]
    expect("matmul: metric", 1.0 if metric_of(recs) == "tflops" else 0.0, 1.0)
    expect("matmul: operation", float(operation_of(recs) == "matmul_backward"), 1.0)
    rows = dict((n, v) for n, v, _ in bar_rows(recs, "bf16", "tflops"))
    expect("matmul bf16 cublas TFLOP/s (0.16299 ms)", rows.get("cublas"),
           flops / 0.16299200057983398e-3 * 1e-12)
    expect("matmul: an imported row is marked", float("peer:pytorch-compile*" in rows), 1.0)
    expect("matmul fp32 ceiling (H200 datasheet)", ceiling(machine, recs, "fp32", "tflops")[0], 66.9)
    expect("matmul bf16 ceiling", ceiling(machine, recs, "bf16", "tflops")[0], 989.4)
    machine, recs = load(H("h200-seed-shape.json"))[0]
    expect("an old file's record without precision is fp32",
           float(len(bar_rows(recs, "fp32", "tflops"))), float(len(recs)))

    machine, recs = load(H("h200-layernorm-warp-rows-C768-device-L5.json"))[0]
    expect("layernorm: metric GB/s", 1.0 if metric_of(recs) == "gbs" else 0.0, 1.0)
    expect("layernorm: operation", float(operation_of(recs) == "layernorm_backward"), 1.0)
    expect("layernorm bf16 ceiling: its peer:copy", ceiling(machine, recs, "bf16", "gbs")[0],
           next(r["gbs"] for r in recs if r["impl"] == "peer:copy" and r["precision"] == "bf16"))
    names = [n for n, _, _ in bar_rows(recs, "bf16", "gbs")]
    expect("layernorm: warp_rows is drawn", float("warp_rows" in names), 1.0)
    expect("layernorm: peer:copy is the ceiling, not a bar", float("peer:copy" in names), 0.0)

    metric, panels, _ = bar_panels(docs_plot_args("layernorm-C768-h200.png")["sources"])
    bf16 = dict((n, v) for n, v, _ in next(rows for p, rows, _ in panels if p == "bf16"))
    expect("layernorm plot: PyTorch's rows from another run, marked",
           float(f"peer:pytorch-eager*{OTHER_RUN}" in bf16), 1.0)
    expect("layernorm plot: warp_rows bf16 GB/s (L5)", bf16.get("warp_rows"),
           next(r["gbs"] for r in recs if r["impl"] == "warp_rows" and r["precision"] == "bf16"))

    metric, panels, _ = bar_panels(docs_plot_args("attention-T1024-h200.png")["sources"])
    by = dict((p, dict((n, v) for n, v, _ in rows)) for p, rows, _ in panels)
    expect("attention plot: panels fp32 and bf16", float(sorted(by) == ["bf16", "fp32"]), 1.0)
    B, T, C = 8, 1024, 768  # 4·B·C·T·(T+1) FLOPs, the causal half's four products
    ds_ms = next(r["ms_median"] for r in load(H("h200-attention-flash-mma-ds-B8-T1024-J5.json"))[0][1]
                 if r["impl"] == "flash_mma_ds")
    expect(f"attention plot: bf16 has flash_mma_ds ({ds_ms:.4f} ms)",
           by["bf16"].get("flash_mma_ds"), 4 * B * C * T * (T + 1) / ds_ms * 1e-9, rel=1e-6)
    expect("attention plot: fp32 flash_mma from the gpu-run call",
           float("flash_mma" in by["fp32"]), 1.0)
    expect("attention plot: materialized bf16 from another run, marked",
           float(f"materialized{OTHER_RUN}" in by["bf16"]), 1.0)
    expect("attention plot: peer:copy is not a TFLOP/s bar",
           float(any(n.startswith("peer:copy") for n in by["bf16"])), 0.0)

    _, recs = load(H("h200-encoder-folded-check-L1-checked.json"))[0]
    expect("encoder: operation", float(operation_of(recs) == "encoder_backward"), 1.0)
    _, recs = load(H("h200-classifier-warp-merge-H1.json"))[0]
    expect("classifier: operation", float(operation_of(recs) == "classifier_backward"), 1.0)
    _, recs = load(H("h200-gelu.json"))[0]
    expect("gelu: operation", float(operation_of(recs) == "gelu_backward"), 1.0)

    g = read_gpt2_log(H("h200-gpt2-124M-bf16-L5.log"))
    expect("gpt2: llmk's unfenced ms", g["llmk"], 10.9521)
    expect("gpt2: torch.compile bf16 ms", g["pytorch"].get("compile_bf16"), 12.9218)
    expect("gpt2: nine fenced steps", float(len(g["steps"])), 9.0)
    expect("gpt2: attention's step", dict(g["steps"]).get("attention"), 3.3125)

    runs = load(H("h200-matmul-before-after-wrapper.json") + ":A2/matmul-after-")
    expect("a run prefix takes each of its runs", float(len(runs)), 2.0)
    expect("FILE@PRECISIONS", float(split_precisions("x.json:R@fp32,bf16") == ("x.json:R", ["fp32", "bf16"])),
           1.0)
    labels, series, _ = climb_points(MATMUL_CLIMB, "fp32", ["tiled", "cublas"], "tflops")
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

    docs = sorted(os.path.basename(out) for out, _, _ in docs_plots("/tmp"))
    shown = set()
    for md in ("README.md", os.path.join("docs", "performance.md")):
        path = os.path.join(REPO, md)
        if os.path.exists(path):
            shown |= set(re.findall(r"plots/([\w.-]+\.png)", open(path).read()))
    expect("every PNG the docs show is drawn by `docs`", float(shown <= set(docs)), 1.0)
    if not shown <= set(docs):
        print("    not drawn:", sorted(shown - set(docs)))

    if have_matplotlib():
        with tempfile.TemporaryDirectory() as tmp:
            for out, fn, kw in docs_plots(tmp):
                fn(out=out, **kw)
                with open(out, "rb") as f:
                    ok = f.read(8) == b"\x89PNG\r\n\x1a\n" and os.path.getsize(out) > 5000
                print(f"  {'ok' if ok else 'FAILED'}: drew {os.path.basename(out)} "
                      f"({os.path.getsize(out) // 1024} KB)")
                if not ok:
                    failures.append("drawing " + os.path.basename(out))
    else:
        print(f"  (matplotlib not found for {sys.executable}: the PNGs are not drawn; "
              f"run with {DEBIAN_PYTHON} after scripts/setup.sh)")
    print(f"{len(failures)} failed" if failures else "all checks hold")
    return 1 if failures else 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] not in ("-h", "--help"):
        restart_under_debian_python()
    if argv[:1] == ["--selftest"]:
        return selftest()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[2:]))
    ap.add_argument("--selftest", action="store_true", help="the checks on results/")
    sub = ap.add_subparsers(dest="command")
    d = sub.add_parser("docs", help="every PNG the docs show, from results/")
    d.add_argument("--out", default=os.path.join(REPO, "docs", "plots"))
    b = sub.add_parser("bars", help="a run's implementations and peers against the ceiling")
    b.add_argument("results", nargs="+", help="llmk-perf's JSON: FILE[:RUN][@PRECISIONS]")
    b.add_argument("-o", "--out", help="the PNG (default: the first JSON's name, .png)")
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
    g = sub.add_parser("gpt2", help="llmk-gpt2-backward's output against PyTorch's times")
    g.add_argument("logs", nargs="+", help="its printed output, one file a run")
    g.add_argument("-o", "--out", required=True)
    g.add_argument("--labels", help="comma list, one a log")
    g.add_argument("--title")
    args = ap.parse_args(argv)
    if args.selftest:
        return selftest()
    if args.command == "bars":
        first = split_precisions(args.results[0])[0].split(":")[0]
        out = args.out or os.path.splitext(first)[0] + ".png"
        print("wrote", draw_bars(args.results, out, args.metric, args.ceiling, args.title))
    elif args.command == "climb":
        print("wrote", draw_climb(args.points, args.impls.split(","), args.precision.split(","),
                                  args.out, args.metric, args.title, args.ceiling))
    elif args.command == "gpt2":
        labels = args.labels.split(",") if args.labels else None
        print("wrote", draw_gpt2(args.logs, args.out, labels, args.title))
    elif args.command == "docs":
        make_docs(args.out)
    else:
        ap.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
