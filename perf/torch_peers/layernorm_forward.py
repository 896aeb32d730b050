"""layernorm_forward's PyTorch peer (torch_baseline.py layernorm_forward):
aten.native_layer_norm (what F.layer_norm runs: out, and the mean and rstd
autograd saves) and out's update (= by default, --accumulate-out: +=), eager
and under torch.compile, on llmk-perf's shapes; records for llmk-perf --import."""
from .common import rel_l2, skipped_record, spread_fields, spread_text, timed_rows
from .layernorm import EPS

PRECISIONS = ["fp32", "bf16"]
COMPILE_MODES = ["default"]  # the rows without --compile-modes


def ln_forward_bytes(args, precision):
    """llmk-perf's bytes (ops/layernorm_forward/reference.hpp): inp read, out
    written (and read when accumulated), weight and bias read, mean and rstd
    (float) written."""
    e, M, C = (2 if precision == "bf16" else 4), args.B * args.T, args.C
    return e * (M * C * (3 if args.accumulate_out else 2) + 2 * C) + 8 * M


class LnForwardProblem:
    """Inputs as llmk's problems make them (the same distributions): inp
    offset + scale·x per row (offset in [-2, 2), scale in [0.5, 2), x in
    [-1, 1)), weight, bias and the initial out uniform in [-1, 1)."""

    def __init__(self, torch, args, precision, dev):
        B, T, C = args.B, args.T, args.C
        gen = torch.Generator(device=dev).manual_seed(0)

        def uniform(*shape, lo=-1.0, hi=1.0):
            return torch.rand(*shape, device=dev, generator=gen) * (hi - lo) + lo

        t = torch.bfloat16 if precision == "bf16" else torch.float32
        self.x = (uniform(B, T, 1, lo=-2, hi=2) + uniform(B, T, 1, lo=0.5, hi=2) *
                  uniform(B, T, C)).to(t)
        self.weight, self.bias, self.out0 = uniform(C).to(t), uniform(C).to(t), uniform(B, T, C).to(t)

    def args(self):
        return self.x, self.weight, self.bias, self.out0

    def cloned(self):
        other = object.__new__(LnForwardProblem)
        for k, v in vars(self).items():
            setattr(other, k, v.clone())
        return other

    def reference(self, accumulate):
        """out, mean, rstd in float64 from the very inputs (llmk's formula)."""
        x = self.x.double()
        mean = x.mean(-1, keepdim=True)
        rstd = 1.0 / (((x - mean) ** 2).mean(-1, keepdim=True) + EPS).sqrt()
        out = (x - mean) * rstd * self.weight.double() + self.bias.double()
        return (out + self.out0.double() if accumulate else out), mean, rstd


def ln_forward_step(torch, C, accumulate):
    aten = torch.ops.aten

    def step(x, weight, bias, out0):
        out, mean, rstd = aten.native_layer_norm(x, [C], weight, bias, EPS)
        return (out0 + out if accumulate else out), mean, rstd

    return step


def base(args, precision):
    return {"precision": precision, "B": args.B, "T": args.T, "C": args.C,
            "accumulate_out": args.accumulate_out, "gbs": None}


def record(torch, args, precision, impl, runs, errors, note, **extra):
    fields = spread_fields(runs)
    med = fields["ms_median"]
    nbytes = ln_forward_bytes(args, precision)
    r = {"impl": impl, "kind": "peer", "backend": "Cuda", **base(args, precision), **fields,
         "gflops": None, "gbs": nbytes / (med * 1e-3) / 1e9 if med > 0 else None,
         "valid": None, "max_rel_err": max(errors.values()),
         **{f"{k}_rel_err": v for k, v in errors.items()},
         "note": f"torch {torch.__version__}, {note}; errors measured, not judged"}
    r.update(extra)
    print(f"{impl} layernorm forward {args.B}x{args.T}x{args.C} {precision}: median {med:.4f} ms, "
          f"min {fields['ms_min']:.4f} ms, {r['gbs'] or 0:.1f} GB/s{spread_text(fields)}, "
          + ", ".join(f"rel err {k} {v:.1e}" for k, v in errors.items()))
    return r


def skipped(args, precision, impl, why):
    print(f"{impl} layernorm forward {precision}: skipped: {why}")
    return skipped_record(base(args, precision), impl, why)


def run_precision(torch, args, precision, dev, l2_flush):
    p = LnForwardProblem(torch, args, precision, dev)
    ref = p.reference(args.accumulate_out)
    types = "float32" if precision == "fp32" else "bfloat16 tensors"
    update = "out +=" if args.accumulate_out else "out ="
    return timed_rows(
        torch, args, p, ln_forward_step(torch, args.C, args.accumulate_out),
        lambda outs: {k: rel_l2(o.reshape(r.shape), r)
                      for k, o, r in zip(("out", "mean", "rstd"), outs, ref)},
        lambda impl, runs, errors, note, **extra: record(torch, args, precision, impl, runs,
                                                         errors, note, **extra),
        lambda impl, why: skipped(args, precision, impl, why),
        f"aten.native_layer_norm then {update}, {types}", l2_flush)
