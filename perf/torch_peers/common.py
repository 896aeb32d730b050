"""What every operation's PyTorch peer shares: errors against float64, the
timing (--runs timing runs of --repeat calls, the cache flushed before each:
CUDA events on a GPU, the wall clock on the CPU), torch.compile of a step with
its compile time apart, the compiled calls' kernel time from torch.profiler
(CUDA only), the records llmk-perf --import reads, and what the CPU mode
says of its machine (model, last-level cache, threads).

The device being timed is the flush buffer's (`l2_flush`, passed to every
timing function): a CUDA tensor times with CUDA events, a CPU tensor (empty
when nothing is flushed) with the wall clock.

Nothing here imports torch at module level: the caller passes it in, so that
torch_baseline.py --help works where PyTorch is not installed."""
import os
import platform
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


class WallEvent:
    """torch.cuda.Event's interface on the wall clock, for work on the CPU:
    PyTorch's CPU ops return when their work is done (intra-op threads
    joined), so the time between two records is the work's."""

    def __init__(self, enable_timing=True):
        self.t = None

    def record(self):
        self.t = time.perf_counter()

    def synchronize(self):
        pass

    def elapsed_time(self, other):
        return (other.t - self.t) * 1e3


def event_class(torch, l2_flush):
    """CUDA events where the timed work is on a GPU, the wall clock on the CPU."""
    return torch.cuda.Event if l2_flush.is_cuda else WallEvent


def synchronize(torch):
    """Waits for the GPU's queued work, where one is in use (the CPU's is
    done when its call returns)."""
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def time_calls(torch, call, l2_flush, warmup, repeat, before=None):
    """Events around each call (CUDA's, or WallEvent on the CPU), the cache
    flushed before each (untimed: l2_flush written)."""
    for _ in range(warmup):
        if before:
            before()
        call()
    times = []
    Event = event_class(torch, l2_flush)
    for _ in range(repeat):
        if before:
            before()
        l2_flush.zero_()
        start, stop = Event(enable_timing=True), Event(enable_timing=True)
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
    if not l2_flush.is_cuda:
        return None, CPU_NO_KERNELS
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


# Why the -kernels rows (torch.profiler's CUDA kernel time) are skipped on the CPU.
CPU_NO_KERNELS = ("no CUDA kernels on the CPU (a -kernels row is torch.profiler's CUDA kernel "
                  "time; on the CPU the compiled row's wall clock is the time)")


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
                    synchronize(torch)
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
                synchronize(torch)
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


def timed_rows(torch, args, problem, step, error, record, skipped, what, l2_flush):
    """The rows of one precision for step(*problem.args()): peer:pytorch-eager,
    then one per compile mode in args.compile_modes (and its -kernels row
    where the mode has no CUDA graphs: the CUDA kernels' time from
    torch.profiler). error(outs): the outputs' errors against the float64
    reference; record(impl, runs, errors, note, **extra) and skipped(impl,
    why) make the records; what: the step in words, for the notes."""
    errors = error(step(*problem.args()))
    runs = time_runs(torch, lambda: step(*problem.args()), l2_flush, args)
    records = [record("peer:pytorch-eager", runs, errors, f"{what}, eager")]
    for mode in args.compile_modes:
        impl = compile_impl(mode)
        kernels_impl = None if uses_cudagraphs(mode) else impl + "-kernels"
        q = problem.cloned() if uses_cudagraphs(mode) else problem
        if uses_cudagraphs(mode) and hasattr(torch._dynamo, "mark_static_address"):
            for t in q.args():
                torch._dynamo.mark_static_address(t)
        before = mark_step_of(torch, mode)
        compiled = Compiled(torch, [step], mode, q.args(), before)
        if compiled.fn is None:
            records.append(skipped(impl, compiled.why))
            if kernels_impl:
                records.append(skipped(kernels_impl, compiled.why))
            continue
        errs = error(compiled.outs)
        compiled.outs = None
        runs = time_runs(torch, lambda: compiled.fn(*q.args()), l2_flush, args, before)
        how = f"torch.compile(mode=\"{mode}\") of {what}; {compile_note(compiled)}"
        records.append(record(impl, runs, errs, how, compile_s=compiled.compile_s))
        if kernels_impl:
            kernel_times, names = profiled_kernel_ms(torch, lambda: compiled.fn(*q.args()),
                                                     l2_flush, min(args.repeat, 50))
            if kernel_times is None:
                records.append(skipped(kernels_impl, names))
                continue
            records.append(record(kernels_impl, [kernel_times], errs, kernels_note(impl, names),
                                  compile_s=compiled.compile_s))
    return records


def skipped_record(base, impl, why):
    """A row that was not timed, and why (llmk-perf shows it as skipped)."""
    record = dict(base)
    record.update({"impl": impl, "kind": "peer", "backend": "Cuda", "ms_median": None,
                   "ms_min": None, "repeats": 0, "gflops": None, "valid": None,
                   "max_rel_err": None, "skipped": why})
    return record


# The CPU mode's machine: what torch_baseline.py --device cpu says of it.

def cpu_model():
    """/proc/cpuinfo's "model name" (as llmk-perf's header), else platform's."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and ":" in line:
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def last_level_cache_bytes():
    """The largest cache of CPU 0 (sysfs; else glibc's sysconf), and where
    the figure came from; (0, why) when neither says."""
    best, level = 0, 0
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for entry in sorted(os.listdir(base)):
            if not entry.startswith("index"):
                continue
            with open(os.path.join(base, entry, "level")) as f:
                lvl = int(f.read())
            with open(os.path.join(base, entry, "size")) as f:
                text = f.read().strip()
            units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
            size = int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)
            if (lvl, size) > (level, best):
                best, level = size, lvl
    except (OSError, ValueError, IndexError):
        best = 0
    if best:
        return best, f"L{level} of {base}"
    for name in ("SC_LEVEL3_CACHE_SIZE", "SC_LEVEL2_CACHE_SIZE"):
        try:
            size = os.sysconf(name)
        except (ValueError, OSError):
            continue
        if size and size > 0:
            return size, f"sysconf {name}"
    return 0, "no cache size in sysfs or sysconf"


def default_threads():
    """OMP_NUM_THREADS where set (its first number), else every CPU this
    process may run on."""
    env = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def cpu_parallel_backend(torch):
    """The backend column of the CPU records: ATen's parallel backend as
    torch.__config__.parallel_info() names it ("OpenMP" in PyTorch's wheels,
    spelled as llmk-perf's Kokkos::OpenMP rows are), else "CPU"."""
    try:
        for line in torch.__config__.parallel_info().splitlines():
            if line.startswith("ATen parallel backend:"):
                name = line.split(":", 1)[1].strip()
                return "OpenMP" if name.lower() == "openmp" else name or "CPU"
    except Exception:  # an older PyTorch without it
        pass
    return "CPU"
