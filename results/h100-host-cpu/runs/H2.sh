#!/bin/bash
# Call H2 on the device machine's host CPU (16 cores): perf/dev/tiled_host_bench.cpp
# again with its FMA peak measured over 2·10⁷ iterations a run (H1's 2·10⁶ ran
# too short), M 2048, 5 repeats; once bound, once on 8 threads.
set -u
R=$PWD; cd /tmp; mkdir -p h2; tar xJf $R/.gpu-carry/h2.tar.xz -C h2
export OMP_PROC_BIND=spread OMP_PLACES=cores OPENBLAS_CORETYPE=SkylakeX
L() { LD_LIBRARY_PATH=/tmp/h2/lib "$@"; }
OMP_NUM_THREADS=16 L timeout 200 /tmp/h2/thb 2048 5 > $OUT/tiled-host.txt 2>&1
OMP_NUM_THREADS=8 L timeout 100 /tmp/h2/thb 64 1 2>&1 | head -1 > $OUT/peak-8-threads.txt
