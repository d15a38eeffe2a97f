#!/bin/sh
# Runs zero-cuda-cooperative-test: on this machine's first GPU where
# nvidia-smi lists one (the hardware's shuffles, barriers and matrix
# products), and always under the host emulator, whose thread copies must
# compute the same, and which must refuse the two kernels whose threads
# diverge where they must meet.
#
#   runtime/tests/run_cooperative_tests.sh TEST KERNELS_SO EMULATOR_SO
set -eu
BIN=$1
LIB=$2
EMU=$3
if command -v nvidia-smi >/dev/null 2>&1 &&
    [ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)" -gt 0 ]; then
  echo "== on GPU 0"
  CUDA_VISIBLE_DEVICES=0 "$BIN" "$LIB"
else
  echo "SKIP: no GPU listed by nvidia-smi; the emulator's run only"
fi
echo "== under the host emulator"
emulated() {
  env LD_PRELOAD="$EMU" ZERO_CUDA_EMU_SM=80 ZERO_CUDA_EMU_POISON=1 \
    "$BIN" "$LIB" "$@"
}
emulated
# refused CASE MESSAGE: the case fails with the emulator's message.
refused() {
  log=$(mktemp)
  if emulated "$1" >"$log" 2>&1; then
    cat "$log"
    echo "FAIL $1: the emulator ran it"
    exit 1
  fi
  if ! grep -q "$2" "$log"; then
    cat "$log"
    echo "FAIL $1: no '$2'"
    exit 1
  fi
  echo "ok   $1 refused: $(grep -o "cuLaunchKernel $1.*" "$log" | head -1)"
  rm -f "$log"
}
refused diverge_barrier "32 of 64 threads ended while the others wait at a barrier"
refused diverge_shuffle "warp 0: lane 16 at its end while lane 0 is at a shuffle"
