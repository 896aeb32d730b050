#!/usr/bin/env bash
# PyTorch's CPU rows beside llmk's OpenMP rows, per operation: for each of
# the six operations, perf/torch_baseline.py --device cpu times PyTorch's
# backward at GPT-2 124M's CPU benchmark shapes and writes OUT/<op>-torch.json,
# then llmk-perf <op> --backend openmp --import OUT/<op>-torch.json times
# llmk's rows, prints the table with PyTorch's rows (marked *) under them and
# writes OUT/<op>-llmk.json. Both sides get the same shape, precisions and
# threads.
#
# usage: perf/torch_cpu_rows.sh OUT_DIR [--B 8] [--T 256] [--C 768] [--OC 3072]
#            [--C-gelu 3072] [--V 50257] [--Vp 50304] [--NH 12] [--ops LIST]
#            [--precision LIST] [-- torch_baseline.py options]
#   OUT_DIR      created if missing; per operation <op>-torch.json, -torch.log
#                (PyTorch's output), <op>-llmk.json, -llmk.txt (the table),
#                -llmk.log (llmk-perf's progress)
#   --B --T --C  the batch, sequence and channels (default 8, 256, 768)
#   --OC         matmul_backward's output channels (default 3072: the MLP's fc)
#   --C-gelu     gelu_backward's channels (default 3072, 4·C)
#   --V --Vp     encoder_backward's vocabulary --V; classifier_backward's --V
#                and padded --Vp (default 50257, 50304)
#   --NH         attention_backward's heads (default 12)
#   --ops        comma list (default: matmul_backward, layernorm_backward,
#                gelu_backward, encoder_backward, attention_backward,
#                classifier_backward)
#   --precision  comma list, or all (default fp32,bf16,bf16-fp32grad), each
#                operation getting those it has (bf16-fp32grad: matmul,
#                layernorm, encoder; no tf32: PyTorch has none on the CPU)
#   after --      passed to torch_baseline.py, e.g. -- --repeat 50 --llc-flush
# environment:
#   LLMK_PERF        llmk-perf (default: build/openmp/perf/llmk-perf in this repository)
#   PYTHON           a Python with PyTorch (default python3); Inductor also needs
#                    a C++ compiler (g++) for the torch.compile rows
#   OMP_NUM_THREADS  the threads of both sides (default: nproc); passed as
#                    --threads to both
#   OMP_PROC_BIND    default false, as scripts/perf.sh (OpenBLAS threads)
#   LLMK_PERF_ARGS   more llmk-perf options, e.g. "--budget 30 --impl auto"
# Exit status: 0 when every step succeeded; 1 when a step failed (the others
# still run; a summary at the end); 2 on bad arguments or a missing tool.
set -euo pipefail

usage() { sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "$0"; }
die() { echo "torch_cpu_rows.sh: $*" >&2; exit 2; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")

out="" B=8 T=256 C=768 OC=3072 CG=3072 V=50257 Vp=50304 NH=12
ops="matmul_backward,layernorm_backward,gelu_backward,encoder_backward,attention_backward,classifier_backward"
precisions="fp32,bf16,bf16-fp32grad"
torch_extra=()
while (($#)); do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --B|--T|--C|--OC|--C-gelu|--V|--Vp|--NH|--ops|--precision)
      (($# >= 2)) || die "$1 needs a value"
      case $1 in
        --B) B=$2 ;; --T) T=$2 ;; --C) C=$2 ;; --OC) OC=$2 ;; --C-gelu) CG=$2 ;;
        --V) V=$2 ;; --Vp) Vp=$2 ;; --NH) NH=$2 ;; --ops) ops=$2 ;; --precision) precisions=$2 ;;
      esac
      shift 2 ;;
    --) shift; torch_extra=("$@"); break ;;
    -*) die "unknown option $1 (--help lists them)" ;;
    *) [ -z "$out" ] || die "one OUT_DIR only (got '$out' and '$1')"; out=$1; shift ;;
  esac
done
[ -n "$out" ] || { usage >&2; die "OUT_DIR missing"; }
for n in "$B" "$T" "$C" "$OC" "$CG" "$V" "$Vp" "$NH"; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || die "sizes are whole numbers of at least 1 (got '$n')"
done

LLMK_PERF=${LLMK_PERF:-$root/build/openmp/perf/llmk-perf}
PYTHON=${PYTHON:-python3}
THREADS=${OMP_NUM_THREADS:-$(nproc)}
THREADS=${THREADS%%,*}  # OMP_NUM_THREADS may list nesting levels: the first
[[ $THREADS =~ ^[1-9][0-9]*$ ]] || die "OMP_NUM_THREADS: a number of threads, got '$THREADS'"
export OMP_NUM_THREADS=$THREADS
export OMP_PROC_BIND=${OMP_PROC_BIND:-false}
read -r -a llmk_extra <<< "${LLMK_PERF_ARGS:-}"

[ -x "$LLMK_PERF" ] || die "no llmk-perf at '$LLMK_PERF' (build it: scripts/perf.sh --backend openmp, or set LLMK_PERF)"
perf_help=$("$LLMK_PERF" --help 2>&1 || true)
[[ $perf_help == *"--backend TEXT:{"*openmp* ]] ||
  die "'$LLMK_PERF' does not run, or has no openmp backend (its --help: $(grep -m1 -e '--backend' <<< "$perf_help" || echo "${perf_help:0:200}"))"
command -v "$PYTHON" >/dev/null || die "no Python '$PYTHON' (set PYTHON)"
torch_version=$("$PYTHON" -c 'import torch; print(torch.__version__)' 2>/dev/null) ||
  die "'$PYTHON' cannot import torch (set PYTHON to an interpreter with PyTorch)"
command -v "${CXX:-g++}" >/dev/null || command -v c++ >/dev/null ||
  echo "torch_cpu_rows.sh: warning: no C++ compiler found: Inductor's torch.compile rows will be skipped rows" >&2
mkdir -p "$out"

echo "torch_cpu_rows.sh: $THREADS threads (OMP_PROC_BIND=$OMP_PROC_BIND), PyTorch $torch_version ($PYTHON), $LLMK_PERF"
echo "  shapes: B=$B T=$T C=$C (matmul OC=$OC, gelu C=$CG, encoder V=$V, classifier V=$V Vp=$Vp, attention NH=$NH); results in $out"

# The precisions asked for that an operation has (both sides have the same).
precisions_of() {
  local have=$1 p kept=()
  if [ "$precisions" = all ]; then echo "$have"; return; fi
  IFS=, read -r -a asked <<< "$precisions"
  for p in "${asked[@]}"; do
    [[ ",$have," == *",$p,"* ]] && kept+=("$p")
  done
  (IFS=,; echo "${kept[*]:-}")
}

failed=()
IFS=, read -r -a op_list <<< "$ops"
for op in "${op_list[@]}"; do
  torch_only=() llmk_only=()
  case $op in
    matmul_backward)
      shape=(--B "$B" --T "$T" --C "$C" --OC "$OC"); have=fp32,bf16,bf16-fp32grad
      torch_only=(--compile) ;;  # on the CPU: mode "default" only
    layernorm_backward) shape=(--B "$B" --T "$T" --C "$C"); have=fp32,bf16,bf16-fp32grad ;;
    gelu_backward) shape=(--B "$B" --T "$T" --C "$CG"); have=fp32,bf16 ;;
    encoder_backward)
      shape=(--B "$B" --T "$T" --C "$C" --V "$V"); have=fp32,bf16,bf16-fp32grad
      llmk_only=(--zipf) ;;  # the tokens PyTorch's records were timed with
    attention_backward) shape=(--B "$B" --T "$T" --C "$C" --NH "$NH"); have=fp32,bf16 ;;
    classifier_backward) shape=(--B "$B" --T "$T" --V "$V" --Vp "$Vp"); have=fp32,bf16 ;;
    *) die "--ops: unknown operation '$op'" ;;
  esac
  prec=$(precisions_of "$have")
  if [ -z "$prec" ]; then
    echo "== $op: skipped: none of --precision $precisions is one of its ($have)"
    continue
  fi
  torch_json="$out/$op-torch.json"
  echo
  echo "== $op ${shape[*]} --precision $prec: PyTorch on the CPU (torch_baseline.py --device cpu)"
  rm -f "$torch_json"
  rc=0
  "$PYTHON" "$here/torch_baseline.py" "$op" --device cpu --threads "$THREADS" "${shape[@]}" \
    --precision "$prec" "${torch_only[@]}" "${torch_extra[@]}" --json "$torch_json" 2>&1 |
    tee "$out/$op-torch.log" || rc=$?
  if [ "$rc" != 0 ]; then
    failed+=("$op: torch_baseline.py exit $rc (see $out/$op-torch.log)")
  fi
  if [ ! -s "$torch_json" ]; then
    failed+=("$op: torch_baseline.py wrote no $torch_json: llmk-perf not run")
    continue
  fi
  echo
  echo "== $op: llmk-perf --backend openmp, PyTorch's rows imported"
  rc=0
  "$LLMK_PERF" "$op" --backend openmp --threads "$THREADS" "${shape[@]}" --precision "$prec" \
    "${llmk_only[@]}" "${llmk_extra[@]}" --import "$torch_json" --json "$out/$op-llmk.json" \
    2> >(tee "$out/$op-llmk.log" >&2) | tee "$out/$op-llmk.txt" || rc=$?
  [ "$rc" = 0 ] || failed+=("$op: llmk-perf exit $rc (see $out/$op-llmk.log)")
done

echo
if ((${#failed[@]})); then
  echo "torch_cpu_rows.sh: ${#failed[@]} step(s) failed:"
  printf '  %s\n' "${failed[@]}"
  exit 1
fi
echo "torch_cpu_rows.sh: done: the tables are $out/*-llmk.txt, the records $out/*-llmk.json"
