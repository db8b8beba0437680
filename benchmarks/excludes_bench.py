"""File discovery with many excludes (not a test; prints one line).

Generated configurations list thousands of excluded paths.  Discovery
compiles the excludes once (sets for literal names and paths, one regex for
the globs), so its time must not grow with excludes x files.  This walks a
vLLM tree (from the corpus cache) with N excluded paths (half literal, half
globs, none matching) and prints the time.

    python benchmarks/excludes_bench.py [--excludes 10000] [--version 0.33.0]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from padlint.config import PathPattern
from padlint.discover import discover


def main() -> None:
    ap = argparse.ArgumentParser(allow_abbrev=False)
    ap.add_argument("--excludes", type=int, default=10_000)
    ap.add_argument("--version", default="0.33.0")
    args = ap.parse_args()
    root = Path.home() / ".cache" / "padlint-corpus" / f"vllm-{args.version}"
    if not root.is_dir():
        raise SystemExit(f"{root}: not in the corpus cache (make corpus)")
    half = args.excludes // 2
    patterns = [f"vllm/generated/mod_{i}.py" for i in range(half)]
    patterns += [f"gen_{i}_*/*.py" for i in range(args.excludes - half)]
    excludes = [PathPattern(p, root) for p in patterns]
    start = time.perf_counter()
    found = discover(["vllm"], excludes, root)
    elapsed = time.perf_counter() - start
    print(f"discover: {len(found.files)} files, {len(excludes)} excludes: {elapsed:.2f} s")


if __name__ == "__main__":
    main()
