"""Cache of released vLLM and SGLang sources for padlint's real-world tests and benchmarks.

Released vLLM wheels carry both sides of the canonical bug (0.21.0 has it,
0.22.0 has the fix); SGLang 0.5.2/0.5.3 carry another, and SGLang 0.5.23 is
the mutation benchmark's second engine.  This module downloads a wheel with
pip (``pip download --no-deps --only-binary :all: PKG==V``), extracts only
``PKG/**/*.py`` into a cache directory and deletes the wheel (vLLM's are
250-340 MB; the Python sources are ~60 MB).  Nothing is written into the
repository.

Cache layout::

    $PADLINT_CORPUS_DIR (default ~/.cache/padlint-corpus)/
        vllm-0.21.0/
            .complete          written last: the extraction finished
            vllm/...           the package's .py files
        sglang-0.5.23/
            .complete
            sglang/...

Seeding: when ``PADLINT_CORPUS_SEED`` names a directory holding an already
extracted ``PKG-V/PKG/`` or a wheel ``wheels/PKG-V-*.whl`` (or
``PKG-V-*.whl``), that is used instead of the registry; a seed wheel is
never deleted.  Without a seed the code needs only pip and registry access.

Command line (from the repository root); a bare version is a vLLM version::

    python -m tests.corpus_cache fetch 0.21.0 0.22.0 0.33.0 sglang==0.5.23
    python -m tests.corpus_cache path 0.21.0
    python -m tests.corpus_cache path sglang==0.5.23
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

#: Versions used by the tests (0.21.0 buggy, 0.22.0 fixed) and the benchmark (0.33.0).
DEFAULT_VERSIONS = ("0.21.0", "0.22.0", "0.33.0")

#: SGLang versions: 0.5.2 buggy / 0.5.3 fixed (EAGLE draft `positions`), 0.5.23 for the mutation benchmark.
SGLANG_VERSIONS = ("0.5.2", "0.5.3", "0.5.23")

#: The file holding the canonical case.
RUNNER = "vllm/v1/worker/gpu_model_runner.py"

_MARKER = ".complete"
# vLLM publishes manylinux x86_64 wheels only; name the tags explicitly so
# that the download also works from a machine of another platform.
# (vLLM 0.18-0.20 are tagged manylinux_2_31; pip takes each tag with the older glibc ones below it)
_PLATFORMS = ("manylinux_2_35_x86_64", "manylinux_2_31_x86_64", "manylinux_2_28_x86_64",
              "manylinux_2_24_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")


@dataclass(frozen=True)
class Package:
    """A cached engine: its import name, a file that must exist after extraction (or one of
    ``alternatives``: a release that dropped the first), wheel platforms."""

    name: str
    sentinel: str
    platforms: tuple[str, ...] = ()
    alternatives: tuple[str, ...] = ()


#: The engines the cache knows.  SGLang publishes a pure-Python wheel (no platform tags needed).
PACKAGES = {
    # vLLM 0.34.0 removed the v1 runner: Model Runner V2 (`vllm/v1/worker/gpu/`) is the only one
    "vllm": Package("vllm", RUNNER, _PLATFORMS, ("vllm/v1/worker/gpu/model_runner.py",)),
    "sglang": Package("sglang", "sglang/srt/model_executor/model_runner.py"),
}


def _package(name: str) -> Package:
    try:
        return PACKAGES[name]
    except KeyError:
        raise CorpusError(f"unknown package {name!r} (known: {', '.join(PACKAGES)})") from None


class CorpusError(RuntimeError):
    """A version could not be fetched or extracted; the message says why."""


def cache_root() -> Path:
    """The cache directory: ``$PADLINT_CORPUS_DIR`` or ``~/.cache/padlint-corpus``."""
    env = os.environ.get("PADLINT_CORPUS_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "padlint-corpus"


def tree_dir(version: str, root: Path | None = None, package: str = "vllm") -> Path:
    """Directory of one version; its ``vllm/`` (``sglang/``) subdirectory is the package."""
    return (root or cache_root()) / f"{package}-{version}"


def is_extracted(version: str, root: Path | None = None, package: str = "vllm") -> bool:
    """True when ``version`` of ``package`` was extracted completely into the cache."""
    return (tree_dir(version, root, package) / _MARKER).is_file()


def runner_path(version: str, root: Path | None = None) -> Path:
    """Path of ``vllm/v1/worker/gpu_model_runner.py`` of a version (fetching it if needed)."""
    return ensure_vllm(version, root) / RUNNER


def ensure_vllm(version: str, root: Path | None = None, *, seed: str | None = None) -> Path:
    """Return the cache directory of vLLM ``version`` (see :func:`ensure`)."""
    return ensure("vllm", version, root, seed=seed)


def ensure_sglang(version: str, root: Path | None = None, *, seed: str | None = None) -> Path:
    """Return the cache directory of SGLang ``version`` (see :func:`ensure`)."""
    return ensure("sglang", version, root, seed=seed)


def ensure(package: str, version: str, root: Path | None = None, *, seed: str | None = None) -> Path:
    """Return the cache directory of ``package`` ``version``, fetching and extracting it if needed.

    Idempotent: a completely extracted version is returned at once.  The
    source is, in order: ``seed`` (default ``$PADLINT_CORPUS_SEED``) holding
    an extracted tree or a wheel, else ``pip download`` from the registry.
    Extraction goes to a temporary directory beside the target and is
    renamed into place, so an interrupted run leaves no half tree behind.
    Raises :class:`CorpusError`.
    """
    pkg = _package(package)
    root = root or cache_root()
    target = tree_dir(version, root, package)
    if is_extracted(version, root, package):
        return target
    root.mkdir(parents=True, exist_ok=True)
    seed = os.environ.get("PADLINT_CORPUS_SEED") if seed is None else seed
    work = Path(tempfile.mkdtemp(prefix=f".{package}-{version}-", dir=root))
    try:
        staged = work / "tree"
        staged.mkdir()
        if not (seed and _from_seed(version, Path(seed), staged, package)):
            # vLLM keeps the two-argument call (tests replace _download with a fake of that shape)
            wheel = (_download(version, work / "wheel") if package == "vllm"
                     else _download(version, work / "wheel", package))
            try:
                _extract_wheel(wheel, staged, package)
            finally:
                wheel.unlink(missing_ok=True)
        if not any((staged / f).is_file() for f in (pkg.sentinel, *pkg.alternatives)):
            raise CorpusError(f"{package} {version}: {pkg.sentinel} missing after extraction")
        (staged / _MARKER).write_text(version + "\n", encoding="utf-8")
        if target.exists():  # an incomplete earlier attempt
            shutil.rmtree(target)
        staged.rename(target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def _from_seed(version: str, seed: Path, staged: Path, package: str = "vllm") -> bool:
    """Fill ``staged`` from a seed directory; False when the seed lacks this version."""
    tree = seed / f"{package}-{version}" / package
    top = Path(_package(package).sentinel).parts[1]  # vllm/v1/..., sglang/srt/...
    if (tree / top).is_dir():
        for src in tree.rglob("*.py"):
            dst = staged / package / src.relative_to(tree)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
        return True
    for folder in (seed / "wheels", seed):
        for wheel in sorted(folder.glob(f"{package}-{version}-*.whl")):
            _extract_wheel(wheel, staged, package)
            return True
    return False


def _download(version: str, dest: Path, package: str = "vllm") -> Path:
    """``pip download`` the wheel of ``package`` ``version`` into ``dest``; return its path."""
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
           "--disable-pip-version-check", "--quiet", "-d", str(dest)]
    for tag in _package(package).platforms:
        cmd += ["--platform", tag]
    cmd.append(f"{package}=={version}")
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
    wheels = sorted(dest.glob(f"{package}-*.whl"))
    if proc.returncode != 0 or not wheels:
        raise CorpusError(f"pip download of {package}=={version} failed (exit {proc.returncode}):\n"
                          f"{proc.stderr.strip() or proc.stdout.strip()}")
    return wheels[0]


def _extract_wheel(wheel: Path, staged: Path, package: str = "vllm") -> int:
    """Extract ``PKG/**/*.py`` of ``wheel`` into ``staged``; return the number of files."""
    count = 0
    try:
        with zipfile.ZipFile(wheel) as zf:
            for info in zf.infolist():
                name = info.filename
                if info.is_dir() or not name.startswith(f"{package}/") or not name.endswith(".py"):
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
        raise CorpusError(f"{wheel}: no {package}/*.py files in it")
    return count


def parse_spec(spec: str) -> tuple[str, str]:
    """``0.21.0`` -> (vllm, 0.21.0); ``sglang==0.5.23`` or ``sglang-0.5.23`` -> (sglang, 0.5.23)."""
    for sep in ("==", "-"):
        name, found, version = spec.partition(sep)
        if found and name in PACKAGES and version:
            return name, version
    return "vllm", spec


def main(argv: list[str] | None = None) -> int:
    """Command line: ``fetch [SPEC...]`` or ``path SPEC`` (SPEC: a vLLM version or ``PKG==VERSION``)."""
    parser = argparse.ArgumentParser(prog="python -m tests.corpus_cache", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    fetch = sub.add_parser("fetch", help="download and extract vLLM / SGLang versions into the cache")
    fetch.add_argument("versions", nargs="*", default=list(DEFAULT_VERSIONS),
                       help="vLLM versions or PKG==VERSION (default: the vLLM test versions)")
    path = sub.add_parser("path", help="print the cache directory of a version (fetching it if needed)")
    path.add_argument("version")
    args = parser.parse_args(argv)
    try:
        if args.command == "fetch":
            for spec in args.versions:
                package, version = parse_spec(spec)
                cached = is_extracted(version, package=package)
                target = ensure(package, version)
                print(f"{package} {version}: {target}{' (cached)' if cached else ''}")
        else:
            print(ensure(*parse_spec(args.version)))
    except CorpusError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
