#!/usr/bin/env bash
# Build the CUDA configuration on this machine (no GPU needed) and pack what a
# GPU machine without network access needs into one folder:
#   bin/   the test binaries, llmk-perf and llmk-gpt2-backward (stripped)
#   lib/   the shared libraries they need that a CUDA image may lack (OpenBLAS
#          and its Fortran runtime, libgomp, libstdc++); the CUDA libraries
#          (cudart, cuBLAS, cuBLASLt) are the GPU machine's own
#   torch_baseline.py and its torch_peers/, gpt2_torch.py, run.sh
# There, `bash <bundle>/run.sh` runs the whole test suite (large tests too),
# a compute-sanitizer pass and the perf driver; see docs/gpu.md.
#
# usage: scripts/gpu-bundle.sh [--out DIR] [--kokkos 3.4.01|4.6.01]
#   --out     default .gpu-bundle (git-ignored)
#   --kokkos  the Kokkos version to build against (default 3.4.01)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

out="$LLMK_ROOT/.gpu-bundle"
version=$LLMK_KOKKOS_DEFAULT
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=$2; shift 2 ;;
    --out=*) out=${1#*=}; shift ;;
    --kokkos) version=$2; shift 2 ;;
    --kokkos=*) version=${1#*=}; shift ;;
    *) llmk_die "gpu-bundle.sh: unknown argument '$1'" ;;
  esac
done
llmk_check_kokkos_version "$version"

llmk_setup_and_build cuda "$version"
rm -rf "$out" && mkdir -p "$out/bin" "$out/lib"
for exe in "$LLMK_BUILD_DIR"/tests/llmk_tests_* "$LLMK_BUILD_DIR"/perf/llmk-perf \
           "$LLMK_BUILD_DIR"/examples/gpt2/llmk-gpt2-backward; do
  [ -x "$exe" ] || continue
  strip --strip-unneeded -o "$out/bin/$(basename "$exe")" "$exe"
  # Copy the non-CUDA, non-libc shared libraries the binary links to.
  ldd "$exe" | awk '/=> \// {print $3}' | while read -r lib; do
    case $(basename "$lib") in
      libopenblas*|libgfortran*|libquadmath*|libgomp*|libstdc++*|libgcc_s*)
        cp -nL "$lib" "$out/lib/" ;;
    esac
  done
done
cp "$LLMK_ROOT/perf/torch_baseline.py" "$out/"
cp "$LLMK_ROOT/examples/gpt2/gpt2_torch.py" "$out/"  # beside torch_peers/, which it imports
mkdir -p "$out/torch_peers" && cp "$LLMK_ROOT"/perf/torch_peers/*.py "$out/torch_peers/"
cp "$LLMK_ROOT/scripts/gpu-run.sh" "$out/run.sh"
chmod +x "$out/run.sh"
llmk_log "bundle in $out ($(du -sh "$out" | cut -f1)):"
ls -l "$out/bin" "$out/lib" >&2
