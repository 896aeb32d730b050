"""encoder_backward's PyTorch peer (torch_baseline.py encoder_backward): the
backward of wte[tokens] + wpe[:T] as autograd runs it,
aten.embedding_dense_backward for dwte and a sum over the batch for dwpe,
then the gradients' update (dwte +=, dwpe +=): eager, eager under
torch.use_deterministic_algorithms(True), and torch.compile; records for
llmk-perf encoder_backward --zipf --import (pass --C 768 --V 50257)."""
from .common import (Compiled, compile_impl, compile_note, rel_l2, skipped_record, spread_fields,
                     spread_text, time_runs, uses_cudagraphs, mark_step_of)

PRECISIONS = ["fp32", "bf16", "bf16-fp32grad"]
COMPILE_MODES = ["default"]


def enc_bytes(B, T, C, V, precision, distinct):
    """llmk's Shape::bytes (accumulated): dout and tokens read, the distinct
    tokens' rows of dwte and dwpe's T rows read and written."""
    act = 2 if precision.startswith("bf16") else 4
    grad = 2 if precision == "bf16" else 4
    return B * T * C * act + B * T * 4 + (distinct + T) * C * grad * 2


class EncProblem:
    """Tokens drawn as llmk's "zipf" problems (P(v) ∝ 1/(v + 1)), dout and the
    initial gradients uniform in [-1, 1)."""

    def __init__(self, torch, args, precision, dev):
        gen = torch.Generator(device=dev).manual_seed(0)
        act = torch.bfloat16 if precision.startswith("bf16") else torch.float32
        grad = torch.bfloat16 if precision == "bf16" else torch.float32
        B, T, C, V = args.B, args.T, args.C, args.V
        u = torch.rand(B, T, device=dev, generator=gen, dtype=torch.float64)
        self.tokens = ((V + 1.0) ** u).floor().long().sub(1).clamp(0, V - 1)
        self.dout = (torch.rand(B, T, C, device=dev, generator=gen) * 2 - 1).to(act)
        self.dwte0 = (torch.rand(V, C, device=dev, generator=gen) * 2 - 1).to(grad)
        self.dwpe0 = (torch.rand(T, C, device=dev, generator=gen) * 2 - 1).to(grad)
        self.V = V
        self.distinct = int(self.tokens.unique().numel())

    def args(self):
        return self.dout, self.tokens, self.dwte0, self.dwpe0

    def reference(self):
        d = self.dout.double()
        dwte = self.dwte0.double().index_add(0, self.tokens.flatten(), d.flatten(0, 1))
        return dwte, self.dwpe0.double() + d.sum(0)


def enc_step(torch, V):
    aten = torch.ops.aten

    def step(dout, tokens, dwte, dwpe):
        g = aten.embedding_dense_backward(dout, tokens, V, -1, False)
        return dwte + g.to(dwte.dtype), dwpe + dout.sum(0).to(dwpe.dtype)

    return step


def base(args, precision):
    # zipf_tokens: llmk-perf encoder_backward's flag (--zipf) for these tokens;
    # its records of uniform tokens leave these out of an --import.
    return {"precision": precision, "B": args.B, "T": args.T, "C": args.C, "V": args.V,
            "zipf_tokens": True, "gbs": None}


def record(torch, args, p, precision, impl, runs, errors, note, **extra):
    fields = spread_fields(runs)
    med = fields["ms_median"]
    nbytes = enc_bytes(args.B, args.T, args.C, args.V, precision, p.distinct)
    r = {"impl": impl, "kind": "peer", "backend": "Cuda", **base(args, precision), **fields,
         "gflops": None, "gbs": nbytes / (med * 1e-3) / 1e9 if med > 0 else None, "valid": None,
         "max_rel_err": max(errors), "dwte_rel_err": errors[0], "dwpe_rel_err": errors[1],
         "note": f"torch {torch.__version__}, {note}; errors measured, not judged"}
    r.update(extra)
    print(f"{impl} encoder backward {args.B}x{args.T}x{args.C} V {args.V} {precision}: median "
          f"{med:.4f} ms, min {fields['ms_min']:.4f} ms{spread_text(fields)}, rel err dwte "
          f"{errors[0]:.1e} dwpe {errors[1]:.1e}")
    return r


def run_precision(torch, args, precision, dev, l2_flush):
    p = EncProblem(torch, args, precision, dev)
    ref = p.reference()
    step = enc_step(torch, p.V)
    records = []
    for deterministic in (False, True):
        impl = "peer:pytorch-eager" + ("-deterministic" if deterministic else "")
        before = torch.are_deterministic_algorithms_enabled()
        torch.use_deterministic_algorithms(deterministic)
        try:
            outs = step(*p.args())
            errors = [rel_l2(o, r) for o, r in zip(outs, ref)]
            runs = time_runs(torch, lambda: step(*p.args()), l2_flush, args)
        finally:
            torch.use_deterministic_algorithms(before)
        how = ("torch.use_deterministic_algorithms(True), " if deterministic else "") + \
            "aten.embedding_dense_backward + dout.sum(0), then dwte +=, dwpe +="
        records.append(record(torch, args, p, precision, impl, runs, errors, how))
    for mode in args.compile_modes:
        impl = compile_impl(mode)
        q = p
        before = mark_step_of(torch, mode)
        compiled = Compiled(torch, [step], mode, q.args(), before)
        if compiled.fn is None:
            print(f"{impl} encoder backward {precision}: skipped: {compiled.why}")
            records.append(skipped_record(base(args, precision), impl, compiled.why))
            continue
        errors = [rel_l2(o, r) for o, r in zip(compiled.outs, ref)]
        compiled.outs = None
        runs = time_runs(torch, lambda: compiled.fn(*q.args()), l2_flush, args, before)
        records.append(record(torch, args, p, precision, impl, runs, errors,
                              f"torch.compile(mode=\"{mode}\") of the same; {compile_note(compiled)}",
                              compile_s=compiled.compile_s))
    return records
