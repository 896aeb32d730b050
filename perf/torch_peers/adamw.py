"""adamw's PyTorch peer (torch_baseline.py adamw): torch.optim.AdamW's step
over --N parameters in one tensor, as a user of PyTorch runs it:
peer:pytorch-fused (fused=True, one kernel), peer:pytorch-foreach
(foreach=True, PyTorch's default on a GPU) and peer:pytorch-eager (the
single-tensor loop, op by op). fp32: float32 params and grads. bf16: PyTorch
keeps the optimizer on float32 weights under bf16 autocast (its mixed
precision: no bf16 params to write back), so the rows are that step, float32
params and grads: 4 B more of grads per element read and 2 B less of bf16
params written than llmk's bf16 step with --master. The hyperparameters are
llmk's tests' (ops/adamw/reference.hpp: lr 0.05, betas 0.9 / 0.95, eps 1e-6,
weight decay 0.1, a grad scale of 0.5 applied to the grads first, untimed);
the error is the first step's against float64. Records for llmk-perf adamw
--import."""
from .common import rel_l2, skipped_record, spread_fields, spread_text, time_runs

PRECISIONS = ["fp32", "bf16"]
COMPILE_MODES = []
LR, BETAS, EPS, WD, GRAD_SCALE, T = 0.05, (0.9, 0.95), 1e-6, 0.1, 0.5, 3


def adamw_bytes(args, precision):
    """llmk-perf's bytes (ops/adamw/reference.hpp): grads read; params, m, v
    (and master) read and written."""
    e = 2 if precision == "bf16" else 4
    return args.N * (e + 2 * e + 16 + (8 if args.master else 0))


def base(args, precision):
    return {"precision": precision, "N": args.N, "master": args.master}


def reference(torch, p, g, m, v):
    """One step in float64 from the state (p, g, m, v) at step T."""
    p, g, m, v = (x.double() for x in (p, g, m, v))
    g = g * GRAD_SCALE
    m = BETAS[0] * m + (1 - BETAS[0]) * g
    v = BETAS[1] * v + (1 - BETAS[1]) * g * g
    c1, c2 = 1 - BETAS[0] ** T, 1 - BETAS[1] ** T
    return p - LR * ((m / c1) / ((v / c2).sqrt() + EPS) + WD * p)


def run_precision(torch, args, precision, dev, l2_flush):
    gen = torch.Generator(device=dev).manual_seed(0)
    uniform = lambda scale=1.0: (torch.rand(args.N, device=dev, generator=gen) * 2 - 1) * scale
    p0, g0, m0 = uniform(), uniform(GRAD_SCALE), uniform(0.1)
    v0 = uniform(0.01).abs()
    if precision == "bf16":  # bf16 values, float32 weights and gradients (autocast's)
        p0, g0 = p0.bfloat16().float(), g0.bfloat16().float()
    ref = reference(torch, p0, g0 / GRAD_SCALE, m0, v0)
    records = []
    for impl, kw in (("peer:pytorch-fused", {"fused": True}),
                     ("peer:pytorch-foreach", {"foreach": True}),
                     ("peer:pytorch-eager", {"foreach": False})):
        param = torch.nn.Parameter(p0.clone())
        param.grad = g0.clone()
        try:
            opt = torch.optim.AdamW([param], lr=LR, betas=BETAS, eps=EPS, weight_decay=WD, **kw)
            state = opt.state[param]  # the state at step T - 1, as llmk's problem's
            state["step"] = torch.tensor(float(T - 1), device=dev if "fused" in kw else "cpu")
            state["exp_avg"], state["exp_avg_sq"] = m0.clone(), v0.clone()
            opt.step()
        except (RuntimeError, ValueError) as e:
            records.append(skipped(args, precision, impl, str(e).splitlines()[0]))
            continue
        err = rel_l2(param.detach(), ref)
        runs = time_runs(torch, opt.step, l2_flush, args)
        fields = spread_fields(runs)
        med = fields["ms_median"]
        types = "float32 params and grads" + (" (bf16 autocast's weights)"
                                              if precision == "bf16" else "")
        note = (f"torch {torch.__version__}, torch.optim.AdamW({', '.join(kw)}), {types}, one "
                f"tensor of N; errors measured, not judged")
        records.append({"impl": impl, "kind": "peer", "backend": "Cuda", **base(args, precision),
                        **fields, "gflops": None,
                        "gbs": adamw_bytes(args, precision) / (med * 1e-3) / 1e9 if med > 0
                        else None,
                        "valid": None, "max_rel_err": err, "params_rel_err": err, "note": note})
        print(f"{impl} adamw N {args.N} {precision}: median {med:.4f} ms, min "
              f"{fields['ms_min']:.4f} ms{spread_text(fields)}, rel err params {err:.1e}")
    return records


def skipped(args, precision, impl, why):
    print(f"{impl} adamw {precision}: skipped: {why}")
    return skipped_record(base(args, precision), impl, why)
