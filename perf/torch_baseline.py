#!/usr/bin/env python3
"""PyTorch's backward of an llmk operation on llmk's shapes, as a peer for llmk-perf on CUDA or the CPU.

Each llmk-perf operation (--op, or its name as an argument, as llmk-perf's
subcommand; default matmul_backward); the code of each is in perf/torch_peers/.
On a CUDA GPU by default; --device cpu times PyTorch's CPU backward instead
(below).

matmul_backward: times out.backward(dout) for out = F.linear(inp, weight, bias)
(peer:pytorch), in each precision llmk-perf has (--precision, as llmk-perf's):
  fp32           float32 tensors, torch.backends.cuda.matmul.allow_tf32 = False
  tf32           float32 tensors, allow_tf32 = True
  bf16           bfloat16 tensors (inputs, weight, bias and their .grad)
  bf16-fp32grad  torch.autocast(bfloat16) over float32 weight and bias (their
                 .grad float32, PyTorch's mixed precision), bf16 activations
With --gelu, out = F.linear(F.gelu(pre, approximate='tanh'), weight, bias) and
the time is the whole backward of that expression, as PyTorch users get it
(dinp is then pre's gradient). The gradients accumulate into .grad as llm.c's
do; with --overwrite-dinp the activation's .grad is set to None before each
call (untimed), so that autograd writes it instead of adding to it.
With --compile (or --compile-modes), the explicit backward on llmk's inputs
(dinp = or += (dout·W) ⊙ gelu'(pre), dweight += doutᵀ·inp, dbias += Σ dout;
bf16-fp32grad: bf16 weight, float dweight and dbias) under torch.compile, a
row per mode (--compile: "default" and "max-autotune-no-cudagraphs"):
  peer:pytorch-compile, peer:pytorch-compile-autotune   the compiled calls
  peer:pytorch-compile[-autotune]-kernels   their CUDA kernel time (torch.profiler)

layernorm_backward: the backward of F.layer_norm(inp, (C,), weight, bias) over
the last dimension of B×T×C, given the forward's mean and rstd (float, as
llmk's), at --B --T --C (default GPT-2 124M's 8, 1024, 768), in fp32, bf16 and
bf16-fp32grad (bf16 dout, inp and dinp, float32 weight, bias and their
gradients). One call is torch.ops.aten.native_layer_norm_backward (what
autograd runs for F.layer_norm) and the gradients' update, as llmk's: dinp +=
(or = with --overwrite-dinp), dweight +=, dbias +=. Rows:
  peer:pytorch-eager             that call op by op (PyTorch's layer-norm
                                 backward kernels, then the additions)
  peer:pytorch-compile           torch.compile of it (Inductor's kernels, the
                                 additions fused), mode="default"
  peer:pytorch-compile-cudagraphs  the same, mode="reduce-overhead" (CUDA graphs)
  peer:pytorch-compile-kernels   the CUDA kernel time of the default compile's
                                 calls, summed per call from torch.profiler
The bytes behind GB/s are llmk-perf's (the reference's Shape::bytes).

gelu_backward: aten.gelu_backward(dout, inp, approximate='tanh') and dinp +=
(or = with --overwrite-dinp) over B×T×C (pass --C 3072: GPT-2 124M's MLP, as
llmk-perf gelu_backward's default), fp32 and bf16: peer:pytorch-eager,
peer:pytorch-compile and its -kernels (--compile-modes, default "default");
perf/torch_peers/gelu.py. gelu_forward: aten.gelu(inp, approximate='tanh') and
out = (+= with --accumulate-out), the same rows. layernorm_forward:
aten.native_layer_norm (out, mean, rstd) and out = (+=), the same rows;
perf/torch_peers/layernorm_forward.py. matmul_forward: aten.addmm (F.linear)
at --B --T --C --OC, with --gelu then aten.gelu(tanh), --no-bias: aten.mm,
out = (+=), the same rows; perf/torch_peers/matmul_forward.py. encoder_forward:
aten.embedding(wte, tokens) + wpe at --B --T --C --V (Zipf tokens, as
encoder_backward's), out = (+=), the same rows; perf/torch_peers/encoder_forward.py.
residual_forward: inp1 + inp2 at --B --T --C, out = (+=), the same rows;
perf/torch_peers/residual_forward.py. adamw: torch.optim.AdamW's step over --N
parameters in one tensor (--master: the records say so), fused, foreach and
single-tensor; perf/torch_peers/adamw.py. squared_norm: vector_norm(g) ** 2 over
--N values, out = (+=), eager and compiled; perf/torch_peers/squared_norm.py.
attention_forward: scaled_dot_product_attention(is_causal=True) on qkv split
into heads and merged back, at --B --T --C --NH, out = (+=), eager and compiled;
perf/torch_peers/attention_forward.py.

encoder_backward: aten.embedding_dense_backward (what autograd runs for
wte[tokens]) and dout.sum(0) for wpe, then dwte +=, dwpe += at --B --T --C
--V (768, 50257 for GPT-2 124M), tokens drawn P(v) ∝ 1/(v + 1), fp32, bf16,
bf16-fp32grad: peer:pytorch-eager, peer:pytorch-eager-deterministic
(torch.use_deterministic_algorithms(True)), peer:pytorch-compile;
perf/torch_peers/encoder.py (records flagged zipf_tokens: import them into
llmk-perf encoder_backward --zipf).

attention_backward: the backward of causal self-attention at --B --T --C --NH
(default 8, 1024, 768, 12) on llmk's layout (qkv B×T×3C, q, k, v side by side
in heads of C/NH; dout B×T×C; dqkv written), fp32 (TF32 off) and bf16, the
forward outside the timed region: F.scaled_dot_product_attention(is_causal=
True) with each backend forced (peer:pytorch-sdpa-math, -flash, -efficient,
-cudnn; one that cannot run a precision is a skipped row saying why),
torch.compile of the explicit softmax attention (peer:pytorch-compile and its
-kernels; --compile-modes, default "default"), and llm.c's algorithm in
PyTorch ops given the forward's att (peer:pytorch-llmc-style: four torch.bmm
around the softmax backward written out). GFLOP/s as llmk-perf's (the causal
half: 4·B·C·T·(T+1)). Each row's relative L2 error of dqkv against float64 is
judged (fp32 ≤ 1e-4, bf16 ≤ 1.6e-2: perf/torch_peers/attention.py says why);
a row over it makes the exit status 1. perf/torch_peers/attention.py has the
details.

classifier_backward: the backward of F.cross_entropy over logits[..., :V] of
B×T×Vp logits (default 8, 1024, 50257, 50304), fp32 and bf16: autograd's
backward eager (peer:pytorch-eager) and torch.compile of the explicit
backward with the losses (peer:pytorch-compile and its -kernels);
perf/torch_peers/classifier.py has the details.

classifier_forward: F.cross_entropy(logits[..., :V].float(), reduction="none")
at the same sizes, fp32 and bf16 logits, eager and torch.compile (and its
-kernels): perf/torch_peers/classifier_forward.py.

Compile times are reported apart (the note, and "compile_s" in the JSON),
with Inductor's caches as found (a second run of the script compiles from
them; TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 measures a cold compile).

Like llmk-perf: warm-up, then CUDA events around each call, the L2 flushed
between repeats (a buffer of twice its size written), the median and min
reported; with --runs N, N timing runs of --repeat calls one after the
other: ms_median is the median of the runs' medians, and the JSON has each
run's median and their min and max (run_medians_ms, ms_median_min,
ms_median_max). Each output's relative L2
error against a float64 computation from the very same inputs (matmul and
layernorm: reported, not judged). Writes a JSON record per precision (and row)
that llmk-perf --import reads, so that llmk-perf's table shows PyTorch beside
llmk's implementations.

--device cpu (default cuda): PyTorch's CPU backward instead, for
`llmk-perf <op> --backend openmp --import FILE`: the same operations, shapes,
rows and records (their "backend" ATen's parallel backend, "OpenMP" in
PyTorch's wheels, as llmk-perf's OpenMP rows; the JSON's "machine" says
{"cpu", "threads", "torch"} instead of {"gpu"}). What differs on the CPU:
  threads     torch.set_num_threads(--threads N), default OMP_NUM_THREADS or
              every CPU the process may use (OMP_NUM_THREADS is set to N too,
              before torch is imported, for the OpenMP of Inductor's kernels)
  timing      the wall clock (time.perf_counter) around each call (CPU ops
              return when done), warm-up first, the median of the repeats
  caches      not flushed by default, as llmk-perf does not on a host (its
              perf/harness/l2_flush.hpp: host caches are small next to the
              data); --llc-flush writes a buffer of twice the last-level
              cache (sysfs) before each timed call, as the GPU's L2 flush
  tf32        no TF32 on the CPU: a skipped row saying so
  compile     real Inductor (C++ code generation: needs a C++ compiler),
              mode "default" only (matmul_backward: with --compile); modes
              with CUDA graphs ("reduce-overhead", "max-autotune") dropped
              with a printed reason; --compile-modes picks others
  -kernels    the profiler's CUDA kernel time: printed as skipped, with the
              reason, and left out of the JSON (no such thing on the CPU)
  SDPA        attention's rows try every backend as on CUDA: math runs on
              the CPU, and flash where this PyTorch has its CPU kernel
              (2.2 on); efficient and cudnn are skipped rows saying why
  layernorm   bf16 eager: mean and rstd rounded to bf16 first, as PyTorch's
              CPU forward saves them (its CPU kernel refuses float ones)
Each timed record's note ends with the threads, the clock and the flush.
perf/torch_cpu_rows.sh runs all six operations both sides at GPT-2 124M's CPU
benchmark shapes.

usage: python3 perf/torch_baseline.py [matmul_backward] [--B 8 --T 1024 --C 768 --OC 3072]
           [--precision fp32|tf32|bf16|bf16-fp32grad|all (comma lists too)]
           [--gelu] [--overwrite-dinp] [--compile | --compile-modes LIST]
           [--repeat 100] [--warmup 10] [--runs 1] [--json PATH]
           [--device cuda|cpu] [--threads N] [--llc-flush]   (each operation)
       python3 perf/torch_baseline.py layernorm_backward [--B 8 --T 1024 --C 768]
           [--precision fp32|bf16|bf16-fp32grad|all] [--overwrite-dinp]
           [--no-compile | --compile-modes LIST] [--repeat 100] [--warmup 10] [--runs 1] [--json PATH]
       python3 perf/torch_baseline.py gelu_backward [--B 8 --T 1024 --C 3072]
           [--precision fp32|bf16|all] [--overwrite-dinp] [--no-compile | --compile-modes LIST]
       python3 perf/torch_baseline.py attention_backward [--B 8 --T 1024 --C 768 --NH 12]
           [--precision fp32|bf16|all] [--no-compile | --compile-modes LIST]
           [--repeat 100] [--warmup 10] [--runs 1] [--json PATH]
       python3 perf/torch_baseline.py classifier_backward [--B 8 --T 1024 --V 50257 --Vp 50304]
       python3 perf/torch_baseline.py classifier_forward [--B 8 --T 1024 --V 50257 --Vp 50304]
           [--precision fp32|bf16|all] [--no-compile | --compile-modes LIST]
           [--repeat 100] [--warmup 10] [--runs 1] [--json PATH]
Arguments of llmk-perf's it does not share are ignored, so that one argument
list serves both (scripts/gpu-run.sh); --threads, llmk-perf's too, is used
by --device cpu only. Without a CUDA GPU in the CUDA mode (or without
PyTorch) it says so and exits with 0.
"""
import argparse
import json
import os
import sys
import warnings

from torch_peers import (adamw, attention, attention_forward, classifier, classifier_forward, encoder, encoder_forward, gelu, layernorm,
                         layernorm_forward, matmul, matmul_forward, residual_forward,
                         squared_norm)
from torch_peers.common import (COMPILE_MODE_SUFFIX, CPU_NO_KERNELS, compile_impl, cpu_model,
                                cpu_parallel_backend, default_threads, last_level_cache_bytes,
                                uses_cudagraphs)

OPS = {"matmul_backward": matmul, "layernorm_backward": layernorm,
       "attention_backward": attention, "classifier_backward": classifier,
       "classifier_forward": classifier_forward,
       "gelu_backward": gelu, "encoder_backward": encoder, "gelu_forward": gelu,
       "layernorm_forward": layernorm_forward, "matmul_forward": matmul_forward,
       "encoder_forward": encoder_forward, "residual_forward": residual_forward,
       "adamw": adamw, "squared_norm": squared_norm, "attention_forward": attention_forward}


def parse_args(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    # The operation may be named as llmk-perf's subcommand is, anywhere in the list.
    named, rest = [], []
    for i, a in enumerate(argv):
        if a in OPS and (i == 0 or argv[i - 1] != "--op"):
            named.append(a)
        else:
            rest.append(a)
    argv = rest
    # allow_abbrev=False: an llmk-perf option is never taken for a prefix of one of these.
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    ap.add_argument("--op", choices=list(OPS), default=None,
                    help="the operation (default matmul_backward); its name alone works too")
    ap.add_argument("--B", type=int, default=8)
    ap.add_argument("--T", type=int, default=1024)
    ap.add_argument("--C", type=int, default=768)
    ap.add_argument("--OC", type=int, default=3072, help="matmul_backward, matmul_forward only")
    ap.add_argument("--NH", type=int, default=12, help="attention_backward, attention_forward: heads")
    ap.add_argument("--V", type=int, default=50257,
                    help="classifier_backward, classifier_forward, encoder_backward, encoder_forward: vocabulary")
    ap.add_argument("--Vp", type=int, default=50304,
                    help="classifier_backward, classifier_forward: padded vocabulary (the logits' rows)")
    ap.add_argument("--precision", default="fp32",
                    help="comma list of " + "; ".join(
                        f"{', '.join(m.PRECISIONS)} ({op})" for op, m in OPS.items()
                        if op != "gelu_forward")
                    + "; or 'all' (default fp32)")
    ap.add_argument("--gelu", action="store_true",
                    help="matmul_backward: time the backward of F.linear(F.gelu(pre, "
                    "approximate='tanh'), W, b); matmul_forward: gelu after the linear layer")
    ap.add_argument("--no-bias", action="store_true", help="matmul_forward: no bias")
    ap.add_argument("--N", type=int, default=124475904,
                    help="adamw, squared_norm: parameters (values)")
    ap.add_argument("--master", action="store_true",
                    help="adamw only: llmk's run has master weights (the records say so)")
    ap.add_argument("--overwrite-dinp", action="store_true",
                    help="dinp written, not added to (matmul_backward: the activation's .grad is "
                    "None before each call)")
    ap.add_argument("--accumulate-out", action="store_true",
                    help="gelu_forward, layernorm_forward, matmul_forward, encoder_forward, "
                    "residual_forward, squared_norm, attention_forward: out += (default =)")
    ap.add_argument("--compile", action="store_true",
                    help="matmul_backward: add the torch.compile rows (modes "
                    + ", ".join(matmul.COMPILE_MODES) + ")")
    ap.add_argument("--compile-modes",
                    help="comma list of torch.compile modes to give rows (--device cpu: "
                    "'default' where the CUDA mode has compile rows; no CUDA graphs) (" +
                    ", ".join(COMPILE_MODE_SUFFIX) + "), or 'none'; default: layernorm_backward "
                    + ",".join(layernorm.COMPILE_MODES) + "; attention_backward "
                    + ",".join(attention.COMPILE_MODES) + "; matmul_backward none (--compile: "
                    + ",".join(matmul.COMPILE_MODES) + ")")
    ap.add_argument("--no-compile", action="store_true", help="no torch.compile rows")
    ap.add_argument("--repeat", type=int, default=100, help="timed calls per timing run")
    ap.add_argument("--warmup", type=int, default=10, help="untimed calls before each timing run")
    ap.add_argument("--runs", type=int, default=1,
                    help="timing runs per row, one after the other (their spread in the JSON)")
    ap.add_argument("--json", help="write the records here")
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                    help="time PyTorch on the GPU (default) or on the CPU (for llmk-perf "
                    "--backend openmp)")
    ap.add_argument("--threads", type=int, default=None,
                    help="--device cpu: torch.set_num_threads (default OMP_NUM_THREADS, else "
                    "every CPU this process may use); ignored on cuda")
    ap.add_argument("--llc-flush", action="store_true",
                    help="--device cpu: write a buffer of twice the last-level cache before each "
                    "timed call (default: no flush, as llmk-perf on a host)")
    args, _ = ap.parse_known_args(argv)  # llmk-perf arguments it does not share are ignored
    ops = set(named + ([args.op] if args.op else []))
    if len(ops) > 1:
        ap.error("more than one operation named: " + ", ".join(sorted(ops)))
    args.op = args.op or (named[0] if named else "matmul_backward")
    module = OPS[args.op]
    known = module.PRECISIONS
    names = known if args.precision == "all" else args.precision.split(",")
    for name in names:
        if name not in known:
            ap.error(f"--precision: '{name}' is not one of {', '.join(known)}, all ({args.op})")
    args.precisions = [p for p in known if p in names]
    for name in ("B", "T", "C", "OC", "NH", "V", "Vp", "N", "repeat", "runs"):
        if getattr(args, name) < 1:
            ap.error(f"--{name}: at least 1 (got {getattr(args, name)})")
    if args.threads is not None and args.threads < 1:
        ap.error(f"--threads: at least 1 (got {args.threads})")
    if args.warmup < 0:
        ap.error(f"--warmup: at least 0 (got {args.warmup})")
    if args.op in ("classifier_backward", "classifier_forward") and args.V > args.Vp:
        ap.error(f"--V {args.V} exceeds --Vp {args.Vp}")
    if args.op in ("attention_backward", "attention_forward") and args.C % args.NH != 0:
        ap.error(f"--C {args.C} is not a multiple of --NH {args.NH}")
    explicit = False
    if args.no_compile or args.compile_modes == "none":
        args.compile_modes = []
    elif args.compile_modes:
        explicit = True
        args.compile_modes = args.compile_modes.split(",")
        for mode in args.compile_modes:
            if mode not in COMPILE_MODE_SUFFIX:
                ap.error(f"--compile-modes: '{mode}' is not one of {', '.join(COMPILE_MODE_SUFFIX)}")
    elif args.op == "matmul_backward":
        args.compile_modes = list(matmul.COMPILE_MODES) if args.compile else []
    else:
        args.compile_modes = list(module.COMPILE_MODES)
    # The CPU's modes: "default" where the CUDA mode has compile rows (its
    # other defaults are CUDA graphs' or GPU autotuning's); those asked for,
    # less the CUDA graphs' (a CUDA feature), each dropped with the reason.
    args.dropped_modes = []
    if args.device == "cpu":
        if not explicit:
            args.compile_modes = ["default"] if args.compile_modes else []
        for mode in args.compile_modes:
            if uses_cudagraphs(mode):
                args.dropped_modes.append(
                    (mode, "CUDA graphs are CUDA only: no such row with --device cpu"))
        args.compile_modes = [m for m in args.compile_modes if not uses_cudagraphs(m)]
    return args


def finish(args, machine, records):
    """Writes --json; the exit status: 1 when a row is over its tolerance."""
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine, "records": records}, f, indent=2)
    failed = [f"{r['impl']} ({r['precision']})" for r in records if r.get("valid") is False]
    if failed:
        print("torch_baseline.py: rows over their tolerance: " + ", ".join(failed), file=sys.stderr)
    return 1 if failed else 0


# Why --device cpu has no tf32 row.
NO_TF32 = ("--device cpu: no TF32 on the CPU (torch.backends.cuda.matmul.allow_tf32 is cuBLAS's "
           "setting; PyTorch's CPU float32 products stay float32)")


def run_cpu(torch, args, threads):
    """--device cpu: every precision's rows on the CPU, their records as the
    CUDA mode's (backend: ATen's parallel backend), the JSON's machine the CPU's."""
    torch.set_num_threads(threads)
    dev = torch.device("cpu")
    flushed = "caches not flushed (as llmk-perf on a host)"
    flush = torch.empty(0, dtype=torch.uint8)  # zero_() of nothing: no flush
    if args.llc_flush:
        llc, where = last_level_cache_bytes()
        if llc > 0:
            flush = torch.empty(2 * llc, dtype=torch.uint8)
            flushed = (f"a {2 * llc / 2**20:.0f} MiB buffer (twice the last-level cache, {where}) "
                       f"written before each timed call")
        else:
            print(f"torch_baseline.py: --llc-flush: {where}: caches not flushed", file=sys.stderr)
    for mode, why in args.dropped_modes:
        print(f"{compile_impl(mode)} ({mode}): skipped: {why}")
    module = OPS[args.op]
    records = []
    for precision in args.precisions:
        if precision == "tf32":  # matmul_backward's only: its peer:pytorch row
            records.append(module.skipped(args, precision, "peer:pytorch", NO_TF32))
            continue
        records += module.run_precision(torch, args, precision, dev, flush)
    # The -kernels rows (each printed as skipped, with the reason) are no
    # CPU rows at all: left out of the JSON rather than shown as skipped.
    records = [r for r in records if r.get("skipped") != CPU_NO_KERNELS]
    backend = cpu_parallel_backend(torch)
    how = (f"; CPU: {threads} threads (torch.set_num_threads), the wall clock around each call, "
           f"{flushed}")
    for r in records:
        r["backend"] = backend
        if not r.get("skipped") and r.get("note"):
            r["note"] += how
    model = cpu_model()
    print(f"({model}, {threads} threads, {backend}, torch {torch.__version__}; {flushed})")
    return finish(args, {"cpu": model, "threads": threads, "torch": torch.__version__}, records)


def main(argv=None):
    args = parse_args(argv)
    threads = None
    if args.device == "cpu":
        # Before torch is imported: OpenMP runtimes read it at their start,
        # torch's and that of Inductor's compiled kernels alike.
        threads = args.threads or default_threads()
        os.environ["OMP_NUM_THREADS"] = str(threads)
    try:
        import torch
    except ImportError:
        print("torch_baseline.py: PyTorch is not installed: nothing to time", file=sys.stderr)
        return 0
    if args.device == "cpu":
        return run_cpu(torch, args, threads)
    if not torch.cuda.is_available():
        print("torch_baseline.py: no CUDA GPU (torch.cuda.is_available() is False): "
              "nothing to time (--device cpu times PyTorch on the CPU)", file=sys.stderr)
        return 0
    # Autograd's worker thread makes the first cuBLAS call of a backward and
    # PyTorch warns that it sets the device's primary context there: harmless.
    warnings.filterwarnings("ignore", message="Attempting to run cuBLAS, but there was no current CUDA context")
    dev = torch.device("cuda")
    l2_flush = torch.empty(int(torch.cuda.get_device_properties(dev).L2_cache_size * 2),
                           dtype=torch.uint8, device=dev)
    run_precision = OPS[args.op].run_precision
    records = [r for p in args.precisions for r in run_precision(torch, args, p, dev, l2_flush)]
    print(f"({torch.cuda.get_device_name(dev)}, torch {torch.__version__})")
    return finish(args, {"gpu": torch.cuda.get_device_name(dev)}, records)


if __name__ == "__main__":
    sys.exit(main())
