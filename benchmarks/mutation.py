"""Mutation test of padlint on real engine code (`make mutate`).

Delete each *reset statement* (definition: ``benchmarks/resets.py``) of an
engine's graph-runner files, one at a time, run padlint on the engine's
target files, and count the deletions that padlint *notices*: some finding
(keyed by path, line, code and field, with multiplicity) that the unmutated
run did not have.  A deletion replaces the statement by ``pass`` on the same
lines, so line numbers of all other findings stay comparable.

padlint is run as a program (``python -m padlint check --format json
--exit-zero --profile P [--no-cache] [-j 1] TARGETS``, options detected from
``padlint check --help``) from the root of a private copy of the engine tree
(the directory holding ``vllm/`` or ``sglang/``), so a whole-program
analysis finds the package.  It uses whatever padlint this interpreter
imports (``--padlint CMD`` for another one) and nothing of padlint's
internals.  Each of ``-j N`` workers has its own copy of the tree; a mutated
file is restored after its run.

    python benchmarks/mutation.py                              # both engines, print a summary
    python benchmarks/mutation.py -j 2 --markdown-dir docs --json build/mutation.json
    python benchmarks/mutation.py --engine sglang-0.5.23 --limit 5

Engine trees come from the corpus cache (``tests/corpus_cache.py``, fetched
if needed) unless ``--tree DIR`` names one (one engine only).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import fnmatch
import importlib.util
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from resets import ResetSite, delete_statement, find_resets

#: Seconds one padlint run may take before the mutant is recorded as an error.
RUN_TIMEOUT_S = 600


@dataclass(frozen=True)
class Group:
    """A named set of target files: globs relative to the tree root (``**`` crosses directories)."""

    name: str
    globs: tuple[str, ...]
    excludes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Engine:
    """One engine release and its target files."""

    key: str
    package: str
    version: str
    profile: str
    groups: tuple[Group, ...]


ENGINES: dict[str, Engine] = {
    "vllm-0.33.0": Engine("vllm-0.33.0", "vllm", "0.33.0", "vllm", (
        Group("v1 runner", ("vllm/v1/worker/gpu_model_runner.py",)),
        Group("Model Runner V2", ("vllm/v1/worker/gpu/**/*.py",)),
        Group("input batch", ("vllm/v1/worker/gpu_input_batch.py",)),
        Group("block table", ("vllm/v1/worker/block_table.py",)),
        Group("attention builders", ("vllm/v1/attention/backends/*.py",)),
        Group("attention builders (MLA)", ("vllm/v1/attention/backends/mla/*.py",)),
    )),
    "sglang-0.5.23": Engine("sglang-0.5.23", "sglang", "0.5.23", "sglang", (
        Group("graph runners", ("sglang/srt/model_executor/runner/*.py",)),
        Group("input buffers", ("sglang/srt/model_executor/runner_utils/buffers.py",
                                "sglang/srt/model_executor/input_buffers.py")),
        Group("buffer registry", ("sglang/srt/model_executor/cuda_graph_buffer_registry.py",)),
        Group("speculative graph runners", ("sglang/srt/speculative/*cuda_graph_runner*.py",)),
    )),
}


@dataclass
class Mutant:
    """The outcome of deleting one reset statement."""

    site: ResetSite
    group: str
    shape: str
    noticed: bool = False
    new_findings: list[dict] = field(default_factory=list)
    lost: int = 0
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: The baseline already reports this buffer (same name in a finding's buffer or field): a deletion
    #: cannot add a finding there, whatever the engine.
    masked_by_baseline: bool = False

    def to_dict(self) -> dict:
        return {"site": self.site.to_dict(), "group": self.group, "shape": self.shape, "noticed": self.noticed,
                "new_findings": self.new_findings, "lost_findings": self.lost, "errors": self.errors,
                "masked_by_baseline": self.masked_by_baseline, "seconds": round(self.seconds, 2)}


@dataclass
class EngineReport:
    engine: Engine
    targets: list[tuple[str, str]]  # (group, relative path)
    baseline: list[dict]
    baseline_errors: list[str]
    mutants: list[Mutant]
    skipped: list[str]  # sites that could not be mutated, with why
    wall_s: float
    padlint_cmd: list[str]
    padlint_version: str

    @property
    def noticed(self) -> int:
        return sum(m.noticed for m in self.mutants)

    def to_dict(self) -> dict:
        return {
            "engine": self.engine.key, "profile": self.engine.profile, "padlint": self.padlint_version,
            "targets": [{"group": g, "path": p} for g, p in self.targets],
            "baseline": {"findings": self.baseline, "errors": self.baseline_errors},
            "resets": len(self.mutants), "noticed": self.noticed, "wall_s": round(self.wall_s, 1),
            "skipped": self.skipped, "mutants": [m.to_dict() for m in self.mutants],
        }


# --- targets and sites ---------------------------------------------------------------------------

def _match(rel: str, pattern: str) -> bool:
    """fnmatch where ``**/`` may also match no directory and ``*`` stays inside one path part."""
    if "**/" in pattern and _match(rel, pattern.replace("**/", "", 1)):
        return True
    rel_parts, pat_parts = rel.split("/"), pattern.split("/")
    return _match_parts(rel_parts, pat_parts)


def _match_parts(rel: list[str], pat: list[str]) -> bool:
    if not pat:
        return not rel
    if pat[0] == "**":
        return any(_match_parts(rel[i:], pat[1:]) for i in range(len(rel) + 1))
    return bool(rel) and fnmatch.fnmatchcase(rel[0], pat[0]) and _match_parts(rel[1:], pat[1:])


def find_targets(root: Path, engine: Engine) -> list[tuple[str, str]]:
    """(group, path relative to ``root``) of every target file, in group then path order, no repeats."""
    files = sorted(p.relative_to(root).as_posix() for p in (root / engine.package).rglob("*.py"))
    seen: set[str] = set()
    out = []
    for group in engine.groups:
        for rel in files:
            if rel in seen or not any(_match(rel, g) for g in group.globs):
                continue
            if any(_match(rel, g) for g in group.excludes):
                continue
            seen.add(rel)
            out.append((group.name, rel))
    return out


def find_sites(root: Path, targets: list[tuple[str, str]]) -> tuple[list[tuple[str, ResetSite]], list[str]]:
    """Every reset statement of the targets as (group, site); and the files that could not be read."""
    sites, problems = [], []
    for group, rel in targets:
        try:
            source = (root / rel).read_text(encoding="utf-8")
            sites += [(group, s) for s in find_resets(source, rel)]
        except (OSError, UnicodeDecodeError, SyntaxError) as e:
            problems.append(f"{rel}: {type(e).__name__}: {e}")
    return sites, problems


# --- running padlint ------------------------------------------------------------------------------

def padlint_options(cmd: list[str]) -> list[str]:
    """Options this padlint accepts that make runs independent and single-process."""
    proc = subprocess.run(cmd + ["check", "--help"], capture_output=True, text=True, check=False)
    text = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} check --help failed: {text.strip()}")
    options = []
    if "--no-cache" in text:
        options.append("--no-cache")
    if "--jobs" in text:
        options += ["-j", "1"]
    return options


def padlint_version(cmd: list[str]) -> str:
    proc = subprocess.run(cmd + ["--version"], capture_output=True, text=True, check=False)
    return (proc.stdout or proc.stderr).strip() or "?"


def finding_key(f: dict) -> tuple:
    return (f.get("path"), f.get("line"), f.get("code"), f.get("field"))


def run_padlint(cmd: list[str], options: list[str], cwd: Path, profile: str,
                paths: list[str]) -> tuple[list[dict], list[str]]:
    """Findings (dicts of padlint's JSON) and error lines of one run.  Raises RuntimeError on a run-level failure."""
    full = cmd + ["check", "--format", "json", "--exit-zero", "--profile", profile, *options, *paths]
    env = dict(os.environ, NO_COLOR="1")
    proc = subprocess.run(full, cwd=cwd, capture_output=True, text=True, check=False, timeout=RUN_TIMEOUT_S, env=env)
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise RuntimeError(f"padlint exit {proc.returncode}, no JSON: {(proc.stderr or proc.stdout).strip()[-500:]}") from None
    findings = doc.get("findings", []) if isinstance(doc, dict) else doc
    errors = [f"{e.get('path')}:{e.get('line')}: {e.get('message')}" for e in (doc.get("errors") or [])] \
        if isinstance(doc, dict) else []
    return findings, errors


def compare(baseline: list[dict], mutant: list[dict]) -> tuple[list[dict], int]:
    """Findings of ``mutant`` not in ``baseline`` (by key, with multiplicity), and how many baseline ones went."""
    base = Counter(finding_key(f) for f in baseline)
    left = Counter(base)
    new = []
    for f in mutant:
        k = finding_key(f)
        if left[k] > 0:
            left[k] -= 1
        else:
            new.append(f)
    return new, sum(left.values())


def already_reported(site: ResetSite, baseline: list[dict]) -> bool:
    """True when a baseline finding names the buffer ``site`` writes (in its buffer expression or field)."""
    if not site.buffer:
        return False
    word = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(site.buffer)}(?![A-Za-z0-9_])")
    return any(word.search(str(f.get("buffer") or "")) or f.get("field") == site.buffer for f in baseline)


def _summary(f: dict) -> dict:
    return {k: f.get(k) for k in ("path", "line", "code", "field", "sink", "buffer", "function")}


# --- the run -------------------------------------------------------------------------------------

def run_engine(engine: Engine, tree: Path, *, jobs: int = 1, padlint_cmd: list[str] | None = None,
               limit: int | None = None, only: str | None = None, log=print) -> EngineReport:
    """Mutate every reset statement of ``engine``'s targets under ``tree`` (not modified) and run padlint."""
    start = time.perf_counter()
    cmd = padlint_cmd or [sys.executable, "-m", "padlint"]
    options = padlint_options(cmd)
    version = padlint_version(cmd)
    targets = find_targets(tree, engine)
    if not targets:
        raise RuntimeError(f"{engine.key}: no target files under {tree}")
    paths = [rel for _, rel in targets]
    sites, skipped = find_sites(tree, targets)
    if only:
        sites = [(g, s) for g, s in sites if f"{s.path}:{s.line}".endswith(only) or only in s.path]
    if limit is not None:
        sites = sites[:limit]
    log(f"{engine.key}: {len(targets)} target files, {len(sites)} reset statements, {jobs} worker(s), "
        f"padlint options {' '.join(options) or '(none)'}")
    jobs = max(1, min(jobs, len(sites) or 1))
    with tempfile.TemporaryDirectory(prefix=f"padlint-mutation-{engine.key}-") as tmp:
        copies: queue.Queue[Path] = queue.Queue()
        for i in range(jobs):
            root = Path(tmp) / f"w{i}"
            shutil.copytree(tree / engine.package, root / engine.package,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            copies.put(root)
        first = copies.get()
        baseline, baseline_errors = run_padlint(cmd, options, first, engine.profile, paths)
        copies.put(first)
        log(f"{engine.key}: baseline {len(baseline)} findings, {len(baseline_errors)} errors "
            f"({time.perf_counter() - start:.1f} s)")
        sources = {rel: (tree / rel).read_text(encoding="utf-8") for rel in {s.path for _, s in sites}}

        def one(item: tuple[str, ResetSite]) -> Mutant:
            group, site = item
            mutant = Mutant(site, group, site.rows, masked_by_baseline=already_reported(site, baseline))
            try:
                mutated = delete_statement(sources[site.path], site)
            except ValueError as e:
                mutant.errors.append(f"not mutated: {e}")
                return mutant
            root = copies.get()
            target = root / site.path
            t0 = time.perf_counter()
            try:
                target.write_text(mutated, encoding="utf-8")
                findings, errors = run_padlint(cmd, options, root, engine.profile, paths)
                new, mutant.lost = compare(baseline, findings)
                mutant.new_findings = [_summary(f) for f in new]
                mutant.noticed = bool(new)
                mutant.errors = [e for e in errors if e not in baseline_errors]
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                mutant.errors.append(f"run failed: {e}")
            finally:
                target.write_text(sources[site.path], encoding="utf-8")
                copies.put(root)
                mutant.seconds = time.perf_counter() - t0
            return mutant

        done = 0
        mutants: list[Mutant] = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            for mutant in pool.map(one, sites):
                mutants.append(mutant)
                done += 1
                if done % 25 == 0 or done == len(sites):
                    log(f"{engine.key}: {done}/{len(sites)} mutants, {sum(m.noticed for m in mutants)} noticed "
                        f"({time.perf_counter() - start:.0f} s)")
    return EngineReport(engine, targets, [_summary(f) for f in baseline], baseline_errors, mutants, skipped,
                        time.perf_counter() - start, cmd, version)


# --- reports -------------------------------------------------------------------------------------

def _pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100 * a / b:.0f}%)" if b else "0/0"


def summary_table(reports: list[EngineReport]) -> str:
    lines = ["| engine | target files | reset statements | noticed | errors | wall time |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in reports:
        errs = sum(1 for m in r.mutants if m.errors)
        lines.append(f"| {r.engine.key} | {len(r.targets)} | {len(r.mutants)} | {_pct(r.noticed, len(r.mutants))} "
                     f"| {errs} | {r.wall_s:.0f} s |")
    return "\n".join(lines)


def _breakdown(mutants: list[Mutant], attr: str) -> list[str]:
    totals: Counter[str] = Counter()
    noticed: Counter[str] = Counter()
    for m in mutants:
        key = getattr(m, attr)
        totals[key] += 1
        noticed[key] += m.noticed
    return [f"| {k} | {totals[k]} | {_pct(noticed[k], totals[k])} |" for k in totals]


def _cell(text: str) -> str:
    text = text.replace("|", "\\|")
    return f"`{text}`" if "`" not in text else text


def engine_markdown(r: EngineReport) -> str:
    """The per-deletion report of one engine (docs/mutation-ENGINE.md)."""
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = [f"# Mutation test: {r.engine.key}",
           "",
           (f"Generated by `benchmarks/mutation.py` ({stamp}) with {r.padlint_version}, profile "
            f"`{r.engine.profile}`; do not edit by hand. How to run it and the definition of a reset "
            "statement: docs/mutation.md."),
           "",
           (f"**{_pct(r.noticed, len(r.mutants))} deletions noticed**; {len(r.targets)} target files, "
            f"baseline {len(r.baseline)} findings and {len(r.baseline_errors)} file errors; wall time "
            f"{r.wall_s:.0f} s."),
           "",
           "| group | reset statements | noticed |", "| --- | --- | --- |", *_breakdown(r.mutants, "group"),
           "",
           "| rows written | reset statements | noticed |", "| --- | --- | --- |", *_breakdown(r.mutants, "shape"),
           "",
           ("Rows written: `tail` `x[n:]`, `x[n:m]` (the shape of a padding reset); `prefix` `x[:n]`; "
            "`whole` a whole buffer or view; `row` one row or element (`x[i] = 0`, a vacated row); "
            "`masked` `masked_fill_`/`index_fill_`. *Already reported*: a baseline finding (in any target file) "
            "names a buffer of the same name; where it is the same buffer, that finding already covers the "
            "sink and a deletion cannot add one there (a hint for triage, matched by name only)."),
           ""]
    if r.baseline_errors:
        out += ["Baseline file errors:", "", *[f"- `{e}`" for e in r.baseline_errors], ""]
    errored = [m for m in r.mutants if m.errors]
    if errored:
        out += ["## Deletions with errors", ""]
        out += [f"- `{m.site.path}:{m.site.line}` {_cell(m.site.text)}: {'; '.join(m.errors)}" for m in errored]
        out.append("")
    for title, noticed in (("Missed deletions", False), ("Noticed deletions", True)):
        rows = [m for m in r.mutants if m.noticed == noticed]
        out += [f"## {title} ({len(rows)})", ""]
        if not rows:
            out += ["None.", ""]
            continue
        head = "| where | rows | function | statement |" + (" new findings |" if noticed else " already reported |")
        out += [head, "| --- | --- | --- | --- | --- |"]
        for m in rows:
            s = m.site
            row = f"| `{s.path}:{s.line}` | {m.shape} | `{s.function}` | {_cell(s.text)} |"
            if noticed:
                row += " " + "; ".join(f"{f['path']}:{f['line']} {f['code']} `{f['field']}`" for f in m.new_findings) + " |"
            else:
                row += f" {'yes' if m.masked_by_baseline else ''} |"
            out.append(row)
        out.append("")
    out += ["## Target files", "", *[f"- {g}: `{p}`" for g, p in r.targets], ""]
    return "\n".join(out)


# --- command line --------------------------------------------------------------------------------

def _load_corpus_cache():
    spec = importlib.util.spec_from_file_location("padlint_mutation_corpus_cache", REPO / "tests" / "corpus_cache.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", action="append", choices=sorted(ENGINES),
                    help="engine release (repeatable; default: all)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="parallel padlint runs")
    ap.add_argument("--padlint", help="padlint command (default: this Python's `-m padlint`)")
    ap.add_argument("--tree", type=Path, help="engine tree root (holding vllm/ or sglang/) instead of the cache")
    ap.add_argument("--json", type=Path, help="write the full report as JSON here")
    ap.add_argument("--markdown-dir", type=Path, help="write mutation-ENGINE.md files here")
    ap.add_argument("--limit", type=int, help="only the first N reset statements (for trying it out)")
    ap.add_argument("--only", help="only reset statements whose PATH:LINE ends with this, or in this path")
    args = ap.parse_args(argv)
    keys = args.engine or list(ENGINES)
    if args.tree and len(keys) != 1:
        ap.error("--tree needs exactly one --engine")
    padlint_cmd = args.padlint.split() if args.padlint else None
    reports = []
    for key in keys:
        engine = ENGINES[key]
        tree = args.tree or _load_corpus_cache().ensure(engine.package, engine.version)
        report = run_engine(engine, tree, jobs=args.jobs, padlint_cmd=padlint_cmd, limit=args.limit, only=args.only,
                            log=lambda msg: print(msg, file=sys.stderr, flush=True))
        reports.append(report)
        if args.markdown_dir:
            args.markdown_dir.mkdir(parents=True, exist_ok=True)
            (args.markdown_dir / f"mutation-{key}.md").write_text(engine_markdown(report), encoding="utf-8")
    print(summary_table(reports))
    for r in reports:
        missed = [m for m in r.mutants if not m.noticed]
        print(f"\n{r.engine.key}: {len(missed)} missed deletions")
        for m in missed:
            print(f"  {m.site.path}:{m.site.line}  [{m.shape}] {m.site.function}: {m.site.text[:100]}"
                  + (f"  ERROR {m.errors[0][:120]}" if m.errors else ""))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"reports": [r.to_dict() for r in reports]}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
