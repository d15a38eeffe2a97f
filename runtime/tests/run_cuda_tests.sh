#!/bin/sh
# Runs zero-cuda-runtime-test: one rank alone and under mpirun, two ranks
# sharing one GPU (collectives over MPI), all GPUs of the machine as ranks
# when there are several, and the watchdog ending a job whose last rank
# never joins a collective (over NCCL on several GPUs, over MPI on one).
# Prints SKIP and succeeds where no GPU is listed.
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

# watchdog RANKS VAR=VALUE...: runs RANKS ranks, the last of which never
# joins, with the variables given (the backend and its 20 s timeout); the
# job must fail with the timeout's error line well before the 180 s limit.
watchdog() {
  np=$1
  shift
  exports=""
  for v in "$@"; do
    exports="$exports -x ${v%%=*}"
  done
  log=$(mktemp)
  start=$(date +%s)
  if env "$@" ZERO_CUDA_TEST_HANG=1 timeout 180 $MPIRUN -np "$np" $exports \
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
}

echo "== 1 rank"
"$BIN"
echo "== 1 rank under mpirun"
$MPIRUN -np 1 "$BIN"
echo "== 2 ranks sharing GPU 0, collectives over MPI through host memory"
CUDA_VISIBLE_DEVICES=0 ZERO_CUDA_TEST_COMM=mpi \
  $MPIRUN -np 2 -x CUDA_VISIBLE_DEVICES -x ZERO_CUDA_TEST_COMM "$BIN"
echo "== watchdog over MPI: the second of 2 ranks sharing GPU 0 never joins (timeout 20 s)"
watchdog 2 CUDA_VISIBLE_DEVICES=0 ZERO_CUDA_TEST_COMM=mpi ZERO_COMM_TIMEOUT=20
if [ "$N" -gt 1 ]; then
  echo "== $N ranks"
  $MPIRUN -np "$N" "$BIN"
  echo "== watchdog: the last of $N ranks never joins (timeout 20 s)"
  watchdog "$N" ZERO_RT_NCCL_TIMEOUT_S=20
fi
