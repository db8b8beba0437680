"""Module index: which functions can matter, and the call graph between them.

Built with the standard ``ast`` module (C speed) before any libcst parsing,
so that libcst (slow: ~0.5 MB/s to parse, more for position metadata) only
parses the functions that can matter:

* *core* functions mention a padded count, a sink, a reset method, a
  device copy, a padded getter or an uninitialised allocator;
* *needed* functions are the core ones and every function of the same class
  that calls one of them (directly or transitively): the paths from entry
  points to sinks and resets.

Entry points are needed methods that no other method of the class calls
(``execute_model``, ``capture_model``), as the issue specifies.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, field

from padlint.profile import Profile


@dataclass
class FuncInfo:
    """One top-level function or method.  Lines are 1-based, inclusive."""

    qualname: str           # "Runner._build_attention_metadata" or "helper"
    name: str
    owner: str              # class name, or "" for module-level functions
    start: int              # first decorator line or def line
    def_line: int
    end: int
    ancestors: tuple[int, ...]  # column offsets of enclosing class lines (for re-parsing)
    calls: set[str] = field(default_factory=set)  # names called as self.NAME(...) / NAME(...)
    core: bool = False
    sink: bool = False  # holds a sink call itself


@dataclass
class ModuleIndex:
    functions: dict[str, FuncInfo]
    needed: set[str]
    entries: list[str]
    nodes: dict[str, ast.AST] = field(default_factory=dict)


@functools.lru_cache(maxsize=8)
def relevance_pattern(profile: Profile) -> re.Pattern[str]:
    """A regex that matches text mentioning anything PAD001 can act on.

    Calls only (``X(``), not type annotations, for sinks, resets, copies and
    allocators; padded count names as whole words, plus any ``*_padded`` name:
    the two :func:`prefilter_patterns` plus the reset and device-copy calls.
    """
    sink, padded = prefilter_patterns(profile)
    alts: list[str] = [sink.pattern, padded.pattern]
    calls: set[str] = set(profile.copy_to_device) | set(profile.fill_methods)
    calls.update(name for name, _ in profile.reset_helpers)
    alts.extend(rf"\.{re.escape(w)}\(" for w in sorted(calls))
    alts.extend(rf"\b{re.escape(name)}\(" for name, _ in profile.reset_helpers)
    return re.compile("|".join(alts))


@functools.lru_cache(maxsize=8)
def prefilter_patterns(profile: Profile) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(sink, padded) regexes: a file can hold a PAD001 finding only if both match.

    The analysis is per module: a finding needs a sink call (metadata
    constructor, forward call or configured sink call) and a padded count,
    padded getter or uninitialised allocator in the same file.
    """
    sinks: list[str] = []
    for pat in profile.sink_constructors + profile.sink_calls + profile.forward_calls:
        lead = "" if pat.startswith("*") else r"\b"  # a search needs no leading wildcard
        rx = re.escape(pat.lstrip("*")).replace(r"\*", r"[\w.]*").replace(r"\?", r"[\w.]")
        sinks.append(rf"{lead}{rx}[(\[]")  # a call, or a kernel launch `kernel[grid](...)`
    padded: list[str] = [r"\w_padded\b"]
    for pair in profile.counts:
        padded.extend(rf"\b{re.escape(w)}\b" for w in pair.padded)
    padded.extend(rf"\.{re.escape(w)}\(" for w in profile.padded_getters)
    padded.extend(rf"\b{re.escape(a)}\(" for a in profile.uninitialized_allocators)
    return re.compile("|".join(sinks) or r"(?!)"), re.compile("|".join(padded))


@functools.lru_cache(maxsize=8)
def _literals(profile: Profile) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Fixed substrings that every match of the prefilter regexes contains."""
    def lit(pat: str) -> str:
        """The longest fixed piece of a glob, with the call's `(` when it ends the pattern."""
        parts = re.split(r"[*?]|\[[^\]]*\]", pat)
        longest = max(parts, key=len)
        return longest + "(" if longest == parts[-1] and longest else longest
    sinks = tuple(lit(p) for p in profile.sink_constructors + profile.forward_calls)
    sinks += tuple(lit(p).rstrip("(") for p in profile.sink_calls)  # calls and kernel launches
    padded = ["_padded"] + [w for pair in profile.counts for w in pair.padded]
    padded += [f".{g}(" for g in profile.padded_getters] + [f"{a}(" for a in profile.uninitialized_allocators]
    return tuple(x for x in sinks if x), tuple(padded)


def may_matter(text: str, profile: Profile, patterns=None) -> bool:
    """Cheap text test run before any parsing: a sink call or a padded count
    mentioned (substrings of :func:`prefilter_patterns`'s regexes).

    The analysis is whole-program: the sink may be in another module than the
    padded slice (a builder module, a runner), so either half makes a file a
    place to start looking for entry points.
    """
    sink_lits, pad_lits = _literals(profile)
    # Substring tests only: an over-match (a `class XAttentionMetadata(` line) costs
    # an `ast` parse, never a finding; regexes over whole files cost more.
    return any(x in text for x in pad_lits) or any(x in text for x in sink_lits)


def _relevance_literals(profile: Profile) -> tuple[str, ...]:
    sink_lits, pad_lits = _literals(profile)
    calls = set(profile.copy_to_device) | set(profile.fill_methods) | {n for n, _ in profile.reset_helpers}
    return sink_lits + pad_lits + tuple(f"{c}(" for c in sorted(calls))


_TOP = re.compile(r"^(?:class|def|async\s+def)\s", re.M)


def has_live_chunk(text: str, profile: Profile) -> bool:
    """Text-only test before ``ast.parse``: does one top-level class (or the
    module's functions taken together) mention both a sink call and a padded
    count?  Chunks are cut at column-0 ``class``/``def`` lines.
    """
    sink_lits, pad_lits = _literals(profile)
    if "\r" in text:  # ``^`` under re.M starts a line only after \n; Python also ends lines with a lone \r
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    starts = [m.start() for m in _TOP.finditer(text)]
    if not starts:
        return False
    chunks = [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]
    module_funcs = "".join(c for c in chunks if not c.startswith("class"))
    for chunk in [c for c in chunks if c.startswith("class")] + [module_funcs]:
        if any(x in chunk for x in pad_lits) and any(x in chunk for x in sink_lits):
            return True
    return False


def build_index(tree: ast.Module, lines: list[str], profile: Profile) -> ModuleIndex:
    """Index ``tree`` (parsed from ``lines``); see the module docstring.

    Only classes (and the module's own functions) that hold a sink call can
    produce findings: the others are not indexed further.
    """
    pattern = relevance_pattern(profile)
    sink_re, _ = prefilter_patterns(profile)
    sink_lits, pad_lits = _literals(profile)
    rel_lits = _relevance_literals(profile)
    functions: dict[str, FuncInfo] = {}
    nodes: dict[str, ast.AST] = {}
    has_sink: set[str] = set()  # owners holding a sink call
    has_pad: set[str] = set()   # owners mentioning a padded count, getter or allocator

    def add(node: ast.FunctionDef | ast.AsyncFunctionDef, owner: str, ancestors: tuple[int, ...]) -> None:
        start = min([d.lineno for d in node.decorator_list] + [node.lineno])
        end = node.end_lineno or node.lineno
        info = FuncInfo(
            qualname=f"{owner}.{node.name}" if owner else node.name,
            name=node.name, owner=owner, start=start, def_line=node.lineno, end=end,
            ancestors=ancestors)
        text = "".join(lines[start - 1:end])
        # substring tests (C speed) decide; regexes only confirm the rare hits
        info.core = any(x in text for x in rel_lits) and pattern.search(text) is not None
        if info.core:
            if any(x in text for x in sink_lits) and sink_re.search(text):
                has_sink.add(owner)
                info.sink = True
            if any(x in text for x in pad_lits):
                has_pad.add(owner)
        functions[info.qualname] = info
        nodes[info.qualname] = node

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            add(node, "", ())
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    add(item, node.name, (node.col_offset,))

    # only owners with a sink matter; find their calls
    live = has_sink & has_pad
    functions = {q: i for q, i in functions.items() if i.owner in live}
    for q, info in functions.items():
        for sub in ast.walk(nodes[q]):
            if isinstance(sub, ast.Call):
                f = sub.func
                if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
                    info.calls.add(f.attr)
                elif isinstance(f, ast.Name):
                    info.calls.add(f.id)

    # needed = core + transitive callers within the same owner
    by_owner: dict[str, dict[str, FuncInfo]] = {}
    for info in functions.values():
        by_owner.setdefault(info.owner, {})[info.name] = info
    needed: set[str] = {q for q, i in functions.items() if i.core}
    changed = True
    while changed:
        changed = False
        for q, info in functions.items():
            if q in needed:
                continue
            peers = by_owner[info.owner]
            if any(c in peers and peers[c].qualname in needed for c in info.calls):
                needed.add(q)
                changed = True

    entries: list[str] = []
    for owner, peers in by_owner.items():
        called = set()
        for info in peers.values():
            called.update(c for c in info.calls if c in peers and c != info.name)
        for name, info in sorted(peers.items(), key=lambda kv: kv[1].start):
            if info.qualname in needed and name not in called:
                entries.append(info.qualname)
        # a class whose needed methods all call each other (a cycle) still gets an entry
        if not any(functions[e].owner == owner for e in entries):
            cyc = [i.qualname for i in sorted(peers.values(), key=lambda i: i.start) if i.qualname in needed]
            entries.extend(cyc[:1])

    # keep only entry points with a path to a sink, and what they can reach
    def callees(info: FuncInfo) -> list[FuncInfo]:
        peers = by_owner[info.owner]
        return [peers[c] for c in info.calls if c in peers and peers[c].qualname in needed]

    sinkward: set[str] = {q for q in needed if functions[q].sink}
    changed = True
    while changed:
        changed = False
        for q in needed - sinkward:
            if any(c.qualname in sinkward for c in callees(functions[q])):
                sinkward.add(q)
                changed = True
    entries = [e for e in entries if e in sinkward]
    reach: set[str] = set()
    todo = list(entries)
    while todo:
        q = todo.pop()
        if q in reach:
            continue
        reach.add(q)
        todo.extend(c.qualname for c in callees(functions[q]))
    return ModuleIndex(functions=functions, needed=needed & reach, entries=entries, nodes=nodes)
