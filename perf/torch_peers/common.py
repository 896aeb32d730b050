"""What every operation's PyTorch peer shares: errors against float64, the
timing (CUDA events, the L2 flushed, --runs timing runs of --repeat calls),
torch.compile of a step with its compile time apart, the compiled calls'
kernel time from torch.profiler, and the records llmk-perf --import reads.

Nothing here imports torch at module level: the caller passes it in, so that
torch_baseline.py --help works where PyTorch is not installed."""
import statistics
import time
import warnings

# The name suffix of a torch.compile mode's rows: "peer:pytorch-compile<suffix>".
COMPILE_MODE_SUFFIX = {
    "default": "",
    "reduce-overhead": "-cudagraphs",
    "max-autotune-no-cudagraphs": "-autotune",
    "max-autotune": "-autotune-cudagraphs",
}


def uses_cudagraphs(mode):
    return mode in ("reduce-overhead", "max-autotune")


def compile_impl(mode):
    return "peer:pytorch-compile" + COMPILE_MODE_SUFFIX[mode]


def rel_l2(out, ref):
    """‖out − ref‖₂ / ‖ref‖₂ in float64 (absolute when ‖ref‖₂ = 0)."""
    out, ref = out.double(), ref.double()
    norm = ref.norm().item()
    diff = (out - ref).norm().item()
    return diff / norm if norm > 0 else diff


def first_error_line(e):
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:200]


def time_calls(torch, call, l2_flush, warmup, repeat, before=None):
    """CUDA events around each call, the L2 flushed before each (untimed)."""
    for _ in range(warmup):
        if before:
            before()
        call()
    times = []
    for _ in range(repeat):
        if before:
            before()
        l2_flush.zero_()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return times


def time_runs(torch, call, l2_flush, args, before=None):
    """args.runs timing runs of args.repeat calls each (after args.warmup
    untimed calls each), one after the other: a list of per-run times (ms)."""
    return [time_calls(torch, call, l2_flush, args.warmup, args.repeat, before)
            for _ in range(args.runs)]


def spread_fields(runs):
    """The JSON fields of a row's timing runs: ms_median is the median of the
    runs' medians, ms_min the fastest call of all; with more than one run,
    each run's median and their min and max (how steady the row's time is)."""
    medians = [statistics.median(r) for r in runs]
    fields = {"ms_median": statistics.median(medians), "ms_min": min(min(r) for r in runs),
              "repeats": sum(len(r) for r in runs)}
    if len(runs) > 1:
        fields.update({"runs": len(runs), "run_medians_ms": medians,
                       "ms_median_min": min(medians), "ms_median_max": max(medians)})
    return fields


def spread_text(fields):
    """" (3 runs: medians 0.133-0.235 ms)" where there was more than one run."""
    if "runs" not in fields:
        return ""
    return (f" ({fields['runs']} runs: medians {fields['ms_median_min']:.4f}-"
            f"{fields['ms_median_max']:.4f} ms)")


def profiled_kernel_ms(torch, call, l2_flush, calls):
    """Per call, the sum of the CUDA kernels' (and memsets', memcopies') device
    times, from torch.profiler; each call after an L2 flush whose own kernels
    are recognized by name and left out. Returns (per-call ms, kernel names),
    or (None, why) when the profiler saw no kernels to go by."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    def device_events(prof):
        return sorted((e for e in prof.events() if e.device_type == DeviceType.CUDA),
                      key=lambda e: e.time_range.start)

    warnings.filterwarnings("ignore", module="torch.profiler")
    warnings.filterwarnings("ignore", module="torch.autograd.profiler")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        l2_flush.zero_()
        torch.cuda.synchronize()
    flush_names = {e.name for e in device_events(prof)}
    if not flush_names:
        return None, "torch.profiler reported no CUDA kernel for the L2 flush"
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            l2_flush.zero_()
            call()
        torch.cuda.synchronize()
    per_call, names = [], []
    for e in device_events(prof):
        if e.name in flush_names:
            per_call.append(0.0)  # a flush starts the next call
            continue
        if per_call:
            per_call[-1] += e.time_range.elapsed_us() * 1e-3
        if e.name not in names:
            names.append(e.name)
    per_call = [t for t in per_call if t > 0]
    if not per_call:
        return None, "torch.profiler reported no CUDA kernel for the calls"
    return per_call, names


def kernels_note(impl, names):
    return (f"the CUDA kernel time of {impl}'s calls, summed per call (torch.profiler; "
            f"launches and gaps excluded): {len(names)} kernels "
            f"({', '.join(n[:60] for n in names)})")


def cudagraph_skips(torch):
    """How often Inductor has decided against CUDA graphs so far (None: this
    PyTorch does not count it)."""
    try:
        from torch._dynamo.utils import counters
        return counters["inductor"]["cudagraph_skips"]
    except Exception:
        return None


def mark_step_of(torch, mode):
    """What must run before each call of a CUDA-graphed compile (None: nothing)."""
    if not uses_cudagraphs(mode):
        return None
    return getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None)


class Compiled:
    """A step under torch.compile(mode), compiled and called once.
    fn: the compiled callable (None when no candidate compiled: why says why);
    index: which of the candidates it is; compile_s: the first call's
    seconds (tracing, Inductor's code generation and autotuning, the run);
    outs: the outputs of a call after three warm ones (copies); graphs: a note on CUDA graphs, for the modes
    that use them."""

    def __init__(self, torch, candidates, mode, inputs, before=None):
        self.fn = self.index = self.compile_s = self.outs = self.why = None
        self.graphs = ""
        skips = cudagraph_skips(torch)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            for i, step in enumerate(candidates):
                torch._dynamo.reset()
                fn = torch.compile(step, mode=mode, dynamic=False)
                try:
                    if before:
                        before()
                    t0 = time.perf_counter()
                    self.outs = fn(*inputs)
                    torch.cuda.synchronize()
                    self.compile_s = time.perf_counter() - t0
                    self.fn, self.index = fn, i
                    break
                except Exception as e:  # Inductor and Dynamo raise many kinds
                    self.why = first_error_line(e)
            if self.fn is not None:
                # Warm calls (CUDA graphs: recorded here), then one to check.
                for _ in range(3):
                    if before:
                        before()
                    self.fn(*inputs)
                if before:
                    before()
                self.outs = [o.clone() for o in self.fn(*inputs)]
                torch.cuda.synchronize()
        if self.fn is not None and uses_cudagraphs(mode):
            skipped = cudagraph_skips(torch) - skips if skips is not None else None
            said = "; ".join(dict.fromkeys(str(w.message).splitlines()[0][:160] for w in seen
                                           if "cudagraph" in str(w.message).lower()))
            if skipped or said:
                self.graphs = "; Inductor skipped CUDA graphs" + (": " + said if said else "")
            elif skipped == 0:
                self.graphs = "; CUDA graphs (Inductor counted no skip)"


def compile_note(compiled):
    return (f"compiled in {compiled.compile_s:.1f} s (first call, Inductor's caches as found)"
            f"{compiled.graphs}")


def skipped_record(base, impl, why):
    """A row that was not timed, and why (llmk-perf shows it as skipped)."""
    record = dict(base)
    record.update({"impl": impl, "kind": "peer", "backend": "Cuda", "ms_median": None,
                   "ms_min": None, "repeats": 0, "gflops": None, "valid": None,
                   "max_rel_err": None, "skipped": why})
    return record
