"""layernorm_backward's PyTorch peer (torch_baseline.py layernorm_backward):
aten.native_layer_norm_backward and the gradients' update, eager and under
torch.compile, on llmk-perf's shapes; records for llmk-perf --import."""
from .common import (Compiled, compile_impl, compile_note, first_error_line, kernels_note,
                     mark_step_of, profiled_kernel_ms, rel_l2, skipped_record, spread_fields,
                     spread_text, synchronize, time_runs, uses_cudagraphs)

PRECISIONS = ["fp32", "bf16", "bf16-fp32grad"]
COMPILE_MODES = ["default", "reduce-overhead"]  # the rows without --compile-modes
EPS = 1e-5  # GPT-2's layer norm


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
        self.rstd = (1.0 / (var64 + EPS).sqrt()).float()
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


def ln_step(torch, C, overwrite_dinp, upcast, stats_like_input=False):
    """One call: PyTorch's layer-norm backward and the gradients' update,
    functional (new tensors out: the same bytes as llmk's in-place update).
    upcast: dout and inp to float32 first and dinp back to bf16, for a PyTorch
    whose layer-norm backward refuses bf16 inputs with float32 weights (what
    its autocast would run: layer_norm in float32). stats_like_input: mean
    and rstd rounded to the input's type first, as PyTorch's CPU forward
    saves them for bf16 inputs and weights (its backward refuses float ones)."""
    aten = torch.ops.aten

    def step(dout, x, weight, bias, mean, rstd, dinp, dweight, dbias):
        if stats_like_input:
            mean, rstd = mean.to(x.dtype), rstd.to(x.dtype)
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



def ln_base(args, precision):
    return {"precision": precision, "B": args.B, "T": args.T, "C": args.C,
            "overwrite_dinp": args.overwrite_dinp, "gbs": None}


def ln_record(torch, args, precision, impl, runs, errors, note, **extra):
    fields = spread_fields(runs)
    med = fields["ms_median"]
    nbytes = ln_bytes(args.B, args.T, args.C, precision, args.overwrite_dinp)
    record = {"impl": impl, "kind": "peer", "backend": "Cuda", **ln_base(args, precision),
              **fields, "gflops": None,
              "gbs": nbytes / (med * 1e-3) / 1e9 if med > 0 else None,
              "valid": None, "max_rel_err": max(errors.values()),
              "dinp_rel_err": errors["dinp"], "dweight_rel_err": errors["dweight"],
              "dbias_rel_err": errors["dbias"],
              "note": f"torch {torch.__version__}, {note}; errors measured, not judged"}
    record.update(extra)
    print(f"{impl} layernorm backward {args.B}x{args.T}x{args.C} {precision}: median {med:.4f} ms, "
          f"min {fields['ms_min']:.4f} ms, {record['gbs'] or 0:.1f} GB/s{spread_text(fields)}, "
          f"rel err dinp {errors['dinp']:.1e} dweight {errors['dweight']:.1e} "
          f"dbias {errors['dbias']:.1e}")
    return record


def ln_skipped(args, precision, impl, why):
    print(f"{impl} layernorm backward {precision}: skipped: {why}")
    return skipped_record(ln_base(args, precision), impl, why)


def run_precision(torch, args, precision, dev, l2_flush):
    C = args.C
    p = LnProblem(torch, args, precision, dev)
    ref = p.reference(args.overwrite_dinp)
    what = {"fp32": "float32", "bf16": "bfloat16 tensors",
            "bf16-fp32grad": "bf16 dout, inp, dinp; float32 weight, bias, dweight, dbias"}[precision]
    update = "dinp =" if args.overwrite_dinp else "dinp +="
    # The inputs as they are where PyTorch takes them, else (see ln_step)
    # bf16-fp32grad: the float32 detour; bf16: mean and rstd in bf16 (the
    # CPU's kernel takes them so). Each candidate: (upcast, stats_like_input).
    candidates = [(False, False)]
    if precision == "bf16-fp32grad":
        candidates.append((True, False))
    if precision == "bf16":
        candidates.append((False, True))
    detours = {(False, False): "",
               (True, False): "; dout and inp upcast to float32 (its kernel refuses bf16 inputs "
                              "with float32 weights)",
               (False, True): "; mean and rstd rounded to bf16 first (its kernel refuses float "
                              "ones with bf16 inputs: PyTorch's CPU forward saves them in bf16)"}
    records = []

    eager, candidate = None, None
    for candidate in candidates:
        step = ln_step(torch, C, args.overwrite_dinp, *candidate)
        try:
            outs = step(*p.args())
            synchronize(torch)
            eager = step
            break
        except Exception as e:  # e.g. RuntimeError: a dtype it does not take
            why = first_error_line(e)
    if eager is None:
        records.append(ln_skipped(args, precision, "peer:pytorch-eager", why))
    else:
        errors = ln_errors(outs, ref)
        del outs
        runs = time_runs(torch, lambda: eager(*p.args()), l2_flush, args)
        records.append(ln_record(
            torch, args, precision, "peer:pytorch-eager", runs, errors,
            f"aten.native_layer_norm_backward then the updates ({update}, dweight +=, dbias +=), "
            f"eager, {what}" + detours[candidate]))
    if not args.compile_modes:
        return records

    for mode in args.compile_modes:
        impl = compile_impl(mode)
        kernels_impl = None if uses_cudagraphs(mode) else impl + "-kernels"
        q = p.cloned() if uses_cudagraphs(mode) else p
        if uses_cudagraphs(mode) and hasattr(torch._dynamo, "mark_static_address"):
            for t in q.args():  # fixed buffers, as llmk's: no copy into the graph's inputs
                torch._dynamo.mark_static_address(t)
        before = mark_step_of(torch, mode)
        compiled = Compiled(torch, [ln_step(torch, C, args.overwrite_dinp, *c) for c in candidates],
                            mode, q.args(), before)
        if compiled.fn is None:
            records.append(ln_skipped(args, precision, impl, compiled.why))
            if kernels_impl:
                records.append(ln_skipped(args, precision, kernels_impl, compiled.why))
            continue
        errors = ln_errors(compiled.outs, ref)
        compiled.outs = None
        runs = time_runs(torch, lambda: compiled.fn(*q.args()), l2_flush, args, before)
        how = (f"torch.compile(mode=\"{mode}\") of aten.native_layer_norm_backward and the updates "
               f"({update}, dweight +=, dbias +=), {what}" + detours[candidates[compiled.index]])
        records.append(ln_record(torch, args, precision, impl, runs, errors,
                                 f"{how}; {compile_note(compiled)}", compile_s=compiled.compile_s))
        if kernels_impl:
            kernel_times, names = profiled_kernel_ms(torch, lambda: compiled.fn(*q.args()),
                                                     l2_flush, min(args.repeat, 50))
            if kernel_times is None:
                records.append(ln_skipped(args, precision, kernels_impl, names))
                continue
            records.append(ln_record(
                torch, args, precision, kernels_impl, [kernel_times], errors,
                kernels_note(impl, names), compile_s=compiled.compile_s))
    return records
