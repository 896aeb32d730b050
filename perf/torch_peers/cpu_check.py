#!/usr/bin/env python3
"""A check of torch_baseline.py's code paths without a GPU: every operation
at tiny sizes on the CPU, timed on the wall clock (common.py's WallEvent, as
--device cpu times) and torch.compile's backend replaced by "aot_eager"
(Dynamo and AOTAutograd, no Inductor code generation: nothing is compiled
with a C++ compiler; torch_baseline.py --device cpu runs the real Inductor).
Also runs torch_baseline.py --device cpu itself (gelu_backward) and checks
the JSON it writes: the CPU machine and the records' backend. Checks
that each row gives a record, that the timed rows' errors are those of their
precision, that the attention rows are judged valid, and that the rows that
cannot run on a CPU (efficient, cudnn, flash where PyTorch has no CPU
kernel for it; the profiler's kernels) are skipped with a reason. Says nothing of the GPU's times.

Needs PyTorch (a CPU build is enough): python3 perf/torch_peers/cpu_check.py
Exit status 0 when every check holds."""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from torch_peers import attention, classifier, layernorm, matmul  # noqa: E402
from torch_peers import encoder  # noqa: E402
from torch_peers import gelu as gelu_peer  # noqa: E402 (main's loop has a `gelu`)
import torch_baseline  # noqa: E402


def aot_eager_compile(torch):
    """torch.compile with the "aot_eager" backend, whatever the mode asked:
    the graphs traced and run as the compiled rows' are, no C++ compiled.
    (The timing needs no stand-in: a CPU flush buffer makes common.time_calls
    use the wall clock.)"""
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


def check_cpu_mode(failures):
    """torch_baseline.py --device cpu end to end at tiny sizes: its JSON says
    the CPU, not a GPU, and each record has the CPU's backend."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "gelu.json")
        rc = torch_baseline.main(["gelu_backward", "--device", "cpu", "--threads", "1",
                                  "--B", "2", "--T", "4", "--C", "35", "--precision", "all",
                                  "--repeat", "3", "--warmup", "1", "--json", path])
        with open(path) as f:
            out = json.load(f)
    machine, records = out["machine"], out["records"]
    print(f"  torch_baseline.py --device cpu: exit {rc}, machine {machine}, "
          f"{len(records)} records, backends {sorted({r['backend'] for r in records})}")
    if rc != 0:
        failures.append(f"torch_baseline.py --device cpu: exit {rc}")
    if set(machine) != {"cpu", "threads", "torch"} or machine["threads"] != 1:
        failures.append(f"torch_baseline.py --device cpu: machine {machine}")
    impls = {(r["impl"], r["precision"]) for r in records if not r.get("skipped")}
    for want in [(i, p) for i in ("peer:pytorch-eager", "peer:pytorch-compile")
                 for p in ("fp32", "bf16")]:
        if want not in impls:
            failures.append(f"torch_baseline.py --device cpu: no timed {want}")
    if any(r["backend"] == "Cuda" for r in records):
        failures.append("torch_baseline.py --device cpu: a record says backend Cuda")


def main():
    import torch
    aot_eager_compile(torch)
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
    check_cpu_mode(failures)
    print(f"{'FAILED: ' + ', '.join(failures) if failures else 'all checks hold'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
