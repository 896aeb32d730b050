#!/usr/bin/env python3
"""PyTorch's backward of an llmk operation on llmk's shapes, as a peer for llmk-perf on CUDA.

Two operations (--op, or the operation's name as an argument, as llmk-perf's
subcommand; default matmul_backward):

matmul_backward: times out.backward(dout) for out = F.linear(inp, weight, bias),
in each precision llmk-perf has (--precision, as llmk-perf's):
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
Compile times are reported apart (the note, and "compile_s" in the JSON). The
bytes behind GB/s are llmk-perf's (the reference's Shape::bytes).

Like llmk-perf: warm-up, then CUDA events around each call, the L2 flushed
between repeats, the median and min reported; and each output's relative L2
error against a float64 computation from the very same inputs (reported, not
judged). Writes a JSON record per precision (and row) that llmk-perf --import
reads, so that llmk-perf's table shows PyTorch beside llmk's implementations.

usage: python3 perf/torch_baseline.py [matmul_backward] [--B 8 --T 1024 --C 768 --OC 3072]
           [--precision fp32|tf32|bf16|bf16-fp32grad|all (comma lists too)]
           [--gelu] [--overwrite-dinp] [--repeat 100] [--warmup 10] [--json PATH]
       python3 perf/torch_baseline.py layernorm_backward [--B 8 --T 1024 --C 768]
           [--precision fp32|bf16|bf16-fp32grad|all] [--overwrite-dinp] [--no-compile]
           [--repeat 100] [--warmup 10] [--json PATH]
Arguments of llmk-perf's it does not share are ignored, so that one argument
list serves both (scripts/gpu-run.sh). Without a CUDA GPU (or without
PyTorch) it says so and exits with 0.
"""
import argparse
import json
import statistics
import sys
import time
import warnings

OPS = ["matmul_backward", "layernorm_backward"]
PRECISIONS = ["fp32", "tf32", "bf16", "bf16-fp32grad"]  # llmk-perf's order (matmul_backward)
LN_PRECISIONS = ["fp32", "bf16", "bf16-fp32grad"]  # layernorm_backward's
LN_EPS = 1e-5  # GPT-2's layer norm


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
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--op", choices=OPS, default=None,
                    help="the operation (default matmul_backward); its name alone works too")
    ap.add_argument("--B", type=int, default=8)
    ap.add_argument("--T", type=int, default=1024)
    ap.add_argument("--C", type=int, default=768)
    ap.add_argument("--OC", type=int, default=3072, help="matmul_backward only")
    ap.add_argument("--precision", default="fp32",
                    help="comma list of " + ", ".join(PRECISIONS) + " (matmul_backward) or "
                    + ", ".join(LN_PRECISIONS) + " (layernorm_backward), or 'all' (default fp32)")
    ap.add_argument("--gelu", action="store_true",
                    help="matmul_backward: time the backward of F.linear(F.gelu(pre, "
                    "approximate='tanh'), W, b)")
    ap.add_argument("--overwrite-dinp", action="store_true",
                    help="dinp written, not added to (matmul_backward: the activation's .grad is "
                    "None before each call)")
    ap.add_argument("--no-compile", action="store_true",
                    help="layernorm_backward: eager only (no torch.compile rows)")
    ap.add_argument("--repeat", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--json", help="write the records here")
    args, _ = ap.parse_known_args(argv)  # llmk-perf arguments it does not share are ignored
    ops = set(named + ([args.op] if args.op else []))
    if len(ops) > 1:
        ap.error("more than one operation named: " + ", ".join(sorted(ops)))
    args.op = args.op or (named[0] if named else "matmul_backward")
    known = LN_PRECISIONS if args.op == "layernorm_backward" else PRECISIONS
    names = known if args.precision == "all" else args.precision.split(",")
    for name in names:
        if name not in known:
            ap.error(f"--precision: '{name}' is not one of {', '.join(known)}, all ({args.op})")
    args.precisions = [p for p in known if p in names]
    return args


def rel_l2(out, ref):
    """‖out − ref‖₂ / ‖ref‖₂ in float64 (absolute when ‖ref‖₂ = 0)."""
    out, ref = out.double(), ref.double()
    norm = ref.norm().item()
    diff = (out - ref).norm().item()
    return diff / norm if norm > 0 else diff


def gelu_grad64(x):
    """d/dx of GPT-2's tanh GELU, in float64."""
    import math
    s, k = math.sqrt(2.0 / math.pi), 0.044715
    t = (s * (x + k * x ** 3)).tanh()
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * s * (1 + 3 * k * x * x)


def run_precision(torch, F, args, precision, dev, l2_flush):
    B, T, C, OC = args.B, args.T, args.C, args.OC
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.backends.cudnn.allow_tf32 = precision == "tf32"
    act_dtype = torch.bfloat16 if precision.startswith("bf16") else torch.float32
    param_dtype = torch.bfloat16 if precision == "bf16" else torch.float32
    autocast = precision == "bf16-fp32grad"
    gen = torch.Generator(device=dev).manual_seed(0)

    def uniform(*shape, dtype, scale=1.0, grad=False):
        t = ((torch.rand(*shape, device=dev, generator=gen) * 2 - 1) * scale).to(dtype)
        return t.requires_grad_(grad)

    # The leaf whose gradient is "dinp": inp, or pre_gelu with --gelu.
    x = uniform(B, T, C, dtype=act_dtype, scale=3.0 if args.gelu else 1.0, grad=True)
    weight = uniform(OC, C, dtype=param_dtype, grad=True)
    bias = uniform(OC, dtype=param_dtype, grad=True)
    dout = uniform(B, T, OC, dtype=act_dtype)
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
        inp = F.gelu(x, approximate="tanh") if args.gelu else x
        out = F.linear(inp, weight, bias)
    leaves = (x, weight, bias)

    # Initial gradients: random, as llmk's; the activation's is dropped before
    # each call with --overwrite-dinp.
    initial = [torch.rand_like(p) * 2 - 1 for p in leaves]

    def reset_grads():
        for p, g in zip(leaves, initial):
            p.grad = g.clone()
        if args.overwrite_dinp:
            x.grad = None

    # One call from the initial gradients, checked against float64 products
    # of the same values (inp as the forward materialized it).
    reset_grads()
    out.backward(dout, retain_graph=True)
    torch.cuda.synchronize()
    with torch.no_grad():
        d64 = dout.double().reshape(-1, OC)
        a64 = inp.double().reshape(-1, C)
        dinp_ref = d64 @ weight.double()
        if args.gelu:
            dinp_ref = dinp_ref * gelu_grad64(x.double().reshape(-1, C))
        if not args.overwrite_dinp:
            dinp_ref = dinp_ref + initial[0].double().reshape(-1, C)
        errors = {
            "dinp": rel_l2(x.grad.reshape(-1, C), dinp_ref),
            "dweight": rel_l2(weight.grad, initial[1].double() + d64.t() @ a64),
            "dbias": rel_l2(bias.grad, initial[2].double() + d64.sum(0)),
        }
        del d64, a64, dinp_ref

    def call():
        out.backward(dout, retain_graph=True)

    for _ in range(args.warmup):
        if args.overwrite_dinp:
            x.grad = None
        call()
    times = []
    for _ in range(args.repeat):
        if args.overwrite_dinp:
            x.grad = None
        l2_flush.zero_()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))

    M = B * T
    flops = 4 * M * C * OC + M * OC
    med = statistics.median(times)
    what = {
        "fp32": "float32, TF32 off",
        "tf32": "float32, allow_tf32 = True",
        "bf16": "bfloat16 tensors",
        "bf16-fp32grad": "autocast bfloat16, float32 weight and bias",
    }[precision]
    expr = "F.linear(F.gelu(pre, approximate='tanh'), W, b)" if args.gelu else "F.linear"
    record = {
        "impl": "peer:pytorch", "kind": "peer", "backend": "Cuda", "precision": precision,
        "B": B, "T": T, "C": C, "OC": OC,
        "gelu": args.gelu, "overwrite_dinp": args.overwrite_dinp,
        "ms_median": med, "ms_min": min(times), "repeats": len(times),
        "gflops": flops / (med * 1e-3) / 1e9, "bias_gbs": None,
        "valid": None, "max_rel_err": max(errors.values()),
        "dinp_rel_err": errors["dinp"], "dweight_rel_err": errors["dweight"],
        "dbias_rel_err": errors["dbias"],
        "note": f"torch {torch.__version__}, {expr} backward, {what}"
                + (", activation .grad set to None before each call" if args.overwrite_dinp else "")
                + "; errors measured, not judged",
    }
    print(f"pytorch {expr} backward {B}x{T}x{C}->{OC} {precision}: median {med:.4f} ms, "
          f"min {min(times):.4f} ms, {record['gflops']:.1f} GFLOP/s, rel err dinp "
          f"{errors['dinp']:.1e} dweight {errors['dweight']:.1e} dbias {errors['dbias']:.1e}")
    return record


# ---- layernorm_backward ----------------------------------------------------


def ln_bytes(B, T, C, precision, overwrite_dinp):
    """The bytes llmk-perf counts for a call (the reference's Shape::bytes): dout
    and inp read, dinp written (and read unless overwritten), weight read,
    dweight and dbias read and written, mean and rstd (float) read."""
    M = B * T
    act = 2 if precision.startswith("bf16") else 4
    grad = 2 if precision == "bf16" else 4
    return M * C * act * (3 if overwrite_dinp else 4) + C * act + 4 * C * grad + 2 * M * 4


class LnProblem:
    """Inputs as llmk's problems make them (not the same values: the same
    distributions): dout and weight uniform in [-1, 1); inp offset + scale·x per
    row (offset in [-2, 2), scale in [0.5, 2), x in [-1, 1)); mean and rstd the
    forward's of the very inp values, in float64, rounded to float; random
    initial gradients (dinp's unused with --overwrite-dinp)."""

    def __init__(self, torch, args, precision, dev):
        B, T, C = args.B, args.T, args.C
        gen = torch.Generator(device=dev).manual_seed(0)

        def uniform(*shape, lo=-1.0, hi=1.0):
            return torch.rand(*shape, device=dev, generator=gen) * (hi - lo) + lo

        act = torch.bfloat16 if precision.startswith("bf16") else torch.float32
        param = torch.bfloat16 if precision == "bf16" else torch.float32
        self.x = (uniform(B, T, 1, lo=-2, hi=2) + uniform(B, T, 1, lo=0.5, hi=2) * uniform(B, T, C)).to(act)
        self.dout = uniform(B, T, C).to(act)
        self.weight = uniform(C).to(param)
        self.bias = uniform(C).to(param)  # only says that there is a bias (dbias wanted)
        x64 = self.x.double()
        mean64 = x64.mean(-1, keepdim=True)
        var64 = ((x64 - mean64) ** 2).mean(-1, keepdim=True)
        self.mean = mean64.float()  # B×T×1, as native_layer_norm returns them
        self.rstd = (1.0 / (var64 + LN_EPS).sqrt()).float()
        self.dinp0 = uniform(B, T, C).to(act)
        self.dweight0 = uniform(C).to(param)
        self.dbias0 = uniform(C).to(param)

    def args(self):
        return (self.dout, self.x, self.weight, self.bias, self.mean, self.rstd,
                self.dinp0, self.dweight0, self.dbias0)

    def cloned(self):
        """The same values in new tensors (CUDA graphs' static inputs)."""
        other = object.__new__(LnProblem)
        for k, v in vars(self).items():
            setattr(other, k, v.clone())
        return other

    def reference(self, overwrite_dinp):
        """dinp, dweight, dbias in float64 from the very inputs (llmk's formula)."""
        x, d, w = self.x.double(), self.dout.double(), self.weight.double()
        norm = (x - self.mean.double()) * self.rstd.double()
        dnorm = d * w
        dinp = self.rstd.double() * (dnorm - dnorm.mean(-1, keepdim=True)
                                     - norm * (dnorm * norm).mean(-1, keepdim=True))
        if not overwrite_dinp:
            dinp = dinp + self.dinp0.double()
        dweight = self.dweight0.double() + (d * norm).sum((0, 1))
        dbias = self.dbias0.double() + d.sum((0, 1))
        return dinp, dweight, dbias


def ln_step(torch, C, overwrite_dinp, upcast):
    """One call: PyTorch's layer-norm backward and the gradients' update,
    functional (new tensors out: the same bytes as llmk's in-place update).
    upcast: dout and inp to float32 first and dinp back to bf16, for a PyTorch
    whose layer-norm backward refuses bf16 inputs with float32 weights (what
    its autocast would run: layer_norm in float32)."""
    aten = torch.ops.aten

    def step(dout, x, weight, bias, mean, rstd, dinp, dweight, dbias):
        if upcast:
            gx, gw, gb = aten.native_layer_norm_backward(dout.float(), x.float(), [C], mean, rstd,
                                                         weight, bias, [True, True, True])
            gx = gx.to(dout.dtype)
        else:
            gx, gw, gb = aten.native_layer_norm_backward(dout, x, [C], mean, rstd, weight, bias,
                                                         [True, True, True])
            gx = gx.to(dout.dtype)  # dinp's type, whatever the kernel returned
        return (gx if overwrite_dinp else dinp + gx), dweight + gw, dbias + gb

    return step


def ln_errors(outs, ref):
    return {name: rel_l2(o, r) for name, o, r in zip(("dinp", "dweight", "dbias"), outs, ref)}


def time_calls(torch, call, l2_flush, warmup, repeat, before=None):
    """CUDA events around each call, the L2 flushed before each (untimed)."""
    for _ in range(warmup):
        if before:
            before()
        call()
    times = []
    for _ in range(repeat):
        if before:
            before()
        l2_flush.zero_()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return times


def profiled_kernel_ms(torch, call, l2_flush, calls):
    """Per call, the sum of the CUDA kernels' (and memsets', memcopies') device
    times, from torch.profiler; each call after an L2 flush whose own kernels
    are recognized by name and left out. Returns (per-call ms, kernel names),
    or (None, why) when the profiler saw no kernels to go by."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    def device_events(prof):
        return sorted((e for e in prof.events() if e.device_type == DeviceType.CUDA),
                      key=lambda e: e.time_range.start)

    warnings.filterwarnings("ignore", module="torch.profiler")
    warnings.filterwarnings("ignore", module="torch.autograd.profiler")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        l2_flush.zero_()
        torch.cuda.synchronize()
    flush_names = {e.name for e in device_events(prof)}
    if not flush_names:
        return None, "torch.profiler reported no CUDA kernel for the L2 flush"
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            l2_flush.zero_()
            call()
        torch.cuda.synchronize()
    per_call, names = [], []
    for e in device_events(prof):
        if e.name in flush_names:
            per_call.append(0.0)  # a flush starts the next call
            continue
        if per_call:
            per_call[-1] += e.time_range.elapsed_us() * 1e-3
        if e.name not in names:
            names.append(e.name)
    per_call = [t for t in per_call if t > 0]
    if not per_call:
        return None, "torch.profiler reported no CUDA kernel for the calls"
    return per_call, names


def cudagraph_skips(torch):
    """How often Inductor has decided against CUDA graphs so far (None: this
    PyTorch does not count it)."""
    try:
        from torch._dynamo.utils import counters
        return counters["inductor"]["cudagraph_skips"]
    except Exception:
        return None


def ln_record(torch, args, precision, impl, times, errors, note, **extra):
    med = statistics.median(times)
    nbytes = ln_bytes(args.B, args.T, args.C, precision, args.overwrite_dinp)
    record = {
        "impl": impl, "kind": "peer", "backend": "Cuda", "precision": precision,
        "B": args.B, "T": args.T, "C": args.C, "overwrite_dinp": args.overwrite_dinp,
        "ms_median": med, "ms_min": min(times), "repeats": len(times), "gflops": None,
        "gbs": nbytes / (med * 1e-3) / 1e9 if med > 0 else None,
        "valid": None, "max_rel_err": max(errors.values()),
        "dinp_rel_err": errors["dinp"], "dweight_rel_err": errors["dweight"],
        "dbias_rel_err": errors["dbias"],
        "note": f"torch {torch.__version__}, {note}; errors measured, not judged",
    }
    record.update(extra)
    print(f"{impl} layernorm backward {args.B}x{args.T}x{args.C} {precision}: median {med:.4f} ms, "
          f"min {min(times):.4f} ms, {record['gbs'] or 0:.1f} GB/s, rel err dinp "
          f"{errors['dinp']:.1e} dweight {errors['dweight']:.1e} dbias {errors['dbias']:.1e}")
    return record


def ln_skipped(args, precision, impl, why):
    print(f"{impl} layernorm backward {precision}: skipped: {why}")
    return {"impl": impl, "kind": "peer", "backend": "Cuda", "precision": precision,
            "B": args.B, "T": args.T, "C": args.C, "overwrite_dinp": args.overwrite_dinp,
            "ms_median": None, "ms_min": None, "repeats": 0, "gflops": None, "gbs": None,
            "valid": None, "max_rel_err": None, "skipped": why}


def first_error_line(e):
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:200]


def ln_run_precision(torch, args, precision, dev, l2_flush):
    C = args.C
    p = LnProblem(torch, args, precision, dev)
    ref = p.reference(args.overwrite_dinp)
    what = {"fp32": "float32", "bf16": "bfloat16 tensors",
            "bf16-fp32grad": "bf16 dout, inp, dinp; float32 weight, bias, dweight, dbias"}[precision]
    update = "dinp =" if args.overwrite_dinp else "dinp +="
    records = []

    # Eager: the bf16-fp32grad inputs as they are where PyTorch takes them,
    # else the float32 detour (see ln_step).
    eager, upcast = None, False
    for upcast in (False, True) if precision == "bf16-fp32grad" else (False,):
        step = ln_step(torch, C, args.overwrite_dinp, upcast)
        try:
            outs = step(*p.args())
            torch.cuda.synchronize()
            eager = step
            break
        except Exception as e:  # e.g. RuntimeError: a dtype it does not take
            why = first_error_line(e)
    detour = "; dout and inp upcast to float32 (its kernel refuses bf16 inputs with float32 weights)"
    if eager is None:
        records.append(ln_skipped(args, precision, "peer:pytorch-eager", why))
    else:
        errors = ln_errors(outs, ref)
        del outs
        times = time_calls(torch, lambda: eager(*p.args()), l2_flush, args.warmup, args.repeat)
        records.append(ln_record(
            torch, args, precision, "peer:pytorch-eager", times, errors,
            f"aten.native_layer_norm_backward then the updates ({update}, dweight +=, dbias +=), "
            f"eager, {what}" + (detour if upcast else "")))
    if args.no_compile:
        return records

    modes = [("default", "peer:pytorch-compile"),
             ("reduce-overhead", "peer:pytorch-compile-cudagraphs")]
    for mode, impl in modes:
        q = p if mode == "default" else p.cloned()
        if mode == "reduce-overhead" and hasattr(torch._dynamo, "mark_static_address"):
            for t in q.args():  # fixed buffers, as llmk's: no copy into the graph's inputs
                torch._dynamo.mark_static_address(t)
        mark_step = getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None)
        before = mark_step if mode == "reduce-overhead" and mark_step else None
        compiled, compile_s, why = None, None, None
        skips = cudagraph_skips(torch)
        caught = warnings.catch_warnings(record=True)
        seen = caught.__enter__()
        warnings.simplefilter("always")
        for up in (False, True) if precision == "bf16-fp32grad" else (False,):
            torch._dynamo.reset()
            fn = torch.compile(ln_step(torch, C, args.overwrite_dinp, up), mode=mode, dynamic=False)
            try:
                if before:
                    before()
                t0 = time.perf_counter()
                outs = fn(*q.args())
                torch.cuda.synchronize()
                compile_s = time.perf_counter() - t0
                compiled, upcast_c = fn, up
                break
            except Exception as e:  # Inductor and Dynamo raise many kinds
                why = first_error_line(e)
        if compiled is None:
            caught.__exit__(None, None, None)
            records.append(ln_skipped(args, precision, impl, why))
            if mode == "default":
                records.append(ln_skipped(args, precision, "peer:pytorch-compile-kernels", why))
            continue
        # Warm calls (CUDA graphs: recorded here), then one to check.
        for _ in range(3):
            if before:
                before()
            compiled(*q.args())
        if before:
            before()
        outs = [o.clone() for o in compiled(*q.args())]
        torch.cuda.synchronize()
        caught.__exit__(None, None, None)
        graphs = ""
        if mode == "reduce-overhead":
            skipped = cudagraph_skips(torch) - skips if skips is not None else None
            said = "; ".join(dict.fromkeys(str(w.message).splitlines()[0][:160] for w in seen
                                           if "cudagraph" in str(w.message).lower()))
            if skipped or said:
                graphs = "; Inductor skipped CUDA graphs" + (": " + said if said else "")
            elif skipped == 0:
                graphs = "; CUDA graphs (Inductor counted no skip)"
        errors = ln_errors(outs, ref)
        del outs
        times = time_calls(torch, lambda: compiled(*q.args()), l2_flush, args.warmup, args.repeat,
                           before)
        how = (f"torch.compile(mode=\"{mode}\") of aten.native_layer_norm_backward and the updates "
               f"({update}, dweight +=, dbias +=), {what}" + (detour if upcast_c else ""))
        records.append(ln_record(torch, args, precision, impl, times, errors,
                                 f"{how}; compiled in {compile_s:.1f} s (first call){graphs}",
                                 compile_s=compile_s))
        if mode == "default":
            kernel_times, names = profiled_kernel_ms(torch, lambda: compiled(*q.args()), l2_flush,
                                                     min(args.repeat, 50))
            if kernel_times is None:
                records.append(ln_skipped(args, precision, "peer:pytorch-compile-kernels", names))
                continue
            records.append(ln_record(
                torch, args, precision, "peer:pytorch-compile-kernels", kernel_times, errors,
                f"the CUDA kernel time of peer:pytorch-compile's calls, summed per call "
                f"(torch.profiler; launches and gaps excluded): {len(names)} kernels "
                f"({', '.join(n[:60] for n in names)})", compile_s=compile_s))
    return records


def main():
    args = parse_args()
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print("torch_baseline.py: PyTorch is not installed: nothing to time", file=sys.stderr)
        return 0
    if not torch.cuda.is_available():
        print("torch_baseline.py: no CUDA GPU (torch.cuda.is_available() is False): "
              "nothing to time", file=sys.stderr)
        return 0
    # Autograd's worker thread makes the first cuBLAS call of a backward and
    # PyTorch warns that it sets the device's primary context there: harmless.
    warnings.filterwarnings("ignore", message="Attempting to run cuBLAS, but there was no current CUDA context")
    dev = torch.device("cuda")
    l2_flush = torch.empty(int(torch.cuda.get_device_properties(dev).L2_cache_size * 2),
                           dtype=torch.uint8, device=dev)
    if args.op == "layernorm_backward":
        records = [r for p in args.precisions
                   for r in ln_run_precision(torch, args, p, dev, l2_flush)]
    else:
        records = [run_precision(torch, F, args, p, dev, l2_flush) for p in args.precisions]
    print(f"({torch.cuda.get_device_name(dev)}, torch {torch.__version__})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": {"gpu": torch.cuda.get_device_name(dev)}, "records": records},
                      f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
