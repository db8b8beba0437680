"""Mutation test of padlint on real engine code (`make mutate`).

Delete each *reset statement* (definition: ``benchmarks/resets.py``) of an
engine's graph-runner files, one at a time, run padlint, and count the
deletions that padlint *notices*: some finding (keyed by path, line, code
and field, with multiplicity) that the unmutated run did not have.  A
deletion replaces the statement by ``pass`` on the same lines, so line
numbers of all other findings stay comparable.

padlint is run as a program (``python -m padlint check --format json
--exit-zero --profile P [--no-cache] [-j 1] PATHS``, options detected from
``padlint check --help``) from the root of a private copy of the engine tree
(the directory holding ``vllm/`` or ``sglang/``), so a whole-program
analysis finds the package.  ``PATHS`` by ``--mode``: ``per-file`` (default)
the mutated file alone, against a baseline of that file alone computed once;
``imports`` the file and its import neighbours among the target files;
``whole`` all the target files.  It uses whatever padlint this interpreter
imports (``--padlint CMD`` for another one) and nothing of padlint's
internals.  Each of ``-j N`` workers has its own copy of the tree; a mutated
file is restored after its run.

    python benchmarks/mutation.py                              # both engines, print a summary
    python benchmarks/mutation.py -j 2 --markdown-dir docs --json build/mutation.json
    python benchmarks/mutation.py --engine vllm-0.33.0 --group "v1 runner" --budget 600
    python benchmarks/mutation.py --from-json a.json --from-json b.json --markdown-dir docs

Engine trees come from the corpus cache (``tests/corpus_cache.py``, fetched
if needed) unless ``--tree DIR`` names one (one engine only).
"""

from __future__ import annotations

import argparse
import ast
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
import threading
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
    # 0.34.0 removed the v1 runner and the v1 input batch: Model Runner V2 is the only GPU runner
    "vllm-0.34.0": Engine("vllm-0.34.0", "vllm", "0.34.0", "vllm", (
        Group("Model Runner V2", ("vllm/v1/worker/gpu/**/*.py",)),
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
    #: Not run: the time budget (``--budget``) was spent before this deletion's turn.
    not_run: bool = False
    #: No new finding, but an existing one now reaches its sink stale on more paths ("on N paths"):
    #: the engine noticed the deletion, a user reading findings by location would not.
    more_paths: bool = False

    def to_dict(self) -> dict:
        return {"site": self.site.to_dict(), "group": self.group, "shape": self.shape, "noticed": self.noticed,
                "not_run": self.not_run, "new_findings": self.new_findings, "lost_findings": self.lost,
                "errors": self.errors, "masked_by_baseline": self.masked_by_baseline,
                "more_paths": self.more_paths, "seconds": round(self.seconds, 2)}


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
    mode: str = "whole"
    #: per-file mode: seconds of the baseline run of each target file that has reset statements
    baseline_seconds: dict[str, float] = field(default_factory=dict)

    @property
    def noticed(self) -> int:
        return sum(m.noticed for m in self.mutants)

    @property
    def more_paths(self) -> int:
        """Deletions with no new finding that add stale paths to an existing one."""
        return sum(m.more_paths and not m.noticed for m in self.mutants)

    @property
    def run(self) -> list[Mutant]:
        """The deletions measured (not those left out by the time budget)."""
        return [m for m in self.mutants if not m.not_run]

    def group_seconds(self) -> dict[str, float]:
        """padlint seconds per group: its deletions' runs plus (per-file mode) its files' baselines."""
        out: Counter[str] = Counter()
        for m in self.mutants:
            out[m.group] += m.seconds
        group_of = dict((p, g) for g, p in self.targets)
        for rel, sec in self.baseline_seconds.items():
            out[group_of[rel]] += sec
        return dict(out)

    def to_dict(self) -> dict:
        return {
            "engine": self.engine.key, "profile": self.engine.profile, "padlint": self.padlint_version,
            "mode": self.mode, "targets": [{"group": g, "path": p} for g, p in self.targets],
            "baseline": {"findings": self.baseline, "errors": self.baseline_errors,
                         # at the precision the report shows (`engine_markdown`: one decimal): a
                         # second rounding of a two-decimal value could show another digit
                         "seconds": {k: round(v, 1) for k, v in self.baseline_seconds.items()}},
            "resets": len(self.mutants), "run": len(self.run), "noticed": self.noticed,
            "more_paths": self.more_paths,
            "wall_s": round(self.wall_s, 1), "group_seconds": {k: round(v, 1) for k, v in self.group_seconds().items()},
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
    """A finding's identity: where, which rule and field, and the padded slice it names (its
    origin: PAD001 reports one finding per sink argument and origin, and the baseline's
    fingerprint includes it too)."""
    return (f.get("path"), f.get("line"), f.get("code"), f.get("field"), f.get("buffer"))


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


_PATHS = re.compile(r" on (\d+) paths\b")


def stale_path_count(f: dict) -> int:
    """How many call paths reach the finding's sink stale ("... on N paths, e.g. ..."; else 1)."""
    m = _PATHS.search(str(f.get("message") or ""))
    return int(m.group(1)) if m else 1


def grown(baseline: list[dict], mutant: list[dict]) -> list[dict]:
    """Findings of ``mutant`` whose key the baseline has, reached stale on more paths than there."""
    most: dict[tuple, int] = {}
    for f in baseline:
        k = finding_key(f)
        most[k] = max(most.get(k, 0), stale_path_count(f))
    return [f for f in mutant if finding_key(f) in most and stale_path_count(f) > most[finding_key(f)]]


def already_reported(site: ResetSite, baseline: list[dict]) -> bool:
    """True when a baseline finding names the buffer ``site`` writes (in its buffer expression or field)."""
    if not site.buffer:
        return False
    word = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(site.buffer)}(?![A-Za-z0-9_])")
    return any(word.search(str(f.get("buffer") or "")) or f.get("field") == site.buffer for f in baseline)


def _summary(f: dict) -> dict:
    return {k: f.get(k) for k in ("path", "line", "code", "field", "sink", "buffer", "function")}


# --- the run -------------------------------------------------------------------------------------

MODES = ("per-file", "imports", "whole")


def imported_modules(source: str, rel: str) -> set[str]:
    """Dotted names of the modules a file imports (``import a.b``, ``from a.b import c`` gives ``a.b``
    and ``a.b.c``; relative imports resolved against ``rel``).  Raises SyntaxError."""
    package = rel[:-3].split("/")[:-1]  # the package holding the module (``a/b/__init__.py``: ``a.b``)
    out: set[str] = set()
    for node in ast.walk(ast.parse(source, filename=rel)):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            mod = ".".join(base + (node.module.split(".") if node.module else []))
            if mod:
                out.add(mod)
                out.update(f"{mod}.{a.name}" for a in node.names if a.name != "*")
    return out


def import_graph(root: Path, targets: list[str]) -> dict[str, set[str]]:
    """For each target file, the target files it imports directly (a file that does not parse: none)."""
    def module(path: str) -> str:
        name = path[:-3].replace("/", ".")
        return name[: -len(".__init__")] if name.endswith(".__init__") else name

    mods = {module(t): t for t in targets}
    graph = {}
    for path in targets:
        try:
            names = imported_modules((root / path).read_text(encoding="utf-8"), path)
        except (OSError, UnicodeDecodeError, SyntaxError):
            names = set()
        graph[path] = {mods[m] for m in names if m in mods} - {path}
    return graph


def import_neighbours(root: Path, targets: list[str], rel: str,
                      graph: dict[str, set[str]] | None = None) -> list[str]:
    """The target files that ``rel`` imports or that import ``rel`` (directly), in ``targets`` order."""
    graph = graph if graph is not None else import_graph(root, targets)
    mine = graph.get(rel, set())
    return [t for t in targets if t != rel and (t in mine or rel in graph.get(t, set()))]


@dataclass
class FileBaseline:
    """padlint's output on one unmutated target file checked alone (per-file mode)."""

    findings: list[dict]
    errors: list[str]
    seconds: float


def run_engine(engine: Engine, tree: Path, *, jobs: int = 1, padlint_cmd: list[str] | None = None,
               limit: int | None = None, only: str | None = None, mode: str = "per-file",
               groups: list[str] | None = None, budget_s: float | None = None, rows: list[str] | None = None,
               log=print) -> EngineReport:
    """Mutate every reset statement of ``engine``'s targets under ``tree`` (not modified) and run padlint.

    ``mode`` ``per-file``: a deletion in F is judged by a run of padlint on F alone (from the tree
    root, so the rest of the package is context, as in a pre-commit run) against a baseline run on
    F alone, computed once per file.  ``imports``: the same with F and its import neighbours among
    the engine's target files (those F imports and those that import F, :func:`import_neighbours`)
    checked together, so a sink in one of them is reported.  ``whole``: every run checks all the
    targets at once.
    ``groups``: only these groups, in this order (default: all, in the engine's order).
    ``budget_s``: start no padlint run after this many seconds; the deletions left are recorded as
    not run (in group order, so the last groups are the ones dropped).
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    start = time.perf_counter()
    cmd = padlint_cmd or [sys.executable, "-m", "padlint"]
    options = padlint_options(cmd)
    version = padlint_version(cmd)
    targets = find_targets(tree, engine)
    if groups is not None:
        unknown = [g for g in groups if g not in {grp.name for grp in engine.groups}]
        if unknown:
            raise ValueError(f"{engine.key}: no group {', '.join(map(repr, unknown))}")
        targets = sorted((t for t in targets if t[0] in groups), key=lambda t: groups.index(t[0]))
    if not targets:
        raise RuntimeError(f"{engine.key}: no target files under {tree}")
    paths = [rel for _, rel in targets]
    all_paths = [rel for _, rel in find_targets(tree, engine)]
    sites, skipped = find_sites(tree, targets)
    if only:
        sites = [(g, s) for g, s in sites if f"{s.path}:{s.line}".endswith(only) or only in s.path]
    if rows:
        sites = [(g, s) for g, s in sites if s.rows in rows]
    if limit is not None:
        sites = sites[:limit]
    log(f"{engine.key}: {len(targets)} target files, {len(sites)} reset statements, mode {mode}, {jobs} worker(s), "
        f"padlint options {' '.join(options) or '(none)'}")
    jobs = max(1, min(jobs, len(sites) or 1))
    file_baselines: dict[str, FileBaseline] = {}
    file_locks: dict[str, threading.Lock] = {rel: threading.Lock() for rel in paths}
    baseline: list[dict] = []
    baseline_errors: list[str] = []
    over_budget = threading.Event()

    def out_of_time() -> bool:
        if budget_s is not None and time.perf_counter() - start > budget_s:
            over_budget.set()
        return over_budget.is_set()

    with tempfile.TemporaryDirectory(prefix=f"padlint-mutation-{engine.key}-") as tmp:
        copies: queue.Queue[Path] = queue.Queue()
        for i in range(jobs):
            root = Path(tmp) / f"w{i}"
            shutil.copytree(tree / engine.package, root / engine.package,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            copies.put(root)
        if mode == "whole":
            first = copies.get()
            baseline, baseline_errors = run_padlint(cmd, options, first, engine.profile, paths)
            copies.put(first)
            log(f"{engine.key}: baseline {len(baseline)} findings, {len(baseline_errors)} errors "
                f"({time.perf_counter() - start:.1f} s)")
        sources = {rel: (tree / rel).read_text(encoding="utf-8") for rel in {s.path for _, s in sites}}

        graph = import_graph(tree, all_paths) if mode == "imports" else {}
        checked = {rel: [rel] + (import_neighbours(tree, all_paths, rel, graph) if mode == "imports" else [])
                   for rel in sources}
        if mode == "imports":
            for rel in sorted(sources):
                log(f"{engine.key}: {rel} checked with {len(checked[rel]) - 1} import neighbours")

        def base_of(rel: str) -> FileBaseline:
            """The baseline of ``rel`` checked alone, computed once (on an unmutated copy)."""
            with file_locks[rel]:
                if rel not in file_baselines:
                    root = copies.get()
                    t0 = time.perf_counter()
                    try:
                        found, errs = run_padlint(cmd, options, root, engine.profile, checked[rel])
                    except (RuntimeError, subprocess.TimeoutExpired) as e:
                        found, errs = [], [f"{rel}: baseline run failed: {e}"]
                    finally:
                        copies.put(root)
                    file_baselines[rel] = FileBaseline(found, errs, time.perf_counter() - t0)
                    log(f"{engine.key}: baseline of {rel}: {len(found)} findings, {len(errs)} errors "
                        f"({file_baselines[rel].seconds:.1f} s)")
                return file_baselines[rel]

        def one(item: tuple[str, ResetSite]) -> Mutant:
            group, site = item
            mutant = Mutant(site, group, site.rows)
            if out_of_time():
                mutant.not_run = True
                return mutant
            if mode != "whole":
                base = base_of(site.path)
                ref, ref_errors, run_paths = base.findings, base.errors, checked[site.path]
            else:
                ref, ref_errors, run_paths = baseline, baseline_errors, paths
            mutant.masked_by_baseline = already_reported(site, ref)
            try:
                mutated = delete_statement(sources[site.path], site)
            except ValueError as e:
                mutant.errors.append(f"not mutated: {e}")
                return mutant
            if out_of_time():
                mutant.not_run = True
                return mutant
            root = copies.get()
            target = root / site.path
            t0 = time.perf_counter()
            try:
                target.write_text(mutated, encoding="utf-8")
                findings, errors = run_padlint(cmd, options, root, engine.profile, run_paths)
                new, mutant.lost = compare(ref, findings)
                mutant.new_findings = [_summary(f) for f in new]
                mutant.noticed = bool(new)
                mutant.more_paths = bool(grown(ref, findings))
                mutant.errors = [e for e in errors if e not in ref_errors]
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
                if done % 10 == 0 or done == len(sites):
                    log(f"{engine.key}: {done}/{len(sites)} mutants ({mutant.group}), "
                        f"{sum(m.noticed for m in mutants)} noticed, {sum(m.not_run for m in mutants)} not run "
                        f"({time.perf_counter() - start:.0f} s)")
    if mode != "whole":
        seen_keys: set[str] = set()  # imports mode: neighbour sets overlap; one copy of each finding
        baseline = []
        for f in (f for rel in paths if rel in file_baselines for f in file_baselines[rel].findings):
            if json.dumps(f, sort_keys=True) not in seen_keys:
                seen_keys.add(json.dumps(f, sort_keys=True))
                baseline.append(f)
        baseline_errors = [e for rel in paths if rel in file_baselines for e in file_baselines[rel].errors]
    return EngineReport(engine, targets, [_summary(f) for f in baseline], baseline_errors, mutants, skipped,
                        time.perf_counter() - start, cmd, version, mode=mode,
                        baseline_seconds={rel: b.seconds for rel, b in file_baselines.items()})


def report_from_dict(d: dict) -> EngineReport:
    """An :class:`EngineReport` from its :meth:`EngineReport.to_dict` (a ``--json`` file)."""
    engine = ENGINES[d["engine"]]
    mutants = []
    for m in d["mutants"]:
        mutants.append(Mutant(ResetSite(**m["site"]), m["group"], m["shape"], noticed=m["noticed"],
                              new_findings=m["new_findings"], lost=m["lost_findings"], errors=m["errors"],
                              seconds=m["seconds"], masked_by_baseline=m["masked_by_baseline"],
                              not_run=m.get("not_run", False), more_paths=m.get("more_paths", False)))
    return EngineReport(engine, [(t["group"], t["path"]) for t in d["targets"]], d["baseline"]["findings"],
                        d["baseline"]["errors"], mutants, d["skipped"], d["wall_s"], [], d["padlint"],
                        mode=d.get("mode", "whole"), baseline_seconds=d["baseline"].get("seconds", {}))


def merge_reports(reports: list[EngineReport]) -> EngineReport:
    """One report of an engine from reports of disjoint runs (e.g. one per group, same mode): targets,
    deletions and baselines joined, wall times added; groups in the engine's order."""
    if len({(r.engine.key, r.mode) for r in reports}) != 1:
        raise ValueError("merge_reports: reports of one engine and one mode only")
    order = {g.name: i for i, g in enumerate(reports[0].engine.groups)}
    targets = sorted({t for r in reports for t in r.targets}, key=lambda t: (order.get(t[0], len(order)), t[1]))
    seen: set[tuple[str, int, int]] = set()
    mutants = []
    for r in reports:
        for m in r.mutants:
            key = (m.site.path, m.site.line, m.site.col)
            if key not in seen:
                seen.add(key)
                mutants.append(m)
    mutants.sort(key=lambda m: (order.get(m.group, len(order)), m.site.path, m.site.line, m.site.col))
    baseline = [f for r in reports for f in r.baseline]
    if reports[0].mode == "whole":
        baseline = reports[0].baseline
    first = reports[0]
    return EngineReport(first.engine, targets, baseline, sorted({e for r in reports for e in r.baseline_errors}),
                        mutants, [s for r in reports for s in r.skipped], sum(r.wall_s for r in reports),
                        first.padlint_cmd, first.padlint_version, mode=first.mode,
                        baseline_seconds={k: v for r in reports for k, v in r.baseline_seconds.items()})


# --- reports -------------------------------------------------------------------------------------

def _pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100 * a / b:.0f}%)" if b else "0/0"


def summary_table(reports: list[EngineReport]) -> str:
    lines = ["| engine | mode | target files | reset statements | run | noticed (new finding) "
             "| more stale paths only | errors | wall time |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in reports:
        errs = sum(1 for m in r.mutants if m.errors)
        lines.append(f"| {r.engine.key} | {r.mode} | {len(r.targets)} | {len(r.mutants)} | {len(r.run)} "
                     f"| {_pct(r.noticed, len(r.run))} | {r.more_paths} | {errs} | {r.wall_s:.0f} s |")
    return "\n".join(lines)


def _breakdown(mutants: list[Mutant], attr: str, seconds: dict[str, float] | None = None) -> list[str]:
    """Rows ``| key | statements | run | noticed/run |`` (and padlint seconds when given)."""
    totals: Counter[str] = Counter()
    ran: Counter[str] = Counter()
    noticed: Counter[str] = Counter()
    for m in mutants:
        key = getattr(m, attr)
        totals[key] += 1
        ran[key] += not m.not_run
        noticed[key] += m.noticed
    rows = []
    for k in totals:
        row = f"| {k} | {totals[k]} | {ran[k]} | {_pct(noticed[k], ran[k])} |"
        if seconds is not None:
            row += f" {seconds.get(k, 0.0):.0f} s |"
        rows.append(row)
    return rows


_MODE_TEXT = {
    "per-file": ("Mode `per-file`: a deletion in file F counts as noticed when padlint run on F alone (from the tree "
                 "root: the rest of the package is read as context) reports a finding that its run on the unmutated "
                 "F did not. Such a run reports no finding whose sink is in another file."),
    "imports": ("Mode `imports`: as `per-file`, with F checked together with its import neighbours among the target "
                "files (those F imports and those that import F); a new finding in any of them counts."),
    "whole": "Mode `whole`: every run checks all the target files; a new finding in any of them counts.",
}


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


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
           (f"**{_pct(r.noticed, len(r.run))} deletions noticed** ({len(r.run)} of {len(r.mutants)} run); "
            f"{r.more_paths} more add only stale paths to an existing finding (\"on N paths\" grows); "
            f"mode `{r.mode}`; {len(r.targets)} target files, baseline {len(r.baseline)} findings and "
            f"{len(r.baseline_errors)} file errors; wall time {r.wall_s:.0f} s"
            + (f"; {sum(1 for m in r.run if m.seconds)} padlint runs of the mutants took "
               f"{_mean([m.seconds for m in r.run if m.seconds]):.1f} s on average (max "
               f"{max((m.seconds for m in r.run), default=0):.1f} s)." if r.run else ".")),
           "",
           _MODE_TEXT[r.mode],
           "",
           "| group | reset statements | run | noticed | padlint time |", "| --- | --- | --- | --- | --- |",
           *_breakdown(r.mutants, "group", r.group_seconds()),
           "",
           "| rows written | reset statements | run | noticed |", "| --- | --- | --- | --- |",
           *_breakdown(r.mutants, "shape"),
           "",
           ("*padlint time*: the seconds of the group's padlint runs (baselines and mutants), summed over the "
            "workers; the wall time is about that over the number of workers."),
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
    not_run = [m for m in r.mutants if m.not_run]
    if not_run:
        out += [f"## Not run ({len(not_run)})", "",
                "The time budget (`--budget`) was spent before these deletions' turn; they are in no figure above.", ""]
        out += [f"- {g}: {n}" for g, n in Counter(m.group for m in not_run).items()]
        out.append("")
    for title, noticed in (("Missed deletions", False), ("Noticed deletions", True)):
        rows = [m for m in r.run if m.noticed == noticed]
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
    per_path = Counter(f.get("path") for f in r.baseline)
    out += ["## Target files", ""]
    if r.mode == "per-file":
        out += ["With the findings and the time of the baseline run of each file that has reset statements "
                "(that file alone).", ""]
    for g, p in r.targets:
        line = f"- {g}: `{p}`"
        if p in r.baseline_seconds:
            line += f" (baseline: {per_path[p]} findings, {r.baseline_seconds[p]:.1f} s)"
        out.append(line)
    out.append("")
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
    ap.add_argument("--mode", choices=MODES, default="per-file",
                    help="per-file (default): judge a deletion in F by padlint on F alone against F's baseline; "
                         "whole: every run checks all the engine's target files")
    ap.add_argument("--group", action="append",
                    help="only this target group, by name (repeatable; run in the order given)")
    ap.add_argument("--rows", action="append", choices=("tail", "prefix", "whole", "row", "masked"),
                    help="only reset statements that write these rows (repeatable)")
    ap.add_argument("--budget", type=float, metavar="SECONDS",
                    help="start no padlint run after SECONDS per engine; the rest are reported as not run")
    ap.add_argument("--from-json", type=Path, action="append", metavar="FILE",
                    help="run nothing: read reports written by --json (repeatable; runs of one engine are merged) "
                         "and write the summary, --markdown-dir and --json from them")
    args = ap.parse_args(argv)
    if args.from_json:
        by_engine: dict[str, list[EngineReport]] = {}
        for path in args.from_json:
            for d in json.loads(path.read_text(encoding="utf-8"))["reports"]:
                by_engine.setdefault(d["engine"], []).append(report_from_dict(d))
        return _write(args, [merge_reports(rs) for rs in by_engine.values()])
    keys = args.engine or list(ENGINES)
    if args.tree and len(keys) != 1:
        ap.error("--tree needs exactly one --engine")
    padlint_cmd = args.padlint.split() if args.padlint else None
    reports = []
    for key in keys:
        engine = ENGINES[key]
        tree = args.tree or _load_corpus_cache().ensure(engine.package, engine.version)
        groups = [g for g in (args.group or []) if g in {grp.name for grp in engine.groups}] or None
        if args.group and groups is None:
            continue  # none of the named groups is this engine's
        report = run_engine(engine, tree, jobs=args.jobs, padlint_cmd=padlint_cmd, limit=args.limit, only=args.only,
                            mode=args.mode, groups=groups, budget_s=args.budget, rows=args.rows,
                            log=lambda msg: print(msg, file=sys.stderr, flush=True))
        reports.append(report)
    return _write(args, reports)


def _write(args: argparse.Namespace, reports: list[EngineReport]) -> int:
    """The summary on stdout; the markdown and JSON files asked for."""
    if args.markdown_dir:
        args.markdown_dir.mkdir(parents=True, exist_ok=True)
        for report in reports:
            (args.markdown_dir / f"mutation-{report.engine.key}.md").write_text(engine_markdown(report),
                                                                                 encoding="utf-8")
    print(summary_table(reports))
    for r in reports:
        missed = [m for m in r.run if not m.noticed]
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
