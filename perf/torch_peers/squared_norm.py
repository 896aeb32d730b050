"""squared_norm's PyTorch peer (torch_baseline.py squared_norm): the squared
norm of --N values in one tensor, torch.linalg.vector_norm(g) ** 2 (what
torch.nn.utils.clip_grad_norm_ computes per tensor), out = (+= with
--accumulate-out), eager and under torch.compile; records for llmk-perf
squared_norm --import."""
from .common import rel_l2, skipped_record, spread_fields, spread_text, timed_rows

PRECISIONS = ["fp32", "bf16"]
COMPILE_MODES = ["default"]


def norm_bytes(args, precision):
    """llmk-perf's bytes (ops/squared_norm/reference.hpp): inp read."""
    return args.N * (2 if precision == "bf16" else 4)


class NormProblem:
    """inp uniform in [-1, 1), out's initial value too (a float)."""

    def __init__(self, torch, args, precision, dev):
        gen = torch.Generator(device=dev).manual_seed(0)
        t = torch.bfloat16 if precision == "bf16" else torch.float32
        self.inp = (torch.rand(args.N, device=dev, generator=gen) * 2 - 1).to(t)
        self.out0 = torch.rand(1, device=dev, generator=gen) * 2 - 1

    def args(self):
        return self.inp, self.out0

    def cloned(self):
        other = object.__new__(NormProblem)
        for k, v in vars(self).items():
            setattr(other, k, v.clone())
        return other

    def reference(self, accumulate):
        out = self.inp.double().square().sum().reshape(1)
        return out + self.out0.double() if accumulate else out


def norm_step(torch, accumulate):
    def step(inp, out0):
        out = torch.linalg.vector_norm(inp, dtype=torch.float32).square().reshape(1)
        return (out0 + out if accumulate else out),

    return step


def base(args, precision):
    return {"precision": precision, "N": args.N, "accumulate_out": args.accumulate_out}


def record(torch, args, precision, impl, runs, errors, note, **extra):
    fields = spread_fields(runs)
    med = fields["ms_median"]
    r = {"impl": impl, "kind": "peer", "backend": "Cuda", **base(args, precision), **fields,
         "gflops": None,
         "gbs": norm_bytes(args, precision) / (med * 1e-3) / 1e9 if med > 0 else None,
         "valid": None, "max_rel_err": errors["out"], "out_rel_err": errors["out"],
         "note": f"torch {torch.__version__}, {note}; errors measured, not judged"}
    r.update(extra)
    print(f"{impl} squared norm N {args.N} {precision}: median {med:.4f} ms, min "
          f"{fields['ms_min']:.4f} ms{spread_text(fields)}, rel err out {errors['out']:.1e}")
    return r


def skipped(args, precision, impl, why):
    print(f"{impl} squared norm {precision}: skipped: {why}")
    return skipped_record(base(args, precision), impl, why)


def run_precision(torch, args, precision, dev, l2_flush):
    p = NormProblem(torch, args, precision, dev)
    ref = p.reference(args.accumulate_out)
    types = "float32" if precision == "fp32" else "bfloat16 values, a float32 norm"
    what = "vector_norm(g) ** 2" + (", out +=" if args.accumulate_out else ", out =")
    return timed_rows(
        torch, args, p, norm_step(torch, args.accumulate_out),
        lambda outs: {"out": rel_l2(outs[0], ref)},
        lambda impl, runs, errs, note, **extra: record(torch, args, precision, impl, runs, errs,
                                                       note, **extra),
        lambda impl, why: skipped(args, precision, impl, why), f"{what}, {types}", l2_flush)
