#!/usr/bin/env bash
# The GPU check of issue 10, as one prepared script: about 6-8 minutes on one CUDA GPU.
#   FEDLIB_DATA=/path/to/data bash benchmarks/device_check.sh [--rounds 20]
# Prints one line per check; exits non-zero if any check failed. Record the output with the
# device name in benchmarks/README.md ("CUDA" section).
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
[ -x "$PY" ] || PY=python3
ROUNDS=20
[ "${1:-}" = "--rounds" ] && ROUNDS=${2:-20}
FAILED=0
step() { echo "== $*"; local t0=$SECONDS; "$@" || FAILED=1; echo "   ($((SECONDS - t0)) s)"; }
date -u; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
"$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
step "$PY" benchmarks/device_check.py stacked-equals-loop
step "$PY" -m fedlib.cli bench engine --model resnet18 --clients 10 --device cuda --repeats 3 --threads 0
step "$PY" -m fedlib.cli bench engine --model resnet18 --clients 100 --device cuda --repeats 2 --threads 0
step "$PY" benchmarks/device_check.py fedqs-resnet18 --rounds "$ROUNDS"
step "$PY" benchmarks/device_check.py resume
echo "device_check: $([ $FAILED = 0 ] && echo 'all checks passed' || echo 'SOME CHECKS FAILED')"
exit $FAILED
