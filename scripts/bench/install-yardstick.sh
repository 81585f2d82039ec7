#!/usr/bin/env bash
# Installs the yardstick (scripts/bench/yardstick.py) into the git-ignored .vendor/yardstick: PyPI's
# rapidocr-onnxruntime, the same pinned version whose PP-OCRv4 models the learned engine uses, with
# ONNX Runtime and OpenCV (about 150 MB). Only `make bench` needs it; the product never does.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.vendor/yardstick
if "$venv/bin/python" -c "import rapidocr_onnxruntime" 2>/dev/null; then
    exit 0
fi
echo "yardstick: installing rapidocr-onnxruntime 1.4.4 into $venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check rapidocr-onnxruntime==1.4.4
