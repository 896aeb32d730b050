#!/usr/bin/env python3
"""A plain PyTorch GPT-2 for llmk-gpt2-backward: writes, into one file, its
weights, tokens and targets, the forward's activations that the backward
reads (saved by the model's own forward code), autograd's gradient of every
parameter and of the input embedding, and the time of PyTorch's backward
(eager and torch.compile of the same model) — also into a JSON file, with
the forward's time (as training runs it: autograd recording, the loss
included).

  gpt2_torch.py --out DIR [--config 124M | --config tiny | --L 12 --C 768 ...]
                [--device cuda] [--autocast] [--save-att] [--no-compile]

DIR/gpt2.bin: the format of examples/gpt2/tensor_file.hpp (a header, then
named tensors one after the other, each written as soon as it is ready).
DIR/times.json: the backward times (median ms) and how they were measured.

The model is llm.c's GPT-2 (train_gpt2.py): pre-norm blocks, tanh GELU, the
LM head tied to wte, wte padded to Vp rows (the padded rows zero and never a
target). Its forward has two paths over the same parameters:
  - save=dict: layer norms, attention and GELU written out (mean, rstd, the
    attention's log-sum-exp, probabilities with --save-att), every tensor
    llm.c's backward reads recorded; autograd's gradients are taken here,
    in float32 (with --autocast: under bfloat16 autocast, the activations
    saved as the forward made them, the float32 master weights' gradients);
  - save=None: F.layer_norm and F.scaled_dot_product_attention (what a
    plain PyTorch GPT-2 runs), for the times: backward only, CUDA events,
    the L2 flushed before each (perf/torch_peers/common.py's time_calls),
    eager and under torch.compile, float32 and bf16 autocast.
Test it on the CPU at a tiny configuration (--config tiny --device cpu).
"""
import argparse
import ctypes
import json
import math
import os
import statistics
import struct
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
try:  # in the repository
    sys.path.insert(0, os.path.join(HERE, "..", ".."))
    from perf.torch_peers import common  # time_calls: CUDA events, the L2 flush
except ImportError:  # in a GPU bundle (scripts/gpu-bundle.sh): torch_peers/ beside this file
    sys.path.insert(0, HERE)
    from torch_peers import common

CONFIGS = {  # L, C, NH, V, Vp, B, T
    "124M": dict(L=12, C=768, NH=12, V=50257, Vp=50304, B=8, T=1024),
    "tiny": dict(L=2, C=32, NH=2, V=61, Vp=64, B=2, T=8),
}
FIELDS = ("L", "C", "NH", "V", "Vp", "B", "T")


class LayerNorm(nn.Module):
    def __init__(self, C):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(C))
        self.bias = nn.Parameter(torch.zeros(C))

    def forward(self, x, save=None, name=None):
        if save is None:
            return F.layer_norm(x, x.shape[-1:], self.weight, self.bias, 1e-5)
        xf = x.float()
        mean = xf.mean(-1, keepdim=True)
        rstd = ((xf - mean).pow(2).mean(-1, keepdim=True) + 1e-5).rsqrt()
        out = ((xf - mean) * rstd * self.weight + self.bias).to(x.dtype)
        save[name + "_mean"] = mean.squeeze(-1)
        save[name + "_rstd"] = rstd.squeeze(-1)
        save[name] = out
        return out


class Block(nn.Module):
    def __init__(self, C, NH):
        super().__init__()
        self.NH = NH
        self.ln1 = LayerNorm(C)
        self.qkv = nn.Linear(C, 3 * C)
        self.attproj = nn.Linear(C, C)
        self.ln2 = LayerNorm(C)
        self.fc = nn.Linear(C, 4 * C)
        self.fcproj = nn.Linear(4 * C, C)

    def attention(self, qkv, save):
        B, T, C3 = qkv.shape
        C, NH = C3 // 3, self.NH
        q, k, v = (t.view(B, T, NH, C // NH).transpose(1, 2) for t in qkv.split(C, dim=2))
        if save is None:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            preatt = (q @ k.transpose(-2, -1)).float() / math.sqrt(C // NH)
            mask = torch.ones(T, T, dtype=torch.bool, device=qkv.device).tril()
            preatt = preatt.masked_fill(~mask, float("-inf"))
            lse = torch.logsumexp(preatt, dim=-1)
            att = torch.exp(preatt - lse.unsqueeze(-1)).to(v.dtype)
            y = att @ v
            save["lse"] = lse
            save["att"] = att
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        if save is not None:
            save["atty"] = y
        return y

    def forward(self, x, save=None):
        h = self.ln1(x, save, "ln1")
        qkv = self.qkv(h)
        if save is not None:
            save["qkv"] = qkv
        x = x + self.attproj(self.attention(qkv, save))
        if save is not None:
            save["residual2"] = x
        h = self.ln2(x, save, "ln2")
        fch = self.fc(h)
        fch_gelu = F.gelu(fch, approximate="tanh")
        if save is not None:
            save["fch"], save["fch_gelu"] = fch, fch_gelu
        x = x + self.fcproj(fch_gelu)
        if save is not None:
            save["residual3"] = x
        return x


class GPT2(nn.Module):
    def __init__(self, L, C, NH, V, Vp, T, **_):
        super().__init__()
        self.V = V
        self.wte = nn.Parameter(torch.randn(Vp, C) * 0.02)
        with torch.no_grad():
            self.wte[V:] = 0  # llm.c's padding: rows that no token and no target use
        self.wpe = nn.Parameter(torch.randn(T, C) * 0.01)
        self.blocks = nn.ModuleList(Block(C, NH) for _ in range(L))
        self.lnf = LayerNorm(C)
        for name, p in self.named_parameters():  # GPT-2's initialization
            if name.endswith("weight") and p.dim() == 2:
                nn.init.normal_(p, std=0.02 / (math.sqrt(2 * L) if "proj" in name else 1))
            elif name.endswith("bias"):
                nn.init.zeros_(p)

    def forward(self, idx, targets, save=None):
        T = idx.shape[1]
        x = self.wte[idx] + self.wpe[:T]
        if save is not None:
            x.retain_grad()
            save["encoded"] = x
            save["layers"] = []
        for block in self.blocks:
            layer = {} if save is not None else None
            x = block(x, layer)
            if save is not None:
                save["layers"].append(layer)
        x = self.lnf(x, save, "lnf")
        logits = x @ self.wte.t().to(x.dtype)
        if save is not None:
            save["logits"] = logits
        losses = F.cross_entropy(logits[..., :self.V].float().flatten(0, 1), targets.flatten(),
                                 reduction="none")
        if save is not None:
            save["losses"] = losses.view(targets.shape)
        return losses.mean()


# Names of llm.c's ParameterTensors (model.hpp) → the model's parameters, stacked per layer.
LAYER_PARAMS = [("ln1w", "ln1.weight"), ("ln1b", "ln1.bias"), ("qkvw", "qkv.weight"),
                ("qkvb", "qkv.bias"), ("attprojw", "attproj.weight"), ("attprojb", "attproj.bias"),
                ("ln2w", "ln2.weight"), ("ln2b", "ln2.bias"), ("fcw", "fc.weight"),
                ("fcb", "fc.bias"), ("fcprojw", "fcproj.weight"), ("fcprojb", "fcproj.bias")]
LAYER_ACTS = ["ln1", "ln1_mean", "ln1_rstd", "qkv", "atty", "att", "lse", "residual2", "ln2",
              "ln2_mean", "ln2_rstd", "fch", "fch_gelu", "residual3"]


def parameters_llmc(model, grad=False):
    """(name, tensor) in parameter_specs' order: the parameters, or their .grad."""
    get = (lambda p: p.grad) if grad else (lambda p: p.detach())
    named = dict(model.named_parameters())
    out = [("wte", get(model.wte)), ("wpe", get(model.wpe))]
    for short, long in LAYER_PARAMS:
        out.append((short, torch.stack([get(named[f"blocks.{l}.{long}"])
                                        for l in range(len(model.blocks))])))
    out += [("lnfw", get(model.lnf.weight)), ("lnfb", get(model.lnf.bias))]
    return out


class TensorWriter:
    """tensor_file.hpp's format, a tensor at a time (in chunks: no copy of a
    whole large tensor on the host at once)."""
    DTYPES = {torch.float32: 0, torch.int32: 1, torch.bfloat16: 2}

    def __init__(self, path):
        self.f = open(path, "wb")
        self.f.write(b"LLMKGPT2" + struct.pack("<I", 1))

    def write(self, name, t):
        t = t.detach()
        if t.dtype not in self.DTYPES:
            t = t.float()
        name_b = name.encode("ascii")
        self.f.write(struct.pack("<I", len(name_b)) + name_b)
        self.f.write(struct.pack("<II", self.DTYPES[t.dtype], t.dim()))
        self.f.write(struct.pack(f"<{t.dim()}q", *t.shape))
        flat = t.contiguous().view(-1)
        chunk = 1 << 26  # elements
        for start in range(0, flat.numel(), chunk):
            part = flat[start:start + chunk].cpu().contiguous()
            self.f.write(ctypes.string_at(part.data_ptr(), part.numel() * part.element_size()))

    def close(self):
        self.f.close()


def autocast(device, enabled):
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=enabled)


def time_backward(model, idx, targets, device, bf16, compiled, args):
    """Median ms of loss.backward() alone (the forward before each, untimed)."""
    fwd = torch.compile(model, dynamic=False) if compiled else model
    state = {}

    def before():
        model.zero_grad(set_to_none=True)
        with autocast(device, bf16):
            state["loss"] = fwd(idx, targets)

    def call():
        state["loss"].backward()

    if device.type == "cuda":
        flush = torch.empty(256 << 20, dtype=torch.uint8, device=device)
        times = common.time_calls(torch, call, flush, args.warmup, args.repeat, before)
    else:
        times = []
        for i in range(args.warmup + args.repeat):
            before()
            t0 = time.perf_counter()
            call()
            if i >= args.warmup:
                times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def time_forward(model, idx, targets, device, bf16, compiled, args):
    """Median ms of the forward as training runs it (autograd recording, the
    loss included: llmk's --forward stops at the logits, the loss being the
    classifier's, fused into its backward)."""
    fwd = torch.compile(model, dynamic=False) if compiled else model

    def call():
        with autocast(device, bf16):
            fwd(idx, targets)

    if device.type == "cuda":
        flush = torch.empty(256 << 20, dtype=torch.uint8, device=device)
        times = common.time_calls(torch, call, flush, args.warmup, args.repeat,
                                  lambda: model.zero_grad(set_to_none=True))
    else:
        times = []
        for i in range(args.warmup + args.repeat):
            t0 = time.perf_counter()
            call()
            if i >= args.warmup:
                times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="directory for gpt2.bin and times.json")
    p.add_argument("--config", choices=sorted(CONFIGS), default="tiny")
    for f in FIELDS:
        p.add_argument(f"--{f}", type=int, help=f"override the config's {f}")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--autocast", action="store_true",
                   help="the saved forward under bf16 autocast (activations as it makes them)")
    p.add_argument("--save-att", action="store_true",
                   help="also write att (L, B, NH, T, T), for --attention materialized "
                        "(124M: 4.8 GB in float32)")
    p.add_argument("--no-compile", action="store_true", help="skip the torch.compile times")
    p.add_argument("--no-time", action="store_true", help="skip all the times")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--repeat", type=int, default=20)
    args = p.parse_args()
    cfg = dict(CONFIGS[args.config])
    for f in FIELDS:
        if getattr(args, f) is not None:
            cfg[f] = getattr(args, f)
    device = torch.device(args.device)
    torch.backends.cuda.matmul.allow_tf32 = False  # float32 gradients in float32
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(args.seed)
    model = GPT2(**cfg).to(device)
    B, T, V = cfg["B"], cfg["T"], cfg["V"]
    idx = torch.randint(0, V, (B, T), device=device, dtype=torch.int32)
    targets = torch.randint(0, V, (B, T), device=device, dtype=torch.long)
    os.makedirs(args.out, exist_ok=True)

    # The saved forward and autograd's gradients.
    save = {}
    with autocast(device, args.autocast):
        loss = model(idx, targets, save)
    loss.backward()
    grads = parameters_llmc(model, grad=True)
    grad_encoded = save["encoded"].grad

    times, forward_times = {}, {}
    if not args.no_time:
        for bf16 in (False, True):
            for compiled in ((False,) if args.no_compile else (False, True)):
                key = f"{'compile' if compiled else 'eager'}_{'bf16' if bf16 else 'fp32'}"
                times[key] = time_backward(model, idx, targets, device, bf16, compiled, args)
                print(f"PyTorch backward {key}: {times[key]:.4f} ms", flush=True)
                forward_times[key] = time_forward(model, idx, targets, device, bf16, compiled,
                                                  args)
                print(f"PyTorch forward {key}: {forward_times[key]:.4f} ms", flush=True)
    with open(os.path.join(args.out, "times.json"), "w") as f:
        json.dump({"config": cfg, "device": str(device),
                   "torch": torch.__version__, "backward_ms_median": times,
                   "forward_ms_median": forward_times,
                   "method": "loss.backward() alone, the forward untimed before each; "
                             + ("CUDA events, L2 (256 MiB) flushed before each; "
                                if device.type == "cuda" else "time.perf_counter; ")
                             + "SDPA attention, F.layer_norm; "
                             f"{args.warmup} warm-up, median of {args.repeat}"}, f, indent=1)

    path = os.path.join(args.out, "gpt2.bin")
    w = TensorWriter(path)
    w.write("config", torch.tensor([cfg[f] for f in FIELDS], dtype=torch.int32))
    w.write("tokens", idx.int())
    w.write("targets", targets.int())
    for name, t in parameters_llmc(model):
        w.write(name, t)
    w.write("encoded", save["encoded"])
    layers = save.pop("layers")
    for name in LAYER_ACTS:
        if name == "att" and not args.save_att:
            continue
        w.write(name, torch.stack([layer[name] for layer in layers]))
    for name in ("lnf", "lnf_mean", "lnf_rstd", "logits", "losses"):
        w.write(name, save[name])
    for name, g in grads:
        w.write("grad." + name, g)
    w.write("grad.encoded", grad_encoded)
    for key, ms in times.items():
        w.write("time_ms." + key, torch.tensor([ms], dtype=torch.float32))
    w.close()
    print(f"wrote {path} ({os.path.getsize(path) / 2**20:.1f} MiB) and times.json; loss "
          f"{loss.item():.6f}")


if __name__ == "__main__":
    main()
