"""classifier_backward's PyTorch peer (torch_baseline.py classifier_backward):
the backward of F.cross_entropy over logits[..., :V] (the vocabulary V of the
padded rows of Vp), eager and under torch.compile, on llmk-perf's shapes;
records for llmk-perf --import.

  peer:pytorch-eager    autograd's backward of F.cross_entropy(logits[..., :V],
                        targets) (mean over the B·T positions: dloss = 1/(B·T)),
                        the forward done once outside the timed region: the
                        log-softmax and NLL backward kernels and the padded
                        gradient (zeros in [V, Vp)), in the logits' dtype
  peer:pytorch-compile  torch.compile of the explicit backward, what llmk
                        computes: the losses (−log softmax at the target) and
                        dlogits = (softmax − onehot)/(B·T), padded with zeros
  peer:pytorch-compile-kernels  its CUDA kernel time from torch.profiler
The bytes behind GB/s are llmk-perf's (the reference's Shape::bytes)."""
from .common import (Compiled, compile_impl, compile_note, kernels_note, mark_step_of,
                     profiled_kernel_ms, rel_l2, skipped_record, spread_fields, spread_text,
                     time_runs)

PRECISIONS = ["fp32", "bf16"]
COMPILE_MODES = ["default"]


def cls_bytes(B, T, Vp, precision):
    """llmk-perf's bytes: the logits read and written once, the targets read."""
    return 2 * B * T * Vp * (2 if precision == "bf16" else 4) + 4 * B * T


class ClsProblem:
    """logits 4·x, x uniform in [-1, 1) (as llmk's problems: the same
    distribution, not the same values), padded columns NaN (never to reach a
    result); targets uniform in [0, V)."""

    def __init__(self, torch, args, precision, dev):
        B, T, V, Vp = args.B, args.T, args.V, args.Vp
        gen = torch.Generator(device=dev).manual_seed(0)
        dtype = torch.bfloat16 if precision == "bf16" else torch.float32
        x = (torch.rand(B, T, Vp, device=dev, generator=gen) * 8 - 4)
        x[..., V:] = float("nan")
        self.logits = x.to(dtype)
        self.targets = torch.randint(0, V, (B, T), device=dev, generator=gen)
        self.V, self.Vp = V, Vp

    def reference(self):
        """dlogits and losses in float64 from the very logits."""
        import torch
        x = self.logits[..., :self.V].double()
        logp = torch.log_softmax(x, -1)
        M = self.targets.numel()
        t = self.targets.unsqueeze(-1)
        losses = -logp.gather(-1, t).squeeze(-1)
        d = logp.exp()
        d.scatter_add_(-1, t, -torch.ones_like(t, dtype=d.dtype))
        pad = torch.zeros(*d.shape[:-1], self.Vp - self.V, dtype=d.dtype, device=d.device)
        return torch.cat([d / M, pad], -1), losses


def explicit_step(torch, V, Vp):
    """losses and dlogits = (softmax − onehot)/(B·T), padded, in the logits' dtype."""
    F = torch.nn.functional

    def step(logits, targets):
        x = logits[..., :V].float()
        logp = torch.log_softmax(x, -1)
        losses = -logp.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        d = (logp.exp() - F.one_hot(targets, V).float()) / targets.numel()
        return F.pad(d, (0, Vp - V)).to(logits.dtype), losses

    return step


def cls_base(args, precision):
    return {"precision": precision, "B": args.B, "T": args.T, "V": args.V, "Vp": args.Vp,
            "dloss_per_position": False, "no_target_check": False, "gbs": None}


def cls_record(torch, args, precision, impl, runs, errors, note, **extra):
    fields = spread_fields(runs)
    med = fields["ms_median"]
    nbytes = cls_bytes(args.B, args.T, args.Vp, precision)
    record = {"impl": impl, "kind": "peer", "backend": "Cuda", **cls_base(args, precision),
              **fields, "gflops": None,
              "gbs": nbytes / (med * 1e-3) / 1e9 if med > 0 else None,
              "valid": None, "max_rel_err": max(errors.values()),
              "dlogits_rel_err": errors["dlogits"], "losses_rel_err": errors.get("losses"),
              "note": f"torch {torch.__version__}, {note}; errors measured, not judged"}
    record.update(extra)
    print(f"{impl} classifier backward {args.B}x{args.T}x{args.V}/{args.Vp} {precision}: median "
          f"{med:.4f} ms, min {fields['ms_min']:.4f} ms, {record['gbs'] or 0:.1f} GB/s"
          f"{spread_text(fields)}, rel err " +
          " ".join(f"{k} {v:.1e}" for k, v in errors.items() if v is not None))
    return record


def cls_skipped(args, precision, impl, why):
    print(f"{impl} classifier backward {precision}: skipped: {why}")
    return skipped_record(cls_base(args, precision), impl, why)


def run_precision(torch, args, precision, dev, l2_flush):
    F = torch.nn.functional
    p = ClsProblem(torch, args, precision, dev)
    ref_dlogits, ref_losses = p.reference()
    V, Vp = args.V, args.Vp
    records = []

    # Eager: autograd's backward only, the forward once before.
    leaf = p.logits.clone().requires_grad_(True)
    loss = F.cross_entropy(leaf[..., :V].reshape(-1, V), p.targets.reshape(-1))

    def backward():
        return torch.autograd.grad(loss, leaf, retain_graph=True)[0]

    g = backward()
    errors = {"dlogits": rel_l2(g, ref_dlogits), "losses": None}
    del g
    runs = time_runs(torch, backward, l2_flush, args)
    errors_shown = {k: v for k, v in errors.items() if v is not None}
    records.append(cls_record(
        torch, args, precision, "peer:pytorch-eager", runs, errors_shown,
        f"autograd's backward of F.cross_entropy(logits[..., :V]) (mean), the forward untimed; "
        f"{'bfloat16' if precision == 'bf16' else 'float32'} logits; the losses are the "
        f"forward's (not timed here)"))
    del loss, leaf

    for mode in args.compile_modes:
        impl = compile_impl(mode)
        before = mark_step_of(torch, mode)
        compiled = Compiled(torch, [explicit_step(torch, V, Vp)], mode, (p.logits, p.targets),
                            before)
        if compiled.fn is None:
            records.append(cls_skipped(args, precision, impl, compiled.why))
            continue
        errors = {"dlogits": rel_l2(compiled.outs[0], ref_dlogits),
                  "losses": rel_l2(compiled.outs[1], ref_losses)}
        compiled.outs = None
        runs = time_runs(torch, lambda: compiled.fn(p.logits, p.targets), l2_flush, args, before)
        how = (f"torch.compile(mode=\"{mode}\") of the explicit backward (losses, dlogits = "
               f"(softmax − onehot)/(B·T) padded with zeros, into new tensors)")
        records.append(cls_record(torch, args, precision, impl, runs, errors,
                                  f"{how}; {compile_note(compiled)}", compile_s=compiled.compile_s))
        kernel_times, names = profiled_kernel_ms(torch, lambda: compiled.fn(p.logits, p.targets),
                                                 l2_flush, min(args.repeat, 50))
        if kernel_times is None:
            records.append(cls_skipped(args, precision, impl + "-kernels", names))
            continue
        records.append(cls_record(torch, args, precision, impl + "-kernels", [kernel_times], errors,
                                  kernels_note(impl, names), compile_s=compiled.compile_s))
    return records
