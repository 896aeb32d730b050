"""classifier_forward's PyTorch peer (torch_baseline.py classifier_forward):
F.cross_entropy(logits[..., :V], targets, reduction="none") in float32 (the
losses a GPT-2 evaluation takes), eager and under torch.compile, on
llmk-perf's shapes (B×T rows of Vp, V real columns); records for llmk-perf
classifier_forward --import. The bytes behind GB/s are llmk-perf's (the
logits and targets read once, the losses written)."""
from .classifier import ClsProblem
from .common import rel_l2, skipped_record, spread_fields, spread_text, timed_rows

PRECISIONS = ["fp32", "bf16"]
COMPILE_MODES = ["default"]


def forward_bytes(args, precision):
    return args.B * args.T * (args.Vp * (2 if precision == "bf16" else 4) + 8)


def losses_step(torch, V):
    F = torch.nn.functional

    def step(logits, targets):
        x = logits[..., :V].float()
        return F.cross_entropy(x.flatten(0, 1), targets.flatten(), reduction="none"),

    return step


def base(args, precision):
    return {"precision": precision, "B": args.B, "T": args.T, "V": args.V, "Vp": args.Vp,
            "no_target_check": False}


def record(torch, args, precision, impl, runs, errors, note, **extra):
    fields = spread_fields(runs)
    med = fields["ms_median"]
    r = {"impl": impl, "kind": "peer", "backend": "Cuda", **base(args, precision), **fields,
         "gflops": None,
         "gbs": forward_bytes(args, precision) / (med * 1e-3) / 1e9 if med > 0 else None,
         "valid": None, "max_rel_err": errors["losses"], "losses_rel_err": errors["losses"],
         "note": f"torch {torch.__version__}, {note}; errors measured, not judged"}
    r.update(extra)
    print(f"{impl} classifier forward {args.B}x{args.T}x{args.V}/{args.Vp} {precision}: median "
          f"{med:.4f} ms, min {fields['ms_min']:.4f} ms{spread_text(fields)}, rel err losses "
          f"{errors['losses']:.1e}")
    return r


def skipped(args, precision, impl, why):
    print(f"{impl} classifier forward {precision}: skipped: {why}")
    return skipped_record(base(args, precision), impl, why)


class LossesProblem(ClsProblem):
    def args(self):
        return self.logits, self.targets

    def cloned(self):
        other = object.__new__(LossesProblem)
        for k, v in vars(self).items():
            setattr(other, k, v.clone() if hasattr(v, "clone") else v)
        return other


def run_precision(torch, args, precision, dev, l2_flush):
    p = LossesProblem(torch, args, precision, dev)
    ref_losses = p.reference()[1].flatten()
    types = "bfloat16 logits" if precision == "bf16" else "float32 logits"
    return timed_rows(
        torch, args, p, losses_step(torch, args.V),
        lambda outs: {"losses": rel_l2(outs[0], ref_losses)},
        lambda impl, runs, errs, note, **extra: record(torch, args, precision, impl, runs, errs,
                                                       note, **extra),
        lambda impl, why: skipped(args, precision, impl, why),
        f"F.cross_entropy(logits[..., :V].float(), reduction='none'), {types}", l2_flush)
