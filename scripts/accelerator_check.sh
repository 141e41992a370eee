#!/usr/bin/env bash
# Issue 51's accelerator check: one JSON in under 8 minutes on a machine with one GPU.
#
#   scripts/accelerator_check.sh --prepare   # here, with the project's environment: caches MNIST-1D
#                                            # into .accel/cache (the GPU machine may lack the mnist1d package)
#   scripts/accelerator_check.sh [OUT_DIR]   # on the GPU machine, from the repository root, with .accel/
#                                            # copied along; writes OUT_DIR/accelerator-check.json (default
#                                            # OUT_DIR: $OUT if set, else ./accelerator-check) and prints it
#
# PYTHON selects the interpreter (default: python3, the one that holds a CUDA build of PyTorch).
# What it runs and reports: nasviz/bench/accelerator_check.py. Without a GPU it runs the CPU steps
# and says so in the JSON; it never asks for input.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
export PYTHONUNBUFFERED=1
export NASVIZ_CACHE_DIR="${NASVIZ_CACHE_DIR:-$PWD/.accel/cache}"

if [[ "${1:-}" == "--prepare" ]]; then
  mkdir -p "$NASVIZ_CACHE_DIR"
  "$PY" -c "from nasviz.objectives.mnist1d import generate; generate(); print('MNIST-1D cached in $NASVIZ_CACHE_DIR')"
  exit 0
fi

OUT_DIR="${1:-${OUT:-accelerator-check}}"
mkdir -p "$OUT_DIR"
"$PY" -c "import torch; print('torch', torch.__version__, 'cuda available:', torch.cuda.is_available())" >&2 || {
  echo "accelerator_check: $PY cannot import torch; set PYTHON to an interpreter with PyTorch" >&2; exit 2; }
"$PY" -m nasviz bench accelerator-check --out "$OUT_DIR" 2> >(tee "$OUT_DIR/accelerator-check.log" >&2)
