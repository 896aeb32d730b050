#!/usr/bin/env python3
"""PyTorch's backward of F.linear on llmk's shape, as a peer for llmk-perf on CUDA.

Times out.backward(dout) for out = F.linear(inp, weight, bias) in float32 with
TF32 off, the gradients accumulating into .grad as llm.c's do. Like llmk-perf:
warm-up, then CUDA events around each call, L2 flushed between repeats, the
median and min reported. Writes a JSON record that llmk-perf --import reads, so
that its table shows PyTorch beside llmk's implementations.

usage: python3 perf/torch_baseline.py [--B 8 --T 1024 --C 768 --OC 3072] [--repeat 100] [--json PATH]
"""
import argparse
import json
import statistics

import torch
import torch.nn.functional as F


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--B", type=int, default=8)
    ap.add_argument("--T", type=int, default=1024)
    ap.add_argument("--C", type=int, default=768)
    ap.add_argument("--OC", type=int, default=3072)
    ap.add_argument("--repeat", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--json", help="write the record here")
    args, _ = ap.parse_known_args()  # llmk-perf arguments it does not share are ignored

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(0)

    def uniform(*shape, grad=False):
        t = torch.rand(*shape, device=dev, generator=gen) * 2 - 1
        return t.requires_grad_(grad)

    B, T, C, OC = args.B, args.T, args.C, args.OC
    inp = uniform(B, T, C, grad=True)
    weight = uniform(OC, C, grad=True)
    bias = uniform(OC, grad=True)
    dout = uniform(B, T, OC)
    out = F.linear(inp, weight, bias)

    # Gradients accumulate: start from non-zero .grad, as llmk's inputs do.
    for p in (inp, weight, bias):
        p.grad = torch.rand_like(p) * 2 - 1
    l2_flush = torch.empty(int(torch.cuda.get_device_properties(dev).L2_cache_size * 2),
                           dtype=torch.uint8, device=dev)

    for _ in range(args.warmup):
        out.backward(dout, retain_graph=True)
    times = []
    for _ in range(args.repeat):
        l2_flush.zero_()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        out.backward(dout, retain_graph=True)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))

    M = B * T
    flops = 4 * M * C * OC + M * OC
    med = statistics.median(times)
    record = {
        "impl": "peer:pytorch", "kind": "peer", "backend": "Cuda", "B": B, "T": T, "C": C, "OC": OC,
        "ms_median": med, "ms_min": min(times), "repeats": len(times),
        "gflops": flops / (med * 1e-3) / 1e9, "bias_gbs": None,
        "valid": None, "max_rel_err": None,
        "note": f"torch {torch.__version__}, F.linear backward, fp32, TF32 off",
    }
    print(f"pytorch F.linear backward {B}x{T}x{C}->{OC}: median {med:.4f} ms, "
          f"min {min(times):.4f} ms, {record['gflops']:.1f} GFLOP/s "
          f"({torch.cuda.get_device_name(dev)}, torch {torch.__version__})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": {"gpu": torch.cuda.get_device_name(dev)}, "records": [record]},
                      f, indent=2)


if __name__ == "__main__":
    main()
