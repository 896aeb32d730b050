#!/usr/bin/env python3
"""A check of torch_baseline.py's code paths without a GPU: every operation
at tiny sizes on the CPU, with CUDA events replaced by the wall clock and
torch.compile by its "aot_eager" backend (Dynamo and AOTAutograd, no
Inductor code generation: nothing is compiled with a C++ compiler). Checks
that each row gives a record, that the timed rows' errors are those of their
precision, that the attention rows are judged valid, and that the rows that
cannot run on a CPU (flash, efficient, cudnn; the profiler's kernels) are
skipped with a reason. Says nothing of the GPU's times.

Needs PyTorch (a CPU build is enough): python3 perf/torch_peers/cpu_check.py
Exit status 0 when every check holds."""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from torch_peers import attention, classifier, layernorm, matmul  # noqa: E402
from torch_peers import encoder  # noqa: E402
from torch_peers import gelu as gelu_peer  # noqa: E402 (main's loop has a `gelu`)


class WallEvent:
    """torch.cuda.Event's interface, on the wall clock."""

    def __init__(self, enable_timing=True):
        self.t = None

    def record(self):
        self.t = time.perf_counter()

    def synchronize(self):
        pass

    def elapsed_time(self, other):
        return (other.t - self.t) * 1e3


def fake_cuda(torch):
    torch.cuda.Event = WallEvent
    torch.cuda.synchronize = lambda *a, **k: None
    real_compile = torch.compile

    def compile(fn, mode=None, dynamic=None):
        return real_compile(fn, backend="aot_eager", dynamic=dynamic)

    torch.compile = compile


def args_for(op, **sizes):
    a = argparse.Namespace(B=2, T=16, C=32, OC=24, NH=4, V=61, Vp=64, gelu=False, overwrite_dinp=False,
                           repeat=3, warmup=1, runs=2, compile_modes=["default"], op=op)
    for k, v in sizes.items():
        setattr(a, k, v)
    return a


# Errors a correct row stays under at these sizes (relative L2 against float64).
LIMIT = {"fp32": 1e-5, "tf32": 1e-5, "bf16": 2e-2, "bf16-fp32grad": 2e-2}


def check(records, failures, what):
    for r in records:
        name = f"{what} {r['impl']} ({r['precision']})"
        if r.get("skipped"):
            print(f"  {name}: skipped: {r['skipped'][:100]}")
            if not r["skipped"].strip():
                failures.append(name + ": skipped without a reason")
            continue
        err = r["max_rel_err"]
        ok = err is not None and err < LIMIT[r["precision"]] and r["ms_median"] > 0
        if r.get("valid") is False:
            ok = False
        if r.get("runs") != 2 and "kernels" not in r["impl"]:
            ok = False  # --runs 2: two runs' medians in the record
        print(f"  {name}: {r['ms_median']:.3f} ms, rel err {err:.1e}, valid {r.get('valid')}"
              f"{'' if ok else '  <- FAILED'}")
        if not ok:
            failures.append(name)


def main():
    import torch
    fake_cuda(torch)
    dev = torch.device("cpu")
    l2 = torch.empty(1 << 16, dtype=torch.uint8)
    failures = []
    for gelu, overwrite in ((False, False), (True, True)):
        a = args_for("matmul_backward", gelu=gelu, overwrite_dinp=overwrite)
        for p in matmul.PRECISIONS:
            check(matmul.run_precision(torch, a, p, dev, l2), failures,
                  f"matmul gelu={gelu} overwrite={overwrite}")
    a = args_for("layernorm_backward")
    for p in layernorm.PRECISIONS:
        check(layernorm.run_precision(torch, a, p, dev, l2), failures, "layernorm")
    a = args_for("classifier_backward")
    for p in classifier.PRECISIONS:
        check(classifier.run_precision(torch, a, p, dev, l2), failures, "classifier")
    for overwrite in (False, True):
        a = args_for("gelu_backward", C=35, overwrite_dinp=overwrite)
        for p in gelu_peer.PRECISIONS:
            check(gelu_peer.run_precision(torch, a, p, dev, l2), failures, f"gelu overwrite={overwrite}")
    a = args_for("encoder_backward", V=40)
    for p in encoder.PRECISIONS:
        check(encoder.run_precision(torch, a, p, dev, l2), failures, "encoder")
    a = args_for("attention_backward")
    for p in attention.PRECISIONS:
        records = attention.run_precision(torch, a, p, dev, l2)
        check(records, failures, "attention")
        timed = {r["impl"] for r in records if not r.get("skipped")}
        for want in ("peer:pytorch-sdpa-math", "peer:pytorch-compile", "peer:pytorch-llmc-style"):
            if want not in timed:
                failures.append(f"attention ({p}): no timed {want}")
    print(f"{'FAILED: ' + ', '.join(failures) if failures else 'all checks hold'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
