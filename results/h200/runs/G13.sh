#!/bin/bash
# GPU call G13, right after G12 on the same machine (an H200; G12's pack):
# matmul_forward ± --gelu, fp32 and bf16: PyTorch's rows (torch_baseline.py)
# imported into llmk-perf's call-time table, then llmk's device time.
# Output: $OUT/g13.tar.gz.
set -u
R=$PWD; O=/tmp/o13; mkdir -p /tmp/p $O
[ -x /tmp/p/bin/llmk-perf ] || (cd /tmp/p && tar xJf $R/.gpu-carry/g12.tar.xz)
export LD_LIBRARY_PATH=/tmp/p/lib:/usr/local/cuda/lib64 OMP_PROC_BIND=false PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv | tee $O/machine.txt
save() { tar czf $OUT/g13.tar.gz -C $O .; }
for g in "" --gelu; do
  n=matmul_forward${g:+-gelu}
  timeout 100 python3 $R/perf/torch_baseline.py matmul_forward $g --precision all \
    --json $O/torch-$n.json > $O/torch-$n.txt 2>&1
  i=; [ -s $O/torch-$n.json ] && i="--import $O/torch-$n.json"
  timeout 60 /tmp/p/bin/llmk-perf matmul_forward $g --impl cublaslt --backend cuda --precision all \
    --budget 0.5 $i --json $O/$n.json > $O/$n.txt 2>/dev/null
  timeout 60 /tmp/p/bin/llmk-perf matmul_forward $g --impl cublaslt --backend cuda --precision all \
    --budget 0.5 --device-time --no-peers --json $O/$n-device.json > $O/$n-device.txt 2>/dev/null
  echo "=== $n"; grep -hE "^[a-z_:-]+\*? +Cuda" $O/$n.txt $O/$n-device.txt | cut -c1-120; save
done
