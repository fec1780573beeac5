#!/bin/sh
# Regenerates kernels.ptx from kernels.cu (needs clang with the NVPTX back end).
set -e
cd "$(dirname "$0")"
${CLANG:-clang-16} -x cuda --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_52 -O2 -S -o kernels.ptx kernels.cu
