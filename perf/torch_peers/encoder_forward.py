"""encoder_forward's PyTorch peer (torch_baseline.py encoder_forward):
aten.embedding(wte, tokens) + wpe[:T] (what GPT-2's wte(idx) + wpe(pos)
runs), out = (+= with --accumulate-out), eager and under torch.compile, on
llmk-perf's shapes with the encoder backward's Zipf tokens; records for
llmk-perf encoder_forward --zipf --import."""
from .common import rel_l2, skipped_record, spread_fields, spread_text, timed_rows

PRECISIONS = ["fp32", "bf16"]
COMPILE_MODES = ["default"]


def enc_forward_bytes(args, precision):
    """llmk-perf's bytes (ops/encoder_forward/reference.hpp)."""
    e, M = (2 if precision == "bf16" else 4), args.B * args.T
    return M * (4 + args.C * e * (4 if args.accumulate_out else 3))


class EncForwardProblem:
    """Tokens drawn as llmk's "zipf" problems (P(v) ∝ 1/(v + 1)); wte, wpe
    and the initial out uniform in [-1, 1)."""

    def __init__(self, torch, args, precision, dev):
        B, T, C, V = args.B, args.T, args.C, args.V
        gen = torch.Generator(device=dev).manual_seed(0)
        t = torch.bfloat16 if precision == "bf16" else torch.float32
        u = torch.rand(B, T, device=dev, generator=gen, dtype=torch.float64)
        self.tokens = ((V + 1.0) ** u).floor().long().sub(1).clamp(0, V - 1)
        self.wte = (torch.rand(V, C, device=dev, generator=gen) * 2 - 1).to(t)
        self.wpe = (torch.rand(T, C, device=dev, generator=gen) * 2 - 1).to(t)
        self.out0 = (torch.rand(B, T, C, device=dev, generator=gen) * 2 - 1).to(t)

    def args(self):
        return self.tokens, self.wte, self.wpe, self.out0

    def cloned(self):
        other = object.__new__(EncForwardProblem)
        for k, v in vars(self).items():
            setattr(other, k, v.clone())
        return other

    def reference(self, accumulate):
        out = self.wte.double()[self.tokens] + self.wpe.double()
        return out + self.out0.double() if accumulate else out


def enc_forward_step(torch, accumulate):
    aten = torch.ops.aten

    def step(tokens, wte, wpe, out0):
        out = aten.embedding(wte, tokens) + wpe
        return (out0 + out if accumulate else out),

    return step


def base(args, precision):
    return {"precision": precision, "B": args.B, "T": args.T, "C": args.C, "V": args.V,
            "zipf_tokens": True, "accumulate_out": args.accumulate_out}


def record(torch, args, precision, impl, runs, errors, note, **extra):
    fields = spread_fields(runs)
    med = fields["ms_median"]
    r = {"impl": impl, "kind": "peer", "backend": "Cuda", **base(args, precision), **fields,
         "gflops": None,
         "gbs": enc_forward_bytes(args, precision) / (med * 1e-3) / 1e9 if med > 0 else None,
         "valid": None, "max_rel_err": errors["out"], "out_rel_err": errors["out"],
         "note": f"torch {torch.__version__}, {note}; errors measured, not judged"}
    r.update(extra)
    print(f"{impl} encoder forward {args.B}x{args.T}x{args.C} V {args.V} {precision}: median "
          f"{med:.4f} ms, min {fields['ms_min']:.4f} ms{spread_text(fields)}, rel err out "
          f"{errors['out']:.1e}")
    return r


def skipped(args, precision, impl, why):
    print(f"{impl} encoder forward {precision}: skipped: {why}")
    return skipped_record(base(args, precision), impl, why)


def run_precision(torch, args, precision, dev, l2_flush):
    p = EncForwardProblem(torch, args, precision, dev)
    ref = p.reference(args.accumulate_out)
    types = "float32" if precision == "fp32" else "bfloat16 tensors"
    what = "aten.embedding + wpe" + (", out +=" if args.accumulate_out else ", out =")
    return timed_rows(
        torch, args, p, enc_forward_step(torch, args.accumulate_out),
        lambda outs: {"out": rel_l2(outs[0], ref)},
        lambda impl, runs, errs, note, **extra: record(torch, args, precision, impl, runs, errs,
                                                       note, **extra),
        lambda impl, why: skipped(args, precision, impl, why), f"{what}, {types}", l2_flush)
