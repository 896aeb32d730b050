#!/usr/bin/env bash
# Runs the five GPT-2 (B*T = 8192) cuBLASLt algorithm sweeps documented at the top of
# perf/dev/lt_algo_sweep.cpp. Arg 1: the lt_algo_sweep binary (default ./lt_algo_sweep).
# Build: nvcc -O2 -std=c++17 -arch=sm_90 perf/dev/lt_algo_sweep.cpp -lcublasLt -lcublas -o /tmp/lt_algo_sweep
set -euo pipefail
bin=${1:-./lt_algo_sweep}
"$bin" m=3072 n=8192 k=768 transa=N transb=N lda=3072 ldb=768 ldd=3072 epilogue=dgelu label=fcproj_dinp_dgelu
"$bin" m=3072 n=8192 k=768 transa=N transb=N lda=3072 ldb=768 ldd=3072 label=fcproj_dinp_noepi
"$bin" m=768 n=768 k=8192 transa=N transb=T beta=1 lda=768 ldb=768 ldd=768 label=attproj_dweight
"$bin" m=768 n=3072 k=8192 transa=N transb=T beta=1 lda=768 ldb=3072 ldd=768 label=fc_dweight
"$bin" m=768 n=2304 k=8192 transa=N transb=T beta=1 lda=768 ldb=2304 ldd=768 label=qkv_dweight
