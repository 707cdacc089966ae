#!/usr/bin/env bash
# Creates bench/deepeval/.venv: DeepEval in its own virtual environment, never a dependency of
# offline-scorer. --system-site-packages lets it see the llama-cpp-python already built for the
# project (rebuilding it takes about 11 minutes on 2 cores). Run from anywhere:
#
#     bash bench/deepeval/setup.sh
#
# PYTHON=/path/to/python3 picks the interpreter (default: python3, the one offline-scorer and
# llama-cpp-python are installed in).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON="${PYTHON:-python3}"
"$PYTHON" -c "import llama_cpp" || {
    echo "error: $PYTHON cannot import llama_cpp; install offline-scorer[live] first" >&2
    exit 1
}
if [ ! -x "$HERE/.venv/bin/python" ]; then
    "$PYTHON" -m venv --system-site-packages "$HERE/.venv"
fi
"$HERE/.venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    -r "$HERE/requirements.txt"
DEEPEVAL_TELEMETRY_OPT_OUT=YES "$HERE/.venv/bin/python" -c \
    "import deepeval, llama_cpp; print('deepeval', deepeval.__version__, '| llama-cpp-python', llama_cpp.__version__)"
