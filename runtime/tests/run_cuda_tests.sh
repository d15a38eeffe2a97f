#!/bin/sh
# Runs zero-cuda-runtime-test: one rank alone and under mpirun, all GPUs of
# the machine as ranks when there are several, and the watchdog ending a
# job whose last rank never joins a collective. Prints SKIP and succeeds
# where no GPU is listed.
#
#   runtime/tests/run_cuda_tests.sh [path/to/zero-cuda-runtime-test]
set -eu
BIN=${1:-build/bin/zero-cuda-runtime-test}
N=0
if command -v nvidia-smi >/dev/null 2>&1; then
  N=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
fi
if [ "$N" -eq 0 ]; then
  exec "$BIN"
fi
MPIRUN="mpirun --bind-to none"
if [ "$(id -u)" -eq 0 ]; then
  MPIRUN="$MPIRUN --allow-run-as-root"
fi

echo "== 1 rank"
"$BIN"
echo "== 1 rank under mpirun"
$MPIRUN -np 1 "$BIN"
if [ "$N" -gt 1 ]; then
  echo "== $N ranks"
  $MPIRUN -np "$N" "$BIN"
  echo "== watchdog: the last of $N ranks never joins (timeout 20 s)"
  log=$(mktemp)
  start=$(date +%s)
  if ZERO_RT_NCCL_TIMEOUT_S=20 ZERO_CUDA_TEST_HANG=1 \
      timeout 180 $MPIRUN -np "$N" -x ZERO_RT_NCCL_TIMEOUT_S \
      -x ZERO_CUDA_TEST_HANG "$BIN" >"$log" 2>&1; then
    cat "$log"
    echo "FAILED: the job did not fail"
    exit 1
  fi
  took=$(( $(date +%s) - start ))
  if ! grep -q "all_reduce failed: did not complete within 20 s" "$log"; then
    cat "$log"
    echo "FAILED: no timeout error line"
    exit 1
  fi
  if [ "$took" -ge 170 ]; then
    echo "FAILED: the job took $took s to end"
    exit 1
  fi
  grep "did not complete" "$log" | head -1
  echo "PASS: the job ended after $took s"
  rm -f "$log"
fi
