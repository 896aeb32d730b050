"""residual_forward's PyTorch peer (torch_baseline.py residual_forward):
inp1 + inp2 (what GPT-2's x = x + block(x) runs), out = (+= with
--accumulate-out), eager and under torch.compile, on llmk-perf's shapes
(B×T×C, default C 768); records for llmk-perf residual_forward --import."""
from .common import rel_l2, skipped_record, spread_fields, spread_text, timed_rows

PRECISIONS = ["fp32", "bf16"]
COMPILE_MODES = ["default"]


def residual_bytes(args, precision):
    """llmk-perf's bytes (ops/residual_forward/reference.hpp)."""
    e = 2 if precision == "bf16" else 4
    return args.B * args.T * args.C * e * (4 if args.accumulate_out else 3)


class ResidualProblem:
    """inp1, inp2 and the initial out uniform in [-1, 1)."""

    def __init__(self, torch, args, precision, dev):
        gen = torch.Generator(device=dev).manual_seed(0)
        t = torch.bfloat16 if precision == "bf16" else torch.float32
        shape = (args.B, args.T, args.C)
        self.inp1, self.inp2, self.out0 = (
            (torch.rand(*shape, device=dev, generator=gen) * 2 - 1).to(t) for _ in range(3))

    def args(self):
        return self.inp1, self.inp2, self.out0

    def cloned(self):
        other = object.__new__(ResidualProblem)
        for k, v in vars(self).items():
            setattr(other, k, v.clone())
        return other

    def reference(self, accumulate):
        out = self.inp1.double() + self.inp2.double()
        return out + self.out0.double() if accumulate else out


def residual_step(accumulate):
    def step(inp1, inp2, out0):
        out = inp1 + inp2
        return (out0 + out if accumulate else out),

    return step


def base(args, precision):
    return {"precision": precision, "B": args.B, "T": args.T, "C": args.C,
            "accumulate_out": args.accumulate_out}


def record(torch, args, precision, impl, runs, errors, note, **extra):
    fields = spread_fields(runs)
    med = fields["ms_median"]
    r = {"impl": impl, "kind": "peer", "backend": "Cuda", **base(args, precision), **fields,
         "gflops": None,
         "gbs": residual_bytes(args, precision) / (med * 1e-3) / 1e9 if med > 0 else None,
         "valid": None, "max_rel_err": errors["out"], "out_rel_err": errors["out"],
         "note": f"torch {torch.__version__}, {note}; errors measured, not judged"}
    r.update(extra)
    print(f"{impl} residual forward {args.B}x{args.T}x{args.C} {precision}: median "
          f"{med:.4f} ms, min {fields['ms_min']:.4f} ms{spread_text(fields)}, rel err out "
          f"{errors['out']:.1e}")
    return r


def skipped(args, precision, impl, why):
    print(f"{impl} residual forward {precision}: skipped: {why}")
    return skipped_record(base(args, precision), impl, why)


def run_precision(torch, args, precision, dev, l2_flush):
    p = ResidualProblem(torch, args, precision, dev)
    ref = p.reference(args.accumulate_out)
    types = "float32" if precision == "fp32" else "bfloat16 tensors"
    what = "inp1 + inp2" + (", out +=" if args.accumulate_out else ", out =")
    return timed_rows(
        torch, args, p, residual_step(args.accumulate_out),
        lambda outs: {"out": rel_l2(outs[0], ref)},
        lambda impl, runs, errs, note, **extra: record(torch, args, precision, impl, runs, errs,
                                                       note, **extra),
        lambda impl, why: skipped(args, precision, impl, why), f"{what}, {types}", l2_flush)
