"""padlint's speed against ruff on a real vLLM tree (`make bench`).

Not a test: it prints a table and writes nothing into the repository.

For each target, the whole `vllm/` package of a release (default 0.33.0,
from the corpus cache, fetched if needed) and its
`vllm/v1/worker/gpu_model_runner.py` alone, it runs, as subprocesses and
alternating so both see the same machine state,

    padlint check --format json --exit-zero TARGET
    ruff check --select F401 --no-cache --exit-zero TARGET

several times and reports the median wall time of each and the ratio
padlint/ruff.  Targets: whole tree within 2x ruff, the runner file alone
under 1 s (see docs/performance.md).  `--parse` adds the time libcst takes
just to parse the same files in this process (the floor for an analysis
that parses everything, and the reason for a text prefilter).  When
`benchmarks/runtime_bench.py` exists, it is run too and its output shown.

    python benchmarks/run.py [--runs 5] [--version 0.33.0] [--parse] [--no-tree]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
TIMEOUT_S = 900


def _load_corpus_cache():
    spec = importlib.util.spec_from_file_location("padlint_bench_corpus_cache", REPO / "tests" / "corpus_cache.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _tool(name: str) -> list[str] | None:
    """Command prefix for a console script: beside this interpreter first, then PATH."""
    beside = Path(sys.executable).with_name(name)
    if beside.is_file():
        return [str(beside)]
    found = shutil.which(name)
    return [found] if found else None


# padlint runs as an installed package does: with its bytecode (pip compiles it at install; an
# environment that sets PYTHONDONTWRITEBYTECODE, as this project's sandbox does, would otherwise
# charge every run ~0.1 s of compiling padlint's own modules)
BENCH_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def compile_padlint() -> None:
    """Write padlint's bytecode once (``__pycache__``, ignored by git) before anything is timed."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "padlint")], check=False,
                   capture_output=True, env=BENCH_ENV)


def time_command(cmd: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess]:
    """Run ``cmd`` once; return its wall time in seconds and the completed process."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, check=False, capture_output=True, text=True, timeout=TIMEOUT_S,
                          env=BENCH_ENV)
    return time.perf_counter() - start, proc


def count_findings(stdout: str) -> str:
    """Number of findings in padlint's JSON output, or "?" when it cannot be read."""
    try:
        doc = json.loads(stdout)
    except json.JSONDecodeError:
        return "?"
    findings = doc.get("findings") if isinstance(doc, dict) else doc
    return str(len(findings)) if isinstance(findings, list) else "?"


def bench_target(label: str, target: Path, runs: int, padlint: list[str], ruff: list[str]) -> dict:
    """Median wall times of padlint and ruff on ``target``, interleaved run by run."""
    cwd = target if target.is_dir() else target.parent
    p_cmd = padlint + ["check", "--format", "json", "--exit-zero", str(target)]
    r_cmd = ruff + ["check", "--select", "F401", "--no-cache", "--exit-zero", str(target)]
    p_times, r_times = [], []
    p_last = r_last = None
    for _ in range(runs):
        t, p_last = time_command(p_cmd, cwd)
        p_times.append(t)
        t, r_last = time_command(r_cmd, cwd)
        r_times.append(t)
    for name, proc in (("padlint", p_last), ("ruff", r_last)):
        if proc.returncode != 0:
            print(f"warning: {name} on {label} exited {proc.returncode}: {proc.stderr.strip()[-800:]}", file=sys.stderr)
    p_med, r_med = statistics.median(p_times), statistics.median(r_times)
    return {
        "label": label,
        "padlint_s": p_med,
        "ruff_s": r_med,
        "ratio": p_med / r_med if r_med > 0 else float("inf"),
        "padlint_rc": p_last.returncode,
        "findings": count_findings(p_last.stdout) if p_last.returncode == 0 else "-",
        "padlint_all": p_times,
        "ruff_all": r_times,
    }


def parse_times(files: list[Path]) -> tuple[float, int, int]:
    """Seconds libcst needs to parse ``files`` in this process; files parsed; parse failures."""
    import libcst

    failures = 0
    start = time.perf_counter()
    for path in files:
        try:
            libcst.parse_module(path.read_bytes())
        except Exception:  # noqa: BLE001 - a file libcst rejects is counted, not fatal
            failures += 1
    return time.perf_counter() - start, len(files), failures


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="runs per tool and target (median reported)")
    ap.add_argument("--version", default="0.33.0", help="vLLM release to measure on")
    ap.add_argument("--parse", action="store_true", help="also time libcst.parse_module on the same files")
    ap.add_argument("--no-tree", action="store_true", help="skip the whole-tree target")
    args = ap.parse_args(argv)

    cc = _load_corpus_cache()
    tree = cc.ensure_vllm(args.version) / "vllm"
    runner = tree.parent / cc.RUNNER
    py_files = sorted(tree.rglob("*.py"))
    print(f"padlint benchmark  {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC")
    print(f"machine: {platform.machine()} {platform.system()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(f"corpus:  vllm {args.version}: {len(py_files)} .py files, "
          f"{sum(p.stat().st_size for p in py_files) / 1e6:.1f} MB; runner {runner.stat().st_size / 1e3:.0f} kB")
    print(f"runs:    {args.runs} per tool and target, interleaved; median wall time\n")

    padlint, ruff = _tool("padlint"), _tool("ruff")
    compile_padlint()
    rows = []
    if padlint is None or ruff is None:
        print(f"skipped tool comparison: padlint={padlint} ruff={ruff} (not installed)")
    else:
        probe = subprocess.run(padlint + ["--help"], check=False, capture_output=True, text=True)
        if probe.returncode != 0:
            print(f"skipped tool comparison: `padlint --help` failed: {probe.stderr.strip()[-400:]}")
        else:
            targets = [("gpu_model_runner.py", runner)]
            if not args.no_tree:
                targets.append((f"vllm/ ({args.version})", tree))
            for label, target in targets:
                rows.append(bench_target(label, target, args.runs, padlint, ruff))
    if rows:
        print(f"{'target':<24} {'padlint s':>10} {'ruff s':>8} {'ratio':>7} {'findings':>9}  goal")
        for r in rows:
            goal = "< 1 s" if r["label"] == "gpu_model_runner.py" else "<= 2x ruff"
            met = (r["padlint_s"] < 1.0) if goal == "< 1 s" else (r["ratio"] <= 2.0)
            print(f"{r['label']:<24} {r['padlint_s']:>10.3f} {r['ruff_s']:>8.3f} {r['ratio']:>6.1f}x "
                  f"{r['findings']:>9}  {goal}: {'met' if met else 'NOT met'}")
        for r in rows:
            print(f"  {r['label']}: padlint runs {', '.join(f'{t:.3f}' for t in r['padlint_all'])}; "
                  f"ruff runs {', '.join(f'{t:.3f}' for t in r['ruff_all'])}")
        print()

    if args.parse:
        t_one, _, _ = parse_times([runner])
        t_all, n, bad = parse_times(py_files)
        print("libcst.parse_module alone (in process, one run):")
        print(f"  gpu_model_runner.py: {t_one:.3f} s")
        print(f"  vllm/ tree:          {t_all:.1f} s for {n} files ({bad} failed to parse)\n")

    runtime_bench = HERE / "runtime_bench.py"
    if runtime_bench.is_file():
        print("benchmarks/runtime_bench.py:")
        proc = subprocess.run([sys.executable, str(runtime_bench)], cwd=REPO, check=False,
                              capture_output=True, text=True, timeout=TIMEOUT_S)
        print(proc.stdout.rstrip())
        if proc.returncode != 0:
            print(f"(runtime_bench.py exited {proc.returncode}: {proc.stderr.strip()[-800:]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
