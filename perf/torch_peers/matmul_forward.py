"""matmul_forward's PyTorch peer (torch_baseline.py matmul_forward):
aten.addmm(bias, inp, weightᵀ) (what F.linear runs), with --gelu then
aten.gelu(pre, approximate='tanh') (pre_gelu and out, what autograd saves),
out = (+= with --accumulate-out), eager and under torch.compile, on
llmk-perf's shapes; records for llmk-perf --import."""
from .common import rel_l2, skipped_record, spread_fields, spread_text, timed_rows

PRECISIONS = ["fp32", "bf16"]
COMPILE_MODES = ["default"]  # the rows without --compile-modes


def mm_forward_bytes(args, precision):
    """llmk-perf's bytes (ops/matmul_forward/reference.hpp)."""
    e, M = (2 if precision == "bf16" else 4), args.B * args.T
    outs = (2 if args.accumulate_out else 1) + (1 if args.gelu else 0)
    return e * (M * args.C + args.OC * args.C + (0 if args.no_bias else args.OC) + outs * M * args.OC)


class MmForwardProblem:
    """Inputs as llmk's problems make them: inp, bias and the initial out
    uniform in [-1, 1), weight uniform in ±4/√C."""

    def __init__(self, torch, args, precision, dev):
        B, T, C, OC = args.B, args.T, args.C, args.OC
        gen = torch.Generator(device=dev).manual_seed(0)

        def uniform(*shape, scale=1.0):
            return (torch.rand(*shape, device=dev, generator=gen) * 2 - 1) * scale

        t = torch.bfloat16 if precision == "bf16" else torch.float32
        self.x = uniform(B * T, C).to(t)
        self.weight = uniform(OC, C, scale=4.0 / C ** 0.5).to(t)
        self.bias = None if args.no_bias else uniform(OC).to(t)
        self.out0 = uniform(B * T, OC).to(t)

    def args(self):
        return self.x, self.weight, self.bias, self.out0

    def cloned(self):
        other = object.__new__(MmForwardProblem)
        for k, v in vars(self).items():
            setattr(other, k, None if v is None else v.clone())
        return other

    def reference(self, torch, gelu, accumulate):
        """out (and pre_gelu) in float64 from the very inputs."""
        pre = self.x.double() @ self.weight.double().t()
        if self.bias is not None:
            pre = pre + self.bias.double()
        out = torch.nn.functional.gelu(pre, approximate="tanh") if gelu else pre
        return (out + self.out0.double() if accumulate else out), pre


def mm_forward_step(torch, gelu, accumulate):
    aten = torch.ops.aten

    def step(x, weight, bias, out0):
        pre = aten.addmm(bias, x, weight.t()) if bias is not None else aten.mm(x, weight.t())
        out = aten.gelu(pre, approximate="tanh") if gelu else pre
        return (out0 + out if accumulate else out), pre

    return step


def base(args, precision):
    return {"precision": precision, "B": args.B, "T": args.T, "C": args.C, "OC": args.OC,
            "gelu": args.gelu, "no_bias": args.no_bias, "accumulate_out": args.accumulate_out}


def record(torch, args, precision, impl, runs, errors, note, **extra):
    fields = spread_fields(runs)
    med = fields["ms_median"]
    flops = 2.0 * args.B * args.T * args.C * args.OC
    r = {"impl": impl, "kind": "peer", "backend": "Cuda", **base(args, precision), **fields,
         "gflops": flops / (med * 1e-3) / 1e9 if med > 0 else None,
         "gbs": mm_forward_bytes(args, precision) / (med * 1e-3) / 1e9 if med > 0 else None,
         "valid": None, "max_rel_err": max(errors.values()),
         **{f"{k}_rel_err": v for k, v in errors.items()},
         "note": f"torch {torch.__version__}, {note}; errors measured, not judged"}
    r.update(extra)
    print(f"{impl} matmul forward {args.B}x{args.T}x{args.C}x{args.OC} {precision}: median "
          f"{med:.4f} ms, min {fields['ms_min']:.4f} ms, {r['gflops'] or 0:.0f} GFLOP/s"
          f"{spread_text(fields)}, " + ", ".join(f"rel err {k} {v:.1e}" for k, v in errors.items()))
    return r


def skipped(args, precision, impl, why):
    print(f"{impl} matmul forward {precision}: skipped: {why}")
    return skipped_record(base(args, precision), impl, why)


def run_precision(torch, args, precision, dev, l2_flush):
    p = MmForwardProblem(torch, args, precision, dev)
    out_ref, pre_ref = p.reference(torch, args.gelu, args.accumulate_out)
    types = "float32" if precision == "fp32" else "bfloat16 tensors"
    what = "aten.addmm" + (" then aten.gelu(tanh)" if args.gelu else "")
    what += ", out +=" if args.accumulate_out else ", out ="

    def errors(outs):
        e = {"out": rel_l2(outs[0], out_ref)}
        if args.gelu:
            e["pre_gelu"] = rel_l2(outs[1], pre_ref)
        return e

    return timed_rows(
        torch, args, p, mm_forward_step(torch, args.gelu, args.accumulate_out), errors,
        lambda impl, runs, errs, note, **extra: record(torch, args, precision, impl, runs, errs,
                                                       note, **extra),
        lambda impl, why: skipped(args, precision, impl, why), f"{what}, {types}", l2_flush)
