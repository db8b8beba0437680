"""Cache of released vLLM sources for padlint's real-world tests and benchmark.

Released vLLM wheels carry both sides of the canonical bug (0.21.0 has it,
0.22.0 has the fix).  This module downloads a wheel with pip, extracts only
``vllm/**/*.py`` into a cache directory and deletes the wheel (they are
250-340 MB; the Python sources are ~60 MB).  Nothing is written into the
repository.

Cache layout::

    $PADLINT_CORPUS_DIR (default ~/.cache/padlint-corpus)/
        vllm-0.21.0/
            .complete          written last: the extraction finished
            vllm/...           the package's .py files

Seeding: when ``PADLINT_CORPUS_SEED`` names a directory holding an already
extracted ``vllm-V/vllm/`` or a wheel ``wheels/vllm-V-*.whl`` (or
``vllm-V-*.whl``), that is used instead of the registry; a seed wheel is
never deleted.  Without a seed the code needs only pip and registry access.

Command line (from the repository root)::

    python -m tests.corpus_cache fetch 0.21.0 0.22.0 0.33.0
    python -m tests.corpus_cache path 0.21.0
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

#: Versions used by the tests (0.21.0 buggy, 0.22.0 fixed) and the benchmark (0.33.0).
DEFAULT_VERSIONS = ("0.21.0", "0.22.0", "0.33.0")

#: The file holding the canonical case.
RUNNER = "vllm/v1/worker/gpu_model_runner.py"

_MARKER = ".complete"
# vLLM publishes manylinux x86_64 wheels only; name the tags explicitly so
# that the download also works from a machine of another platform.
_PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_24_x86_64", "manylinux_2_17_x86_64",
              "manylinux2014_x86_64")


class CorpusError(RuntimeError):
    """A version could not be fetched or extracted; the message says why."""


def cache_root() -> Path:
    """The cache directory: ``$PADLINT_CORPUS_DIR`` or ``~/.cache/padlint-corpus``."""
    env = os.environ.get("PADLINT_CORPUS_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "padlint-corpus"


def tree_dir(version: str, root: Path | None = None) -> Path:
    """Directory of one version; its ``vllm/`` subdirectory is the package."""
    return (root or cache_root()) / f"vllm-{version}"


def is_extracted(version: str, root: Path | None = None) -> bool:
    """True when ``version`` was extracted completely into the cache."""
    return (tree_dir(version, root) / _MARKER).is_file()


def runner_path(version: str, root: Path | None = None) -> Path:
    """Path of ``vllm/v1/worker/gpu_model_runner.py`` of a version (fetching it if needed)."""
    return ensure_vllm(version, root) / RUNNER


def ensure_vllm(version: str, root: Path | None = None, *, seed: str | None = None) -> Path:
    """Return the cache directory of ``version``, fetching and extracting it if needed.

    Idempotent: a completely extracted version is returned at once.  The
    source is, in order: ``seed`` (default ``$PADLINT_CORPUS_SEED``) holding
    an extracted tree or a wheel, else ``pip download`` from the registry.
    Extraction goes to a temporary directory beside the target and is
    renamed into place, so an interrupted run leaves no half tree behind.
    Raises :class:`CorpusError`.
    """
    root = root or cache_root()
    target = tree_dir(version, root)
    if is_extracted(version, root):
        return target
    root.mkdir(parents=True, exist_ok=True)
    seed = os.environ.get("PADLINT_CORPUS_SEED") if seed is None else seed
    work = Path(tempfile.mkdtemp(prefix=f".vllm-{version}-", dir=root))
    try:
        staged = work / "tree"
        staged.mkdir()
        if not (seed and _from_seed(version, Path(seed), staged)):
            wheel = _download(version, work / "wheel")
            try:
                _extract_wheel(wheel, staged)
            finally:
                wheel.unlink(missing_ok=True)
        if not (staged / RUNNER).is_file():
            raise CorpusError(f"vllm {version}: {RUNNER} missing after extraction")
        (staged / _MARKER).write_text(version + "\n", encoding="utf-8")
        if target.exists():  # an incomplete earlier attempt
            shutil.rmtree(target)
        staged.rename(target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def _from_seed(version: str, seed: Path, staged: Path) -> bool:
    """Fill ``staged`` from a seed directory; False when the seed lacks this version."""
    tree = seed / f"vllm-{version}" / "vllm"
    if (tree / "v1").is_dir():
        for src in tree.rglob("*.py"):
            dst = staged / "vllm" / src.relative_to(tree)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
        return True
    for folder in (seed / "wheels", seed):
        for wheel in sorted(folder.glob(f"vllm-{version}-*.whl")):
            _extract_wheel(wheel, staged)
            return True
    return False


def _download(version: str, dest: Path) -> Path:
    """``pip download`` the wheel of ``version`` into ``dest``; return its path."""
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
           "--disable-pip-version-check", "--quiet", "-d", str(dest)]
    for tag in _PLATFORMS:
        cmd += ["--platform", tag]
    cmd.append(f"vllm=={version}")
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
    wheels = sorted(dest.glob("vllm-*.whl"))
    if proc.returncode != 0 or not wheels:
        raise CorpusError(f"pip download of vllm=={version} failed (exit {proc.returncode}):\n"
                          f"{proc.stderr.strip() or proc.stdout.strip()}")
    return wheels[0]


def _extract_wheel(wheel: Path, staged: Path) -> int:
    """Extract ``vllm/**/*.py`` of ``wheel`` into ``staged``; return the number of files."""
    count = 0
    try:
        with zipfile.ZipFile(wheel) as zf:
            for info in zf.infolist():
                name = info.filename
                if info.is_dir() or not name.startswith("vllm/") or not name.endswith(".py"):
                    continue
                parts = Path(name).parts
                if any(p in ("", ".", "..") for p in parts):
                    continue  # never write outside the staging directory
                out = staged.joinpath(*parts)
                out.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, open(out, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                count += 1
    except zipfile.BadZipFile as e:
        raise CorpusError(f"{wheel}: not a valid wheel: {e}") from None
    if count == 0:
        raise CorpusError(f"{wheel}: no vllm/*.py files in it")
    return count


def main(argv: list[str] | None = None) -> int:
    """Command line: ``fetch [VERSION...]`` or ``path VERSION``."""
    parser = argparse.ArgumentParser(prog="python -m tests.corpus_cache", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    fetch = sub.add_parser("fetch", help="download and extract vLLM versions into the cache")
    fetch.add_argument("versions", nargs="*", default=list(DEFAULT_VERSIONS))
    path = sub.add_parser("path", help="print the cache directory of a version (fetching it if needed)")
    path.add_argument("version")
    args = parser.parse_args(argv)
    try:
        if args.command == "fetch":
            for version in args.versions:
                cached = is_extracted(version)
                target = ensure_vllm(version)
                print(f"vllm {version}: {target}{' (cached)' if cached else ''}")
        else:
            print(ensure_vllm(args.version))
    except CorpusError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
