#!/bin/bash
# GPU call G7, after G6 on the same warm machine: (1) GPT-2 124M's whole
# backward on the GPU, bf16, 3144c74 (bin/) and 2c787ce (bin-before/, the
# last build measured before matmul_backward moved onto its spec.hpp)
# alternately, twice, and fp32 once each; (2) on the host's 16 cores
# (OMP_NUM_THREADS=16, bound): llmk-perf gelu_forward and layernorm_forward
# --backend openmp beside PyTorch's CPU rows (torch_baseline.py --device
# cpu). .gpu-carry/g7.tar.xz (G6's pack).
# Output: $OUT/g7.tar.gz, written after each step.
set -u
R=$PWD; O=/tmp/o7; mkdir -p /tmp/p $O && cd /tmp/p && [ -x /tmp/p/bin/llmk-perf ] ||
  tar xJf $R/.gpu-carry/g7.tar.xz
export LD_LIBRARY_PATH=/tmp/p/lib:/usr/local/cuda/lib64 OMP_PROC_BIND=false PYTHONUNBUFFERED=1
save() { tar czf $OUT/g7.tar.gz -C $O .; }
t0=$SECONDS
timeout 150 python3 $R/examples/gpt2/gpt2_torch.py --config 124M --out /tmp/g --repeat 10 --no-compile 2>&1 | tail -3
cp /tmp/g/times.json $O/gpt2-torch-times.json 2>/dev/null
g() { echo "=== $1 $2"; timeout 40 /tmp/p/$1/llmk-gpt2-backward --input /tmp/g/gpt2.bin --precision $2 \
        --repeats 20 2>&1 | grep -v "^grad\."; }
{ g bin bf16; g bin-before bf16; g bin bf16; g bin-before bf16; g bin fp32; g bin-before fp32; } \
  > $O/gpt2-before-after.txt 2>&1
grep -E "^===|no fences|within|exceed" $O/gpt2-before-after.txt
echo "gpt2: $((SECONDS - t0)) s"; save
export OMP_NUM_THREADS=16 OMP_PROC_BIND=spread OMP_PLACES=cores OPENBLAS_CORETYPE=SkylakeX
{ lscpu | grep -E "Model name|^CPU\(s\)|MHz|L2|L3"; date -u; } > $O/host-machine.txt 2>&1
for op in gelu_forward layernorm_forward; do
  c=768; [ $op = gelu_forward ] && c=3072
  timeout 120 python3 $R/perf/torch_baseline.py $op --device cpu --threads 16 --C $c --precision all \
    --json $O/cpu-torch-$op.json > $O/cpu-torch-$op.txt 2>&1
  tail -4 $O/cpu-torch-$op.txt; save
  i=; [ -s $O/cpu-torch-$op.json ] && i="--import $O/cpu-torch-$op.json"
  timeout 100 /tmp/p/host/llmk-perf $op --backend openmp --threads 16 --precision all --budget 1 $i \
    --json $O/cpu-$op.json > $O/cpu-$op.txt 2>/dev/null
  echo "=== cpu $op (exit $?)"; grep -E "^[a-z_:-]+ +OpenMP|^peer" $O/cpu-$op.txt | cut -c1-150; save
done
echo "all: $((SECONDS - t0)) s"; save
