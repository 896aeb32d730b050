"""gelu_backward's and gelu_forward's PyTorch peer (torch_baseline.py
gelu_backward | gelu_forward): aten.gelu_backward(approximate='tanh') and
dinp's update, or aten.gelu(approximate='tanh') and out's (= by default,
--accumulate-out: +=), eager and under torch.compile, on llmk-perf's shapes
(N = B·T·C; pass --C 3072 for GPT-2 124M's MLP, llmk-perf's default);
records for llmk-perf --import."""
from .common import rel_l2, skipped_record, spread_fields, spread_text, timed_rows

PRECISIONS = ["fp32", "bf16"]
COMPILE_MODES = ["default"]  # the rows without --compile-modes


def forward(args):
    return args.op == "gelu_forward"


def overwrites(args):
    """Whether the output (dinp, or the forward's out) is written, not added to."""
    return not args.accumulate_out if forward(args) else args.overwrite_dinp


def gelu_bytes(args, precision):
    """llmk-perf's bytes: backward dout and inp read, dinp written (and read
    unless overwritten); forward inp read, out written (and read when accumulated)."""
    arrays = (2 if forward(args) else 3) + (0 if overwrites(args) else 1)
    return args.B * args.T * args.C * (2 if precision == "bf16" else 4) * arrays


class GeluProblem:
    """Inputs as llmk's problems make them (the same distributions): dout and
    the initial dinp uniform in [-1, 1), inp uniform in [-4, 4)."""

    def __init__(self, torch, args, precision, dev):
        gen = torch.Generator(device=dev).manual_seed(0)
        t = torch.bfloat16 if precision == "bf16" else torch.float32
        shape = (args.B, args.T, args.C)

        def uniform(scale=1.0):
            return ((torch.rand(*shape, device=dev, generator=gen) * 2 - 1) * scale).to(t)

        self.dout, self.inp, self.dinp0 = uniform(), uniform(4.0), uniform()
        self.forward = forward(args)  # dinp0: the forward's initial out

    def args(self):
        return (self.inp, self.dinp0) if self.forward else (self.dout, self.inp, self.dinp0)

    def cloned(self):
        other = object.__new__(GeluProblem)
        for k, v in vars(self).items():
            setattr(other, k, v.clone())
        return other

    def reference(self, overwrite):
        """dinp (the forward: out) in float64 from the very inputs (the formula, written out)."""
        x, d = self.inp.double(), self.dout.double()
        s, a = (2.0 / 3.141592653589793) ** 0.5, 0.044715
        t = (s * (x + a * x ** 3)).tanh()
        if self.forward:
            g = 0.5 * x * (1 + t)
        else:
            g = (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * s * (1 + 3 * a * x * x)) * d
        return g if overwrite else self.dinp0.double() + g


def gelu_step(torch, args):
    aten, overwrite = torch.ops.aten, overwrites(args)

    def backward(dout, inp, dinp):
        g = aten.gelu_backward(dout, inp, approximate="tanh")
        return (g if overwrite else dinp + g),  # a tuple, as Compiled takes outputs

    def forward_step(inp, out):
        g = aten.gelu(inp, approximate="tanh")
        return (g if overwrite else out + g),

    return forward_step if forward(args) else backward


def base(args, precision):
    flag = ({"accumulate_out": args.accumulate_out} if forward(args)
            else {"overwrite_dinp": args.overwrite_dinp})
    return {"precision": precision, "B": args.B, "T": args.T, "C": args.C, **flag, "gbs": None}


def what(args):
    return "gelu forward" if forward(args) else "gelu backward"


def record(torch, args, precision, impl, runs, error, note, **extra):
    fields = spread_fields(runs)
    med = fields["ms_median"]
    nbytes = gelu_bytes(args, precision)
    out = "out" if forward(args) else "dinp"
    r = {"impl": impl, "kind": "peer", "backend": "Cuda", **base(args, precision), **fields,
         "gflops": None, "gbs": nbytes / (med * 1e-3) / 1e9 if med > 0 else None,
         "valid": None, "max_rel_err": error, f"{out}_rel_err": error,
         "note": f"torch {torch.__version__}, {note}; errors measured, not judged"}
    r.update(extra)
    print(f"{impl} {what(args)} {args.B}x{args.T}x{args.C} {precision}: median {med:.4f} ms, "
          f"min {fields['ms_min']:.4f} ms, {r['gbs'] or 0:.1f} GB/s{spread_text(fields)}, "
          f"rel err {out} {error:.1e}")
    return r


def skipped(args, precision, impl, why):
    print(f"{impl} {what(args)} {precision}: skipped: {why}")
    return skipped_record(base(args, precision), impl, why)


def run_precision(torch, args, precision, dev, l2_flush):
    p = GeluProblem(torch, args, precision, dev)
    ref = p.reference(overwrites(args))
    update = ("out" if forward(args) else "dinp") + (" =" if overwrites(args) else " +=")
    op = "aten.gelu" if forward(args) else "aten.gelu_backward"
    types = "float32" if precision == "fp32" else "bfloat16 tensors"
    return timed_rows(
        torch, args, p, gelu_step(torch, args), lambda outs: rel_l2(outs[0], ref),
        lambda impl, runs, error, note, **extra: record(torch, args, precision, impl, runs, error,
                                                        note, **extra),
        lambda impl, why: skipped(args, precision, impl, why),
        f"{op}(approximate='tanh') then {update}, {types}", l2_flush)
