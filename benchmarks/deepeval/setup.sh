#!/usr/bin/env bash
# Creates benchmarks/deepeval/.venv: DeepEval in its own virtual environment, never a dependency
# of offline-scorer, for the side-by-side benchmark, whose DeepEval judge loads the same GGUF
# with llama-cpp-python. Rather than build llama-cpp-python again (about 11 minutes on 2 cores),
# the venv reads the packages of the interpreter offline-scorer is installed in through a .pth
# file naming that interpreter's site-packages: unlike --system-site-packages, which reaches
# the base interpreter's packages, this works when that interpreter is itself a venv's. Run from
# anywhere:
#
#     bash benchmarks/deepeval/setup.sh
#
# PYTHON=/path/to/python3 picks the interpreter (default: python3, the one offline-scorer and
# llama-cpp-python are installed in).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON="${PYTHON:-python3}"
"$PYTHON" -c "import llama_cpp" || {
    echo "error: $PYTHON cannot import llama_cpp; run scripts/setup first" >&2
    exit 1
}
if [ ! -x "$HERE/.venv/bin/python" ]; then
    "$PYTHON" -m venv "$HERE/.venv"
fi
"$HERE/.venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    -r "$HERE/requirements.txt"
# after the install, so DeepEval's own pins were resolved in its venv first
"$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' \
    > "$("$HERE/.venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/offline-scorer-host.pth"
DEEPEVAL_TELEMETRY_OPT_OUT=YES "$HERE/.venv/bin/python" -c \
    "import deepeval, llama_cpp; print('deepeval', deepeval.__version__, '| llama-cpp-python', llama_cpp.__version__)"
