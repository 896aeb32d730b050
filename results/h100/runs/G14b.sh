#!/bin/bash
# GPU call G14b, right after G14 on the same warm H100 (G14's pack): the
# forward operations' Cuda tests that G14's 200 s limit cut short (inside
# matmul_forward's Large tests), in three filters, matmul_forward's without
# Large. Output: $OUT/suite-*.log.
set -u; mkdir -p /tmp/p; [ -x /tmp/p/bin/llmk_tests_cuda ] || (cd /tmp/p && tar xJf $PWD/.gpu-carry/g14.tar.xz)
export LD_LIBRARY_PATH=/tmp/p/lib:/usr/local/cuda/lib64 OMP_PROC_BIND=false LLMK_EXPECT_GPU=1
nvidia-smi --query-gpu=name --format=csv,noheader
for F in 'residual_forward/*:ResidualForward*:gelu_forward/*:GeluForward*:GeluBackwardInPlace*' \
         'layernorm_forward/*:encoder_forward/*' 'matmul_forward/*:-*Large*'; do
  timeout 130 /tmp/p/bin/llmk_tests_cuda --gtest_brief=1 --gtest_filter="$F" > /tmp/s.log 2>&1
  echo "=== $F exit $?"; tail -4 /tmp/s.log; cp /tmp/s.log $OUT/suite-$(echo $F | cut -c1-12 | tr '/*:' '___').log
done
