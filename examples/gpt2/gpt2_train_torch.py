#!/usr/bin/env python3
"""llmk-gpt2-train's peer in PyTorch: the same GPT-2 (gpt2_torch.py's model),
from the same llm.c checkpoint and token file, trained the same way (llm.c's
batches, warmup and cosine schedule, AdamW with weight decay on the
matrices, the gradients clipped by their global norm), eager or under
torch.compile, float32 or bf16 autocast. Writes each step's loss, gradient
norm and time, the median step and the peak device memory into a JSON file;
with --compare, the losses of llmk-gpt2-train's --losses-out beside its own.

  gpt2_train_torch.py --model init.bin --train tokens.bin --B 8 --T 1024 --steps 20
                      [--precision fp32|bf16] [--compile] [--json out.json]
                      [--compare llmk.json --tolerance 1e-3]

Exit status 1 when a step's loss differs from llmk's by more than
--tolerance (relative). The step's time: from the batch's copy to the device
to the optimizer's end (a synchronize), as llmk-gpt2-train times its steps;
the median over the steps after the first three (torch.compile compiles in
the first).
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt2_torch import GPT2, LAYER_PARAMS  # noqa: E402


def read_checkpoint(path):
    """(config, {name: float32 array}) of an llm.c checkpoint (llmc_files.hpp)."""
    header = np.fromfile(path, dtype=np.int32, count=256)
    if header[0] != 20240326 or header[1] not in (3, 5):
        sys.exit(f"{path}: not an llm.c checkpoint of version 3 or 5")
    maxT, V, L, NH, C, Vp = (int(x) for x in header[2:8])
    shapes = [("wte", (Vp, C)), ("wpe", (maxT, C)), ("ln1w", (L, C)), ("ln1b", (L, C)),
              ("qkvw", (L, 3 * C, C)), ("qkvb", (L, 3 * C)), ("attprojw", (L, C, C)),
              ("attprojb", (L, C)), ("ln2w", (L, C)), ("ln2b", (L, C)),
              ("fcw", (L, 4 * C, C)), ("fcb", (L, 4 * C)), ("fcprojw", (L, C, 4 * C)),
              ("fcprojb", (L, C)), ("lnfw", (C,)), ("lnfb", (C,))]
    if header[1] == 3:
        body = np.fromfile(path, dtype=np.float32, offset=1024)
    else:  # bf16: the top half of a float32
        bits = np.fromfile(path, dtype=np.uint16, offset=1024).astype(np.uint32) << 16
        body = bits.view(np.float32)
    params, at = {}, 0
    for name, shape in shapes:
        n = int(np.prod(shape))
        params[name] = body[at:at + n].reshape(shape)
        at += n
    if at != body.size:
        sys.exit(f"{path}: {body.size} parameters, the header's sizes need {at}")
    return dict(L=L, C=C, NH=NH, V=V, Vp=Vp, T=maxT), params


def read_tokens(path):
    header = np.fromfile(path, dtype=np.int32, count=256)
    if header[0] != 20240520 or header[1] != 1:
        sys.exit(f"{path}: not an llm.c token file")
    return np.fromfile(path, dtype=np.uint16, offset=1024).astype(np.int64)


def load(model, params):
    named = dict(model.named_parameters())
    with torch.no_grad():
        model.wte.copy_(torch.from_numpy(params["wte"]))
        model.wpe.copy_(torch.from_numpy(params["wpe"]))
        for short, long in LAYER_PARAMS:
            for l in range(len(model.blocks)):
                named[f"blocks.{l}.{long}"].copy_(torch.from_numpy(params[short][l]))
        model.lnf.weight.copy_(torch.from_numpy(params["lnfw"]))
        model.lnf.bias.copy_(torch.from_numpy(params["lnfb"]))


def learning_rate(args, s):
    """llm.c's schedule (train.hpp's Schedule)."""
    if s < args.warmup:
        return args.lr * (s + 1) / args.warmup
    min_lr = args.lr * args.final_lr_frac
    decay_steps = args.steps - args.warmup
    if decay_steps <= 1:
        return args.lr
    coeff = 0.5 * (1.0 + math.cos(math.pi * (s - args.warmup) / (decay_steps - 1)))
    return min_lr + coeff * (args.lr - min_lr)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True)
    p.add_argument("--train", required=True)
    p.add_argument("--B", type=int, default=8)
    p.add_argument("--T", type=int, default=1024)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--warmup", type=int, default=0)
    p.add_argument("--final-lr-frac", type=float, default=1.0)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--grad-clip", type=float, default=1.0)
    p.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (CPU)")
    p.add_argument("--json")
    p.add_argument("--compare", help="llmk-gpt2-train's --losses-out file")
    p.add_argument("--tolerance", type=float, default=1e-3)
    args = p.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.backends.cuda.matmul.allow_tf32 = False  # float32 as llmk's fp32
    torch.backends.cudnn.allow_tf32 = False
    device = torch.device(args.device)

    cfg, params = read_checkpoint(args.model)
    model = GPT2(**cfg).to(device)
    load(model, params)
    tokens = torch.from_numpy(read_tokens(args.train))
    decay = [q for q in model.parameters() if q.dim() >= 2]
    other = [q for q in model.parameters() if q.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                             {"params": other, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95), eps=1e-8,
                            fused=device.type == "cuda")
    fwd = torch.compile(model) if args.compile else model
    BT, position = args.B * args.T, 0
    losses, norms, seconds = [], [], []
    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    for s in range(args.steps):
        if position + BT + 1 > tokens.numel():
            position = 0
        chunk = tokens[position:position + BT + 1]
        position += BT
        if cuda:
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        x = chunk[:-1].view(args.B, args.T).to(device)
        y = chunk[1:].view(args.B, args.T).to(device)
        with torch.autocast(device_type=device.type, dtype=torch.bfloat16,
                            enabled=args.precision == "bf16"):
            loss = fwd(x, y)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
        for group in opt.param_groups:
            group["lr"] = learning_rate(args, s)
        opt.step()
        opt.zero_grad(set_to_none=True)
        loss_value, norm_value = loss.item(), norm.item()
        seconds.append(time.perf_counter() - t0)
        losses.append(loss_value)
        norms.append(norm_value)
        print(f"step {s + 1:4d}/{args.steps}: loss {loss_value:.6f}  norm {norm_value:.4f}  "
              f"{seconds[-1] * 1e3:.2f} ms", flush=True)
    timed = seconds[3:] if len(seconds) > 3 else seconds
    median = statistics.median(timed)
    peak = torch.cuda.max_memory_allocated() if cuda else 0
    mode = ("torch.compile" if args.compile else "eager") + " " + args.precision
    print(f"summary: PyTorch {mode}, median step {median * 1e3:.2f} ms (after the first 3), "
          f"{BT / median:.0f} tokens/s, peak memory {peak >> 20} MiB")
    result = dict(mode=mode, precision=args.precision, B=args.B, T=args.T, losses=losses,
                  grad_norms=norms, step_seconds=seconds, median_step_ms=median * 1e3,
                  tokens_per_s=BT / median, peak_memory_bytes=peak, device=str(device),
                  torch=torch.__version__)
    status = 0
    if args.compare:
        with open(args.compare) as f:
            llmk = json.load(f)
        worst = 0.0
        print(f"{'step':>4}  {'PyTorch':>10}  {'llmk':>10}  {'relative':>9}")
        for s, (a, b) in enumerate(zip(losses, llmk["losses"])):
            rel = abs(a - b) / abs(a)
            worst = max(worst, rel)
            print(f"{s + 1:4d}  {a:10.6f}  {b:10.6f}  {rel:9.2e}")
        llmk_timed = llmk["step_seconds"][3:] or llmk["step_seconds"]
        llmk_median = statistics.median(llmk_timed)
        ok = worst <= args.tolerance and len(llmk["losses"]) == len(losses)
        print(f"{'passed' if ok else 'FAILED'}: every step's loss within {args.tolerance:.0e} of "
              f"PyTorch's (worst {worst:.2e}); step: llmk {llmk_median * 1e3:.2f} ms, PyTorch "
              f"{median * 1e3:.2f} ms ({llmk_median / median:.2f}x)")
        result.update(compared_with=args.compare, worst_relative_loss_difference=worst,
                      llmk_median_step_ms=llmk_median * 1e3, tolerance=args.tolerance)
        status = 0 if ok else 1
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return status


if __name__ == "__main__":
    sys.exit(main())
