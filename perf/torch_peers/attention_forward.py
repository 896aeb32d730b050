"""attention_forward's PyTorch peer (torch_baseline.py attention_forward):
causal self-attention's forward on llmk's layout, as nanoGPT writes it: q, k,
v split from qkv (B, T, 3C) and viewed as (B, NH, T, HS) heads,
F.scaled_dot_product_attention(is_causal=True), the heads merged back to
(B, T, C) (a contiguous copy), out = (+= with --accumulate-out); eager (the
backend PyTorch picks: flash-attention on a GPU in bf16) and under
torch.compile; records for llmk-perf attention_forward --import. out is
compared with float64 (lse is not PyTorch's output here: its error column is
empty)."""
from .attention import Layout
from .common import rel_l2, skipped_record, spread_fields, spread_text, timed_rows

PRECISIONS = ["fp32", "bf16"]
COMPILE_MODES = ["default"]


def flops(B, T, C):
    """llmk-perf's: q·kᵀ and P·v on the causal half, 2·B·C·T·(T+1)."""
    return 2.0 * B * C * T * (T + 1)


def bytes_moved(args, precision):
    """llmk-perf's (perf/attention_forward/benchmark.cpp): qkv read, out
    written (and read when accumulated), lse written (float)."""
    e = 2.0 if precision == "bf16" else 4.0
    M = args.B * args.T
    return e * (3 * M * args.C + (2 if args.accumulate_out else 1) * M * args.C) + \
        4.0 * args.B * args.NH * args.T


class ForwardProblem:
    """qkv uniform in [-1, 1) with q times 4 (llmk's problems': peaked rows),
    out's initial values uniform in [-1, 1)."""

    def __init__(self, torch, args, precision, dev):
        gen = torch.Generator(device=dev).manual_seed(0)
        t = torch.bfloat16 if precision == "bf16" else torch.float32
        B, T, C = args.B, args.T, args.C
        qkv = torch.rand(B, T, 3 * C, device=dev, generator=gen) * 2 - 1
        qkv[:, :, :C] *= 4
        self.qkv = qkv.to(t)
        self.out0 = (torch.rand(B, T, C, device=dev, generator=gen) * 2 - 1).to(t)

    def args(self):
        return self.qkv, self.out0

    def cloned(self):
        other = object.__new__(ForwardProblem)
        for k, v in vars(self).items():
            setattr(other, k, v.clone())
        return other

    def reference(self, torch, L, accumulate):
        q, k, v = L.split(self.qkv.double())
        mask = torch.ones(L.T, L.T, dtype=torch.bool, device=q.device).tril()
        att = ((q @ k.transpose(-2, -1)) * L.scale).masked_fill(~mask, float("-inf")).softmax(-1)
        out = L.merge(att @ v)
        return out + self.out0.double() if accumulate else out


def forward_step(torch, L, accumulate):
    import torch.nn.functional as F

    def step(qkv, out0):
        q, k, v = L.split(qkv)
        out = L.merge(F.scaled_dot_product_attention(q, k, v, is_causal=True))
        return (out0 + out if accumulate else out),

    return step


def base(args, precision):
    return {"precision": precision, "B": args.B, "T": args.T, "C": args.C, "NH": args.NH,
            "accumulate_out": args.accumulate_out}


def record(torch, args, precision, impl, runs, errors, note, **extra):
    fields = spread_fields(runs)
    med = fields["ms_median"]
    r = {"impl": impl, "kind": "peer", "backend": "Cuda", **base(args, precision), **fields,
         "gflops": flops(args.B, args.T, args.C) / (med * 1e-3) / 1e9 if med > 0 else None,
         "gbs": bytes_moved(args, precision) / (med * 1e-3) / 1e9 if med > 0 else None,
         "valid": None, "max_rel_err": errors["out"], "out_rel_err": errors["out"],
         "note": f"torch {torch.__version__}, {note}; errors measured, not judged"}
    r.update(extra)
    print(f"{impl} attention forward B {args.B} T {args.T} C {args.C} NH {args.NH} {precision}: "
          f"median {med:.4f} ms, min {fields['ms_min']:.4f} ms{spread_text(fields)}, "
          f"rel err out {errors['out']:.1e}")
    return r


def skipped(args, precision, impl, why):
    print(f"{impl} attention forward {precision}: skipped: {why}")
    return skipped_record(base(args, precision), impl, why)


def run_precision(torch, args, precision, dev, l2_flush):
    L = Layout(args.B, args.T, args.C, args.NH)
    p = ForwardProblem(torch, args, precision, dev)
    ref = p.reference(torch, L, args.accumulate_out)
    types = "float32" if precision == "fp32" else "bfloat16"
    what = ("split, scaled_dot_product_attention(is_causal=True), heads merged" +
            (", out +=" if args.accumulate_out else ", out =") + f", {types}")
    return timed_rows(
        torch, args, p, forward_step(torch, L, args.accumulate_out),
        lambda outs: {"out": rel_l2(outs[0], ref)},
        lambda impl, runs, errs, note, **extra: record(torch, args, precision, impl, runs, errs,
                                                       note, **extra),
        lambda impl, why: skipped(args, precision, impl, why), what, l2_flush)
