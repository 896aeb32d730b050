#!/usr/bin/env python3
"""PyTorch's backward of F.linear on llmk's shape, as a peer for llmk-perf on CUDA.

Times out.backward(dout) for out = F.linear(inp, weight, bias), in each
precision llmk-perf has (--precision, as llmk-perf's):
  fp32           float32 tensors, torch.backends.cuda.matmul.allow_tf32 = False
  tf32           float32 tensors, allow_tf32 = True
  bf16           bfloat16 tensors (inputs, weight, bias and their .grad)
  bf16-fp32grad  torch.autocast(bfloat16) over float32 weight and bias (their
                 .grad float32, PyTorch's mixed precision), bf16 activations
With --gelu, out = F.linear(F.gelu(pre, approximate='tanh'), weight, bias) and
the time is the whole backward of that expression, as PyTorch users get it
(dinp is then pre's gradient). The gradients accumulate into .grad as llm.c's
do; with --overwrite-dinp the activation's .grad is set to None before each
call (untimed), so that autograd writes it instead of adding to it.
Like llmk-perf: warm-up, then CUDA events around each call, the L2 flushed
between repeats, the median and min reported; and each output's relative L2
error against a float64 product of the very same inputs (reported, not judged).
Writes a JSON record per precision that llmk-perf --import reads, so that its
table shows PyTorch beside llmk's implementations as peer:pytorch.

usage: python3 perf/torch_baseline.py [--B 8 --T 1024 --C 768 --OC 3072]
           [--precision fp32|tf32|bf16|bf16-fp32grad|all (comma lists too)]
           [--gelu] [--overwrite-dinp] [--repeat 100] [--warmup 10] [--json PATH]
Without a CUDA GPU (or without PyTorch) it says so and exits with 0.
"""
import argparse
import json
import statistics
import sys
import warnings

PRECISIONS = ["fp32", "tf32", "bf16", "bf16-fp32grad"]  # llmk-perf's order


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--B", type=int, default=8)
    ap.add_argument("--T", type=int, default=1024)
    ap.add_argument("--C", type=int, default=768)
    ap.add_argument("--OC", type=int, default=3072)
    ap.add_argument("--precision", default="fp32",
                    help="comma list of " + ", ".join(PRECISIONS) + ", or 'all' (default fp32)")
    ap.add_argument("--gelu", action="store_true",
                    help="time the backward of F.linear(F.gelu(pre, approximate='tanh'), W, b)")
    ap.add_argument("--overwrite-dinp", action="store_true",
                    help="the activation's .grad is None before each call: written, not added to")
    ap.add_argument("--repeat", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--json", help="write the records here")
    args, _ = ap.parse_known_args()  # llmk-perf arguments it does not share are ignored
    names = PRECISIONS if args.precision == "all" else args.precision.split(",")
    for name in names:
        if name not in PRECISIONS:
            ap.error(f"--precision: '{name}' is not one of {', '.join(PRECISIONS)}, all")
    args.precisions = [p for p in PRECISIONS if p in names]
    return args


def rel_l2(out, ref):
    """‖out − ref‖₂ / ‖ref‖₂ in float64 (absolute when ‖ref‖₂ = 0)."""
    out, ref = out.double(), ref.double()
    norm = ref.norm().item()
    diff = (out - ref).norm().item()
    return diff / norm if norm > 0 else diff


def gelu_grad64(x):
    """d/dx of GPT-2's tanh GELU, in float64."""
    import math
    s, k = math.sqrt(2.0 / math.pi), 0.044715
    t = (s * (x + k * x ** 3)).tanh()
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * s * (1 + 3 * k * x * x)


def run_precision(torch, F, args, precision, dev, l2_flush):
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
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
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

    # One call from the initial gradients, checked against float64 products
    # of the same values (inp as the forward materialized it).
    reset_grads()
    out.backward(dout, retain_graph=True)
    torch.cuda.synchronize()
    with torch.no_grad():
        d64 = dout.double().reshape(-1, OC)
        a64 = inp.double().reshape(-1, C)
        dinp_ref = d64 @ weight.double()
        if args.gelu:
            dinp_ref = dinp_ref * gelu_grad64(x.double().reshape(-1, C))
        if not args.overwrite_dinp:
            dinp_ref = dinp_ref + initial[0].double().reshape(-1, C)
        errors = {
            "dinp": rel_l2(x.grad.reshape(-1, C), dinp_ref),
            "dweight": rel_l2(weight.grad, initial[1].double() + d64.t() @ a64),
            "dbias": rel_l2(bias.grad, initial[2].double() + d64.sum(0)),
        }
        del d64, a64, dinp_ref

    def call():
        out.backward(dout, retain_graph=True)

    for _ in range(args.warmup):
        if args.overwrite_dinp:
            x.grad = None
        call()
    times = []
    for _ in range(args.repeat):
        if args.overwrite_dinp:
            x.grad = None
        l2_flush.zero_()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))

    M = B * T
    flops = 4 * M * C * OC + M * OC
    med = statistics.median(times)
    what = {
        "fp32": "float32, TF32 off",
        "tf32": "float32, allow_tf32 = True",
        "bf16": "bfloat16 tensors",
        "bf16-fp32grad": "autocast bfloat16, float32 weight and bias",
    }[precision]
    expr = "F.linear(F.gelu(pre, approximate='tanh'), W, b)" if args.gelu else "F.linear"
    record = {
        "impl": "peer:pytorch", "kind": "peer", "backend": "Cuda", "precision": precision,
        "B": B, "T": T, "C": C, "OC": OC,
        "gelu": args.gelu, "overwrite_dinp": args.overwrite_dinp,
        "ms_median": med, "ms_min": min(times), "repeats": len(times),
        "gflops": flops / (med * 1e-3) / 1e9, "bias_gbs": None,
        "valid": None, "max_rel_err": max(errors.values()),
        "dinp_rel_err": errors["dinp"], "dweight_rel_err": errors["dweight"],
        "dbias_rel_err": errors["dbias"],
        "note": f"torch {torch.__version__}, {expr} backward, {what}"
                + (", activation .grad set to None before each call" if args.overwrite_dinp else "")
                + "; errors measured, not judged",
    }
    print(f"pytorch {expr} backward {B}x{T}x{C}->{OC} {precision}: median {med:.4f} ms, "
          f"min {min(times):.4f} ms, {record['gflops']:.1f} GFLOP/s, rel err dinp "
          f"{errors['dinp']:.1e} dweight {errors['dweight']:.1e} dbias {errors['dbias']:.1e}")
    return record


def main():
    args = parse_args()
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print("torch_baseline.py: PyTorch is not installed: nothing to time", file=sys.stderr)
        return 0
    if not torch.cuda.is_available():
        print("torch_baseline.py: no CUDA GPU (torch.cuda.is_available() is False): "
              "nothing to time", file=sys.stderr)
        return 0
    # Autograd's worker thread makes the first cuBLAS call of a backward and
    # PyTorch warns that it sets the device's primary context there: harmless.
    warnings.filterwarnings("ignore", message="Attempting to run cuBLAS, but there was no current CUDA context")
    dev = torch.device("cuda")
    l2_flush = torch.empty(int(torch.cuda.get_device_properties(dev).L2_cache_size * 2),
                           dtype=torch.uint8, device=dev)
    records = [run_precision(torch, F, args, p, dev, l2_flush) for p in args.precisions]
    print(f"({torch.cuda.get_device_name(dev)}, torch {torch.__version__})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": {"gpu": torch.cuda.get_device_name(dev)}, "records": records},
                      f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
