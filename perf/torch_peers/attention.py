"""attention_backward's PyTorch peers (torch_baseline.py attention_backward):
the backward of causal self-attention on llmk's layout, timed alone (the
forward outside the timed region), validated against float64, as records for
llmk-perf attention_backward --import.

llmk's layout: qkv (B, T, 3C) holds q, k and v side by side, each of NH heads
of HS = C / NH channels; dout (B, T, C) is the gradient of the heads' outputs
put back side by side (what the output projection reads); dqkv (B, T, 3C) is
written, not added to (llmk-perf's --overwrite-dqkv). Rows, per precision
(fp32: TF32 off; bf16: bfloat16 tensors):
  peer:pytorch-sdpa-<backend>  F.scaled_dot_product_attention(is_causal=True)
      on q, k, v split from qkv and viewed as (B, NH, T, HS), as nanoGPT does,
      its backend forced with torch.nn.attention.sdpa_kernel (math, flash,
      efficient, cudnn; one that cannot run a precision is a skipped row that
      says why); the timed call is autograd.grad(out, qkv, dout) through the
      retained graph: the backend's backward kernels, the views' and the
      split's backward (one concatenation into dqkv)
  peer:pytorch-compile[...]  the explicit attention (q·kᵀ/√HS, causal mask,
      softmax, ·v) compiled by torch.compile (--compile-modes, default
      "default"): the backward Inductor generates, timed as above; its
      compile time apart; and -kernels, the CUDA kernel time of those calls
  peer:pytorch-llmc-style  llm.c's attention_backward in PyTorch ops, given
      the forward's att as llmk is: q, k, v permuted to (B·NH, T, HS), four
      torch.bmm (cuBLAS, or the CPU's BLAS; dense, both halves of the T × T products) around the
      softmax backward written out (in float), dq, dk, dv permuted back
FLOPs are llmk-perf's: the four products on the causal half, 4·B·C·T·(T+1).
GB/s only for the llm.c-style row (llmk-perf's bytes: dout, qkv, att's causal
half read, dqkv written); the others do not read att, they recompute it."""
import math
import warnings

import time

from .common import (compile_impl, first_error_line, kernels_note, mark_step_of,
                     profiled_kernel_ms, rel_l2, skipped_record, spread_fields, spread_text,
                     synchronize, time_runs, uses_cudagraphs)

PRECISIONS = ["fp32", "bf16"]
COMPILE_MODES = ["default"]  # the rows without --compile-modes
SDPA_BACKENDS = ["MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION"]
SDPA_NAMES = {"MATH": "math", "FLASH_ATTENTION": "flash", "EFFICIENT_ATTENTION": "efficient",
              "CUDNN_ATTENTION": "cudnn"}
# Relative L2 of dqkv against float64 that a row must meet to be valid.
# fp32: twice llmk's fp32 tolerance (5e-5): these recompute the softmax in
# float, whose rounding adds to the products'. bf16: four times llmk's bf16
# tolerance (4e-3, one rounding of each input and output plus float sums):
# the fused kernels round P and dS to bf16 before their products, each such
# rounding ≈ 1.7e-3 of relative error. A wrong formula, layout or mask is
# off by far more (order 1).
TOLERANCE = {"fp32": 1e-4, "bf16": 1.6e-2}


def flops(B, T, C):
    return 4.0 * B * C * T * (T + 1)


def bytes_moved(B, T, C, NH, precision):
    """llmk-perf's bytes of a call (perf/attention_backward/benchmark.cpp's
    bytes_of, dqkv overwritten): dout, qkv and att's causal half read, dqkv
    written."""
    e = 2.0 if precision == "bf16" else 4.0
    M = B * T
    return e * (M * C + M * 3 * C + B * NH * T * (T + 1) / 2 + M * 3 * C)


class Layout:
    """The shapes of a problem and the views between llmk's layout and
    PyTorch's (B, NH, T, HS) heads."""

    def __init__(self, B, T, C, NH):
        if NH < 1 or C % NH != 0:
            raise ValueError(f"--C {C} is not a multiple of --NH {NH} (at least 1)")
        self.B, self.T, self.C, self.NH, self.HS = B, T, C, NH, C // NH
        self.scale = 1.0 / math.sqrt(self.HS)

    def heads(self, x):
        """(B, T, C) -> (B, NH, T, HS), a view."""
        return x.view(self.B, self.T, self.NH, self.HS).transpose(1, 2)

    def split(self, qkv):
        """q, k, v as (B, NH, T, HS) views of qkv (nanoGPT's split and view)."""
        return [self.heads(t) for t in qkv.split(self.C, dim=2)]

    def merge(self, y):
        """(B, NH, T, HS) -> (B, T, C), contiguous (nanoGPT's)."""
        return y.transpose(1, 2).contiguous().view(self.B, self.T, self.C)

    def pack(self, dq, dk, dv):
        """dq, dk, dv (B, NH, T, HS) -> dqkv (B, T, 3C), q, k, v side by side."""
        import torch
        return torch.cat([self.merge(p) for p in (dq, dk, dv)], dim=2)


def explicit_forward(torch, L):
    """Causal self-attention written out (nanoGPT's slow path): qkv (B, T,
    3C), mask (T, T) bool, lower triangle true -> y (B, T, C)."""
    import torch.nn.functional as F

    def forward(qkv, mask):
        q, k, v = L.split(qkv)
        att = (q @ k.transpose(-2, -1)) * L.scale
        att = att.masked_fill(~mask, float("-inf"))
        att = F.softmax(att, dim=-1)
        return L.merge(att @ v)

    return forward


def reference(torch, L, qkv, dout, mask):
    """dqkv in float64 from the very inputs: att the causal softmax of
    q·kᵀ/√HS, then dv = attᵀ·g, datt = g·vᵀ, dpre = att ⊙ (datt − Σ att ⊙ datt)/√HS
    (row sums), dq = dpre·k, dk = dpreᵀ·q."""
    q, k, v = L.split(qkv.double())
    g = L.heads(dout.double())
    att = ((q @ k.transpose(-2, -1)) * L.scale).masked_fill(~mask, float("-inf")).softmax(-1)
    dv = att.transpose(-2, -1) @ g
    datt = g @ v.transpose(-2, -1)
    del g
    dpre = att * (datt - (att * datt).sum(-1, keepdim=True)) * L.scale
    del att, datt
    return L.pack(dpre @ k, dpre.transpose(-2, -1) @ q, dv)


def check_reference(torch, L, qkv, dout, mask):
    """The float64 formulas against float64 autograd of the explicit forward
    on the first sequence: the reference is itself checked (raises when they
    disagree beyond float64 rounding)."""
    one = Layout(1, L.T, L.C, L.NH)
    # The heads as llmk lays them out: q[h, t, d] = qkv[t, h·HS + d], k at
    # C + h·HS + d, v at 2C + h·HS + d.
    parts = one.split(qkv[:1])
    for i in range(3):
        for h, t, d in ((0, 0, 0), (L.NH - 1, L.T - 1, L.HS - 1), (L.NH // 2, L.T // 2, L.HS // 3)):
            if parts[i][0, h, t, d] != qkv[0, t, i * L.C + h * L.HS + d]:
                raise RuntimeError(f"attention: head view {'qkv'[i]}[{h}, {t}, {d}] is not "
                                   f"qkv[0, {t}, {i * L.C + h * L.HS + d}]")
    x = qkv[:1].double().requires_grad_()
    y = explicit_forward(torch, one)(x, mask)
    (auto,) = torch.autograd.grad(y, x, dout[:1].double())
    err = rel_l2(reference(torch, one, qkv[:1], dout[:1], mask), auto)
    if not err < 1e-10:
        raise RuntimeError(f"attention reference: its formulas and float64 autograd differ by "
                           f"{err:.1e} (relative L2) on the first sequence")
    return err


def llmc_style(torch, L):
    """llm.c's attention_backward in PyTorch ops: (qkv, att, dout) -> dqkv."""
    B, T, C, NH, HS = L.B, L.T, L.C, L.NH, L.HS

    def backward(qkv, att, dout):
        # llm.c's permute: q, k, v as (B·NH, T, HS), contiguous (a copy).
        q, k, v = (qkv.view(B, T, 3, NH, HS).permute(2, 0, 3, 1, 4)
                   .reshape(3, B * NH, T, HS).unbind(0))
        g = dout.view(B, T, NH, HS).transpose(1, 2).reshape(B * NH, T, HS)
        a = att.view(B * NH, T, T)
        d = qkv.new_empty(3, B * NH, T, HS)  # dq, dk, dv
        torch.bmm(a.transpose(1, 2), g, out=d[2])  # dv = attᵀ·dout
        datt = torch.bmm(g, v.transpose(1, 2))  # datt = dout·vᵀ
        # The softmax backward in float (llm.c's kernel computes in float).
        af, df = a.float(), datt.float()
        dpre = (af * (df - (af * df).sum(-1, keepdim=True)) * L.scale).to(qkv.dtype)
        del af, df, datt
        torch.bmm(dpre, k, out=d[0])  # dq = dpre·k
        torch.bmm(dpre.transpose(1, 2), q, out=d[1])  # dk = dpreᵀ·q
        # llm.c's unpermute: (3, B, NH, T, HS) -> (B, T, 3, NH, HS).
        return d.view(3, B, NH, T, HS).permute(1, 3, 0, 2, 4).reshape(B, T, 3 * C)

    return backward


class Backward:
    """The backward of forward(qkv) alone: forward() once, untimed; each
    call is autograd.grad(out, qkv, dout) through the retained graph. Where a
    second backward through it fails (compiled graphs of some PyTorch
    versions), the forward runs again before each call instead (untimed:
    before())."""

    def __init__(self, torch, forward, qkv, dout):
        self.torch, self.forward, self.dout = torch, forward, dout
        self.leaf = qkv.detach().requires_grad_()
        self.out = forward(self.leaf)
        self.again, self.note = False, ""

    def __call__(self):
        (g,) = self.torch.autograd.grad(self.out, self.leaf, self.dout, retain_graph=not self.again)
        return g

    def before(self):
        if self.again:
            self.out = self.forward(self.leaf)

    def settle(self):
        """Two calls; switches to a forward per call if the second fails."""
        self()
        try:
            self()
        except RuntimeError as e:
            self.again = True
            self.note = ("; the forward re-run (untimed) before each call: a second backward "
                         "through the retained graph failed (" + first_error_line(e) + ")")
            self.before()
        synchronize(self.torch)


def chain(*steps):
    steps = [s for s in steps if s]
    if not steps:
        return None

    def run():
        for s in steps:
            s()

    return run


class Rows:
    """The records of one precision, and their printing."""

    def __init__(self, torch, args, L, precision, ref, l2_flush):
        self.torch, self.args, self.L, self.precision = torch, args, L, precision
        self.ref, self.l2_flush, self.records = ref, l2_flush, []
        self.base = {"precision": precision, "B": L.B, "T": L.T, "C": L.C, "NH": L.NH,
                     "overwrite_dqkv": True, "gbs": None}

    def skip(self, impl, why):
        print(f"{impl} attention backward {self.precision}: skipped: {why}")
        self.records.append(skipped_record(self.base, impl, why))

    def error(self, dqkv):
        return rel_l2(dqkv, self.ref)

    def add(self, impl, runs, err, note, reads_att=False, **extra):
        L, tol = self.L, TOLERANCE[self.precision]
        fields = spread_fields(runs)
        med = fields["ms_median"]
        r = {"impl": impl, "kind": "peer", "backend": "Cuda", **self.base, **fields,
             "gflops": flops(L.B, L.T, L.C) / (med * 1e-3) / 1e9 if med > 0 else None,
             "valid": err <= tol, "max_rel_err": err, "dqkv_rel_err": err, "tolerance": tol,
             "note": f"torch {self.torch.__version__}, {note}"}
        if reads_att and med > 0:
            r["gbs"] = bytes_moved(L.B, L.T, L.C, L.NH, self.precision) / (med * 1e-3) / 1e9
        r.update(extra)
        print(f"{impl} attention backward {L.B}x{L.T}x{L.C} NH={L.NH} {self.precision}: median "
              f"{med:.4f} ms, min {fields['ms_min']:.4f} ms, {(r['gflops'] or 0) * 1e-3:.1f} "
              f"TFLOP/s{spread_text(fields)}, rel err dqkv {err:.1e} "
              f"({'ok' if r['valid'] else 'FAILED'}: tolerance {tol:.0e})")
        self.records.append(r)

    def time(self, call, before=None):
        return time_runs(self.torch, call, self.l2_flush, self.args, before)


def sdpa_rows(rows, qkv, dout):
    torch, L = rows.torch, rows.L
    import torch.nn.functional as F
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as e:
        for name in SDPA_BACKENDS:
            rows.skip("peer:pytorch-sdpa-" + SDPA_NAMES[name], "torch.nn.attention: " + str(e))
        return

    def forward(x):
        q, k, v = L.split(x)
        return L.merge(F.scaled_dot_product_attention(q, k, v, is_causal=True))

    for name in SDPA_BACKENDS:
        impl = "peer:pytorch-sdpa-" + SDPA_NAMES[name]
        backend = getattr(SDPBackend, name, None)
        if backend is None:
            rows.skip(impl, f"this PyTorch has no SDPBackend.{name}")
            continue
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:
                with sdpa_kernel(backend):
                    bwd = Backward(torch, forward, qkv, dout)
                    bwd.settle()
                    err = rows.error(bwd())
                    runs = rows.time(bwd, bwd.before if bwd.again else None)
                    note = bwd.note
            except RuntimeError as e:  # "No available kernel", or its backward refused
                said = "; ".join(dict.fromkeys(str(w.message).strip().splitlines()[0][:140]
                                               for w in seen if str(w.message).strip()))
                cuda_only = "" if qkv.is_cuda or name in ("MATH", "FLASH_ATTENTION") else \
                    "a CUDA backend, none on the CPU: "
                rows.skip(impl, (cuda_only + first_error_line(e) + ("; " + said if said else ""))[:400])
                continue
            finally:
                bwd = None  # its graph's memory, before the next backend's
        rows.add(impl, runs, err,
                 f"F.scaled_dot_product_attention(is_causal=True) under sdpa_kernel(SDPBackend."
                 f"{name}), its backward through autograd.grad (the split's and views' backward "
                 f"included){note}")


def compile_rows(rows, qkv, dout, mask):
    torch, L, args = rows.torch, rows.L, rows.args
    for mode in args.compile_modes:
        impl = compile_impl(mode)
        kernels_impl = None if uses_cudagraphs(mode) else impl + "-kernels"
        mark = mark_step_of(torch, mode)
        torch._dynamo.reset()
        fn = torch.compile(explicit_forward(torch, L), mode=mode, dynamic=False)
        try:
            t0 = time.perf_counter()
            if mark:
                mark()
            bwd = Backward(torch, lambda x: fn(x, mask), qkv, dout)
            bwd()  # the backward is compiled at its first call
            synchronize(torch)
            compile_s = time.perf_counter() - t0
            bwd.settle()
            before = chain(mark, bwd.before if bwd.again else None)
            for _ in range(3):
                if before:
                    before()
                bwd()
            if before:
                before()
            err = rows.error(bwd())
            runs = rows.time(bwd, before)
        except Exception as e:  # Inductor and Dynamo raise many kinds
            rows.skip(impl, first_error_line(e))
            if kernels_impl:
                rows.skip(kernels_impl, first_error_line(e))
            continue
        how = (f"torch.compile(mode=\"{mode}\") of the explicit attention (q·kᵀ/√HS, causal "
               f"mask, softmax, ·v), the backward Inductor generated, through autograd.grad; "
               f"compiled in {compile_s:.1f} s (forward and backward, their first calls, "
               f"Inductor's caches as found){bwd.note}")
        rows.add(impl, runs, err, how, compile_s=compile_s)
        if kernels_impl:
            kernel_times, names = profiled_kernel_ms(
                torch, lambda: (before() if before else None, bwd()), rows.l2_flush,
                min(args.repeat, 50))
            if kernel_times is None:
                rows.skip(kernels_impl, names)
            else:
                rows.add(kernels_impl, [kernel_times], err, kernels_note(impl, names),
                         compile_s=compile_s)
        bwd = None


def llmc_row(rows, qkv, dout, mask):
    torch, L = rows.torch, rows.L
    import torch.nn.functional as F
    with torch.no_grad():  # the forward's att, as llmk takes it (masked part 0)
        q, k, _ = L.split(qkv.float())
        att = F.softmax((q @ k.transpose(-2, -1) * L.scale).masked_fill(~mask, float("-inf")),
                        dim=-1).to(qkv.dtype).contiguous()
        del q, k
    step = llmc_style(torch, L)
    err = rows.error(step(qkv, att, dout))
    runs = rows.time(lambda: step(qkv, att, dout))
    blas = "cuBLAS" if qkv.is_cuda else "PyTorch's CPU BLAS"
    rows.add("peer:pytorch-llmc-style", runs, err,
             "llm.c's attention_backward in PyTorch ops, given the forward's att: q, k, v "
             f"permuted to (B·NH, T, HS), 4 × torch.bmm ({blas}, dense T × T) around the softmax "
             "backward written out in float (eager: several kernels), dq, dk, dv permuted back",
             reads_att=True)


def run_precision(torch, args, precision, dev, l2_flush):
    L = Layout(args.B, args.T, args.C, args.NH)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dtype = torch.bfloat16 if precision == "bf16" else torch.float32
    gen = torch.Generator(device=dev).manual_seed(0)

    def uniform(*shape):
        return torch.rand(*shape, device=dev, generator=gen) * 2 - 1

    # llmk's problem's distributions (not its values): k, v, dout uniform in
    # [-1, 1), q in [-4, 4) so that the softmax rows are far from uniform.
    qkv = uniform(L.B, L.T, 3 * L.C)
    qkv[:, :, :L.C] *= 4
    qkv = qkv.to(dtype)
    dout = uniform(L.B, L.T, L.C).to(dtype)
    mask = torch.ones(L.T, L.T, dtype=torch.bool, device=dev).tril()
    ref_check = check_reference(torch, L, qkv, dout, mask)
    with torch.no_grad():
        ref = reference(torch, L, qkv, dout, mask)
    print(f"attention {precision}: float64 reference (its formulas against float64 autograd on "
          f"one sequence: {ref_check:.1e})")
    rows = Rows(torch, args, L, precision, ref, l2_flush)
    sdpa_rows(rows, qkv, dout)
    if args.compile_modes:
        compile_rows(rows, qkv, dout, mask)
    llmc_row(rows, qkv, dout, mask)
    return rows.records
