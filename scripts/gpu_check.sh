#!/usr/bin/env bash
# GPU check of padlint's runtime checker: CUDA tensors, CUDA-graph capture and replay,
# poison mode, zero host synchronisations by default, and the CUDA cost of one build.
#
# Run from the repository root on a machine with a CUDA GPU and a CUDA build of torch:
#     bash scripts/gpu_check.sh            # about 1-3 minutes once torch is installed
# PY=/path/to/python overrides the interpreter (default: .venv/bin/python, else python3).
# Exit status 0 only when every step passed.  See docs/runtime.md ("GPU check").
set -uo pipefail
cd "$(dirname "$0")/.."

PY=${PY:-}
if [ -z "$PY" ]; then
    if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"   # works without `pip install -e .`
export PADLINT_RUNTIME=off                             # the tests install their own hooks

status=0
step() {
    echo
    echo "=== $1"
    shift
    if ! timeout 300 "$@"; then
        echo "!!! FAILED: $*"
        status=1
    fi
}

step "environment" "$PY" -c '
import sys, torch
print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)
assert torch.cuda.is_available(), "torch.cuda.is_available() is False: not a GPU machine or a CPU build of torch"
print("device", torch.cuda.get_device_name())
import pytest, hypothesis, numpy  # noqa: F401  (test dependencies)
'
[ $status -eq 0 ] || { echo "environment not usable; stopping"; exit 2; }

# The pytest-plugin and vLLM-plugin tests need padlint's entry points (pytest11,
# vllm.general_plugins), i.e. an installed dist-info.  A device machine may have torch
# but neither padlint nor its build backend nor a network: then write a minimal
# dist-info (name, version, the entry points read from pyproject.toml) in the
# repository root, which those tests put on PYTHONPATH, and remove it at exit.
if ! "$PY" -c 'import importlib.metadata as m; m.distribution("padlint")' 2>/dev/null; then
    DI=$("$PY" - <<'PYEOF'
import pathlib, tomllib
project = tomllib.loads(pathlib.Path("pyproject.toml").read_text())["project"]
di = pathlib.Path(f"{project['name']}-{project['version']}.dist-info")
di.mkdir(exist_ok=True)
(di / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
groups = project.get("entry-points", {})
(di / "entry_points.txt").write_text("".join(
    f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n" for group, eps in groups.items()))
print(di)
PYEOF
)
    trap 'rm -rf "$DI"' EXIT
    echo "padlint not installed: wrote $DI for the entry-point tests (removed at exit)"
fi

# 1. the CUDA tests: deferred/sync policies, capture skips, replay checks, poison under graphs, and
#    (issue 10) the kernel launches of one metadata object (<= 5, profiler), a replay whose metadata
#    holds a new storage under a real capture, the finite default float poison sentinel
step "pytest -m cuda (tests/runtime/test_cuda.py)" \
    "$PY" -m pytest tests/runtime/test_cuda.py -m cuda -q -rs -p no:cacheprovider
# 1b. the CPU op count of the same device code path, for comparison with 1's profiler count
step "pytest tests/runtime/test_device_cost.py" \
    "$PY" -m pytest tests/runtime/test_device_cost.py -q -p no:cacheprovider
# 2. the rest of the runtime suite on this machine (CPU paths, hooks, plugin subprocesses)
step "pytest tests/runtime (all)" \
    "$PY" -m pytest tests/runtime -q -p no:cacheprovider -x
# 3. cost on CUDA: deferred (default, no sync) and sync (one per build)
step "benchmark --cuda --cuda-policy deferred" \
    "$PY" benchmarks/runtime_bench.py --cuda --cuda-policy deferred --reps 200 --blocks 3
step "benchmark --cuda --cuda-policy sync" \
    "$PY" benchmarks/runtime_bench.py --cuda --cuda-policy sync --reps 200 --blocks 3
# 4. CPU numbers on the same machine, for comparison with docs/runtime.md
step "benchmark (CPU)" "$PY" benchmarks/runtime_bench.py --reps 200 --blocks 3

echo
if [ $status -eq 0 ]; then echo "GPU check: all steps passed"; else echo "GPU check: some steps FAILED"; fi
exit $status
