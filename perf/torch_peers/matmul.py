"""matmul_backward's PyTorch peer (torch_baseline.py [matmul_backward]):
F.linear's backward through autograd (peer:pytorch), and the explicit backward
under torch.compile (peer:pytorch-compile*), on llmk-perf's shapes and
precisions; records for llmk-perf --import."""
import math

from .common import (Compiled, compile_impl, compile_note, kernels_note, mark_step_of,
                     profiled_kernel_ms, rel_l2, skipped_record, spread_fields, spread_text, synchronize,
                     time_runs, uses_cudagraphs)

PRECISIONS = ["fp32", "tf32", "bf16", "bf16-fp32grad"]  # llmk-perf's order
COMPILE_MODES = ["default", "max-autotune-no-cudagraphs"]  # --compile (none by default)
WHAT = {
    "fp32": "float32, TF32 off",
    "tf32": "float32, allow_tf32 = True",
    "bf16": "bfloat16 tensors",
    "bf16-fp32grad": "autocast bfloat16, float32 weight and bias",
}
WHAT_COMPILED = {
    "fp32": "float32, TF32 off",
    "tf32": "float32, allow_tf32 = True",
    "bf16": "bfloat16 tensors",
    "bf16-fp32grad": "bf16 dout, inp, weight and dinp, float32 dweight and dbias (dweight's "
                     "product rounded to bf16 before the float add, as autocast's gradients; "
                     "dbias summed in float)",
}


def gelu_grad64(x):
    """d/dx of GPT-2's tanh GELU, in float64."""
    s, k = math.sqrt(2.0 / math.pi), 0.044715
    t = (s * (x + k * x ** 3)).tanh()
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * s * (1 + 3 * k * x * x)


def flops(args):
    M = args.B * args.T
    return 4 * M * args.C * args.OC + M * args.OC


def base(args, precision):
    return {"precision": precision, "B": args.B, "T": args.T, "C": args.C, "OC": args.OC,
            "gelu": args.gelu, "overwrite_dinp": args.overwrite_dinp, "bias_gbs": None}


def record(torch, args, precision, impl, runs, errors, note, **extra):
    fields = spread_fields(runs)
    med = fields["ms_median"]
    r = {"impl": impl, "kind": "peer", "backend": "Cuda", **base(args, precision), **fields,
         "gflops": flops(args) / (med * 1e-3) / 1e9 if med > 0 else None,
         "valid": None, "max_rel_err": max(errors.values()),
         "dinp_rel_err": errors["dinp"], "dweight_rel_err": errors["dweight"],
         "dbias_rel_err": errors["dbias"],
         "note": f"torch {torch.__version__}, {note}; errors measured, not judged"}
    r.update(extra)
    print(f"{impl} matmul backward {args.B}x{args.T}x{args.C}->{args.OC} {precision}"
          f"{' gelu' if args.gelu else ''}: median {med:.4f} ms, min {fields['ms_min']:.4f} ms, "
          f"{(r['gflops'] or 0) * 1e-3:.1f} TFLOP/s{spread_text(fields)}, rel err dinp "
          f"{errors['dinp']:.1e} dweight {errors['dweight']:.1e} dbias {errors['dbias']:.1e}")
    return r


def skipped(args, precision, impl, why):
    print(f"{impl} matmul backward {precision}: skipped: {why}")
    return skipped_record(base(args, precision), impl, why)


def compiled_step(torch, gelu, overwrite, fp32grad):
    """The backward written out, for torch.compile: dinp = (dout · W) ⊙
    gelu'(pre) (or without GELU), = or += the old dinp; dweight += doutᵀ·inp;
    dbias += Σ dout. Functional (new tensors out: the bytes of an in-place
    update). dout (M, OC), inp and pre (M, C), weight (OC, C)."""
    aten = torch.ops.aten

    def step(dout, inp, pre, weight, dinp, dweight, dbias):
        g = dout @ weight
        if gelu:
            g = aten.gelu_backward(g, pre, approximate="tanh")
        dw = dout.t() @ inp
        if fp32grad:
            dw, db = dw.float(), dout.sum(0, dtype=torch.float32)
        else:
            db = dout.sum(0)
        return (g if overwrite else dinp + g), dweight + dw, dbias + db

    return step


def run_precision(torch, args, precision, dev, l2_flush):
    import torch.nn.functional as F
    B, T, C, OC = args.B, args.T, args.C, args.OC
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.backends.cudnn.allow_tf32 = precision == "tf32"
    act_dtype = torch.bfloat16 if precision.startswith("bf16") else torch.float32
    param_dtype = torch.bfloat16 if precision == "bf16" else torch.float32
    autocast = precision == "bf16-fp32grad"
    gen = torch.Generator(device=dev).manual_seed(0)

    def uniform(*shape, dtype, scale=1.0, grad=False):
        t = ((torch.rand(*shape, device=dev, generator=gen) * 2 - 1) * scale).to(dtype)
        return t.requires_grad_(grad)

    # The leaf whose gradient is "dinp": inp, or pre_gelu with --gelu.
    x = uniform(B, T, C, dtype=act_dtype, scale=3.0 if args.gelu else 1.0, grad=True)
    weight = uniform(OC, C, dtype=param_dtype, grad=True)
    bias = uniform(OC, dtype=param_dtype, grad=True)
    dout = uniform(B, T, OC, dtype=act_dtype)
    with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=autocast):
        inp = F.gelu(x, approximate="tanh") if args.gelu else x
        out = F.linear(inp, weight, bias)
    leaves = (x, weight, bias)

    # Initial gradients: random, as llmk's; the activation's is dropped before
    # each call with --overwrite-dinp.
    initial = [torch.rand_like(p) * 2 - 1 for p in leaves]

    def reset_grads():
        for p, g in zip(leaves, initial):
            p.grad = g.clone()
        if args.overwrite_dinp:
            x.grad = None

    def reference(weight64, inp64):
        """dinp, dweight, dbias in float64 from the initial gradients."""
        d64 = dout.double().reshape(-1, OC)
        dinp = d64 @ weight64
        if args.gelu:
            dinp = dinp * gelu_grad64(x.double().reshape(-1, C))
        if not args.overwrite_dinp:
            dinp = dinp + initial[0].double().reshape(-1, C)
        return (dinp, initial[1].double() + d64.t() @ inp64, initial[2].double() + d64.sum(0))

    def errors_of(outs, ref):
        return {name: rel_l2(o, r) for name, o, r in zip(("dinp", "dweight", "dbias"), outs, ref)}

    # One call from the initial gradients, checked against float64 products
    # of the same values (inp as the forward materialized it).
    reset_grads()
    out.backward(dout, retain_graph=True)
    synchronize(torch)
    with torch.no_grad():
        ref = reference(weight.double(), inp.double().reshape(-1, C))
        errors = errors_of((x.grad.reshape(-1, C), weight.grad, bias.grad), ref)
        del ref

    def drop_dinp():
        x.grad = None

    runs = time_runs(torch, lambda: out.backward(dout, retain_graph=True), l2_flush, args,
                     drop_dinp if args.overwrite_dinp else None)
    expr = "F.linear(F.gelu(pre, approximate='tanh'), W, b)" if args.gelu else "F.linear"
    records = [record(torch, args, precision, "peer:pytorch", runs, errors,
                      f"{expr} backward, {WHAT[precision]}"
                      + (", activation .grad set to None before each call"
                         if args.overwrite_dinp else ""))]
    del out
    if not args.compile_modes:
        return records

    # The explicit backward under torch.compile, on llmk's inputs: the same
    # values, the weight in the activations' type (bf16-fp32grad: bf16, as
    # llmk's), the gradients in llmk's types.
    with torch.no_grad():
        x2 = x.detach().reshape(-1, C)
        inp2 = F.gelu(x2, approximate="tanh") if args.gelu else x2
        weight2 = weight.detach().to(act_dtype)
        inputs = (dout.reshape(-1, OC), inp2, x2, weight2, initial[0].reshape(-1, C),
                  initial[1], initial[2])
        ref = reference(weight2.double(), inp2.double())
    update = "dinp =" if args.overwrite_dinp else "dinp +="
    gelu = " ⊙ gelu'(pre) (aten.gelu_backward, tanh)" if args.gelu else ""
    step = compiled_step(torch, args.gelu, args.overwrite_dinp, precision == "bf16-fp32grad")
    for mode in args.compile_modes:
        impl = compile_impl(mode)
        kernels_impl = None if uses_cudagraphs(mode) else impl + "-kernels"
        before = mark_step_of(torch, mode)
        compiled = Compiled(torch, [step], mode, inputs, before)
        if compiled.fn is None:
            records.append(skipped(args, precision, impl, compiled.why))
            if kernels_impl:
                records.append(skipped(args, precision, kernels_impl, compiled.why))
            continue
        errors = errors_of(compiled.outs, ref)
        compiled.outs = None
        runs = time_runs(torch, lambda: compiled.fn(*inputs), l2_flush, args, before)
        how = (f"torch.compile(mode=\"{mode}\") of the explicit backward ({update} (dout·W){gelu}, "
               f"dweight += doutᵀ·inp, dbias += Σ dout), {WHAT_COMPILED[precision]}")
        records.append(record(torch, args, precision, impl, runs, errors,
                              f"{how}; {compile_note(compiled)}", compile_s=compiled.compile_s))
        if kernels_impl:
            kernel_times, names = profiled_kernel_ms(torch, lambda: compiled.fn(*inputs),
                                                     l2_flush, min(args.repeat, 50))
            if kernel_times is None:
                records.append(skipped(args, precision, kernels_impl, names))
                continue
            records.append(record(torch, args, precision, kernels_impl, [kernel_times], errors,
                                  kernels_note(impl, names), compile_s=compiled.compile_s))
    return records
