"""Driver of the static checker: project index -> call graph -> entry points -> interpret -> findings.

The analysis is whole-program: the checked files are indexed together with
the modules they reach (found on disk under the checked files' package root,
parsed with ``ast`` only when something asks for them), calls are followed
across classes and modules, and findings are reported in the checked files.
Only functions on a path to a sink are parsed with libcst (each as a small
module wrapped in ``class _:`` lines so that lines and columns stay exact).
"""

from __future__ import annotations

import ast
import sys
import threading
import warnings
from contextlib import contextmanager
from dataclasses import dataclass

from padlint.analysis.callgraph import CallGraph, module_functions
from padlint.prefilter import FEW_FILES
from padlint.analysis.index import may_matter
from padlint.analysis.interp import Interpreter
from padlint.analysis.project import FunctionInfo, Project, _dotted, is_test_module
from padlint.model import Finding
from padlint.profile import Profile


class AnalysisSyntaxError(SyntaxError):
    """The file is not valid Python.  ``lineno`` is 1-based (or None)."""


@dataclass
class Source:
    """One checked file: its path as reported and its text."""

    path: str
    text: str
    file: str = ""  # where it lies on disk (default: path), to find its package root


#: The search for callers of a checked file's non-sinkward functions (:func:`_feeds_a_sink`) is
#: made for a few checked files (pre-commit, a file checked alone), whose callers lie in the
#: modules not checked.  It scans the project for each such function: on a tree (SGLang 0.5.23's
#: `sglang/srt`, 1,244 files, the rest of `sglang/` unchecked) it took half of a 15-minute run
#: and added no finding.  Above this many checked files it is not made (the same bound as the
#: prefilter's for files that only write rows: :data:`padlint.prefilter.FEW_FILES`).
FEEDER_SEARCH_MAX_FILES = FEW_FILES

MAX_CALLER_LEVELS = 64  # how far up the call graph entry points are searched
MAX_ENTRIES = 2000


#: Python frames the interpreter may nest on an analysis thread: a call followed 64 levels deep
#: (:attr:`Interpreter.MAX_DEPTH`) through functions whose ``elif`` chains nest ``if`` statements
#: (three frames each) needs far more than CPython's default 1,000 (SGLang 0.5.23's runners
#: reached it at 59 calls, and the whole-program run fell back to one file at a time).
RECURSION_LIMIT = 20_000


@contextmanager
def _deep_recursion():
    """Raise the recursion limit while the interpreter runs, on an analysis thread only (its C
    stack is :data:`padlint.parse.PARSE_STACK_BYTES`; the main thread's 8 MiB keeps the
    default)."""
    if threading.current_thread() is threading.main_thread():
        yield
        return
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def _syntax_error(path: str, text: str) -> AnalysisSyntaxError | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text, filename=path)
    except SyntaxError as e:
        return AnalysisSyntaxError(f"syntax error: {e.msg}", (path, e.lineno, e.offset, e.text))
    except ValueError as e:  # null bytes
        return AnalysisSyntaxError(f"cannot parse: {e}")
    return None


#: how many levels of callers :func:`_feeds_a_sink` climbs to find one that reaches a sink
FEEDER_LEVELS = 3


def _feeds_a_sink(graph: CallGraph, fn: FunctionInfo) -> bool:
    """``fn`` reaches no sink itself but a caller does, directly or up to :data:`FEEDER_LEVELS`
    levels up: what ``fn`` writes or returns (a padded view in a batch object, a reset of a
    persistent buffer) reaches the sink through the caller (MRV2 ``PCPManager.partition_batch``
    builds the local batch the runner hands to ``model_state.prepare_attn``; 0.34.0's
    ``AdaptiveVerificationManager.reallocate_drafts`` writes the query offsets that
    ``prepare_inputs`` puts in the batch its caller hands there).  Such a function is searched
    for entry points too, so that checking its file alone sees what checking the whole tree
    sees."""
    seen = {fn.key}
    level = [fn]
    for _ in range(FEEDER_LEVELS):
        up = [c for f in level for c in graph.callers(f) if c.key not in seen]
        if any(graph.sinkward(c) for c in up):
            return True
        seen.update(c.key for c in up)
        level = up
    return False


def _some_module_unchecked(project: Project, profile: Profile, checked: set[str]) -> bool:
    """Whether a module of the project that could start an entry-point search (its text
    mentions a sink or a padded count: :func:`padlint.analysis.index.may_matter`, the
    prefilter's own test) is not among the checked ones (pre-commit's few files, a file
    checked alone)."""
    return any(key not in checked and may_matter(project.text_of(key, path), profile)
               for key, path in project.files())


def _called_from(graph: CallGraph, roots: list[FunctionInfo]) -> set[str]:
    """Keys of the relevant functions that ``roots`` reach by calls (the call graph's memoised
    callees; irrelevant functions are not followed, as in the interpreter)."""
    seen: set[str] = set()
    stack = list(roots)
    while stack:
        f = stack.pop()
        for c in graph.callees(f):
            if c.key not in seen and graph.relevant(c):
                seen.add(c.key)
                stack.append(c)
    return seen


def find_entries(graph: CallGraph, seeds: list[FunctionInfo],
                 classes: dict[str, set[str]] | None = None) -> list[FunctionInfo]:
    """Entry points for ``seeds`` (functions of checked files that reach a sink).

    The seeds' callers are collected upward through the project (``U``); the
    entry points are the functions of ``U`` that nothing in ``U`` calls, and the
    public methods that only private methods of their own class call (a class's API).  A
    cycle that nothing outside calls (``a`` calls ``b`` calls ``a``) gets its
    first function as an entry point, so every seed is reached from some entry.  Callers in
    test code (:func:`padlint.analysis.project.is_test_module`: SGLang's ``sglang/test/`` kits
    call a runner's ``execute`` on an object they just built) are not followed up from code
    that is not itself test code: the production callers the call graph cannot resolve (a
    runner built from a class held in a variable) would be hidden behind them.

    The search keeps the class of the object a method runs on along calls on ``self``
    (:meth:`CallGraph.self_callees`): from a subclass's override ``E.capture_one_shape`` up
    to the base's ``B._capture_one_stream`` (which calls ``self.capture_one_shape()``), ``self``
    is an ``E``; of the callers of ``B.__init__`` only ``E``'s own constructor
    (``super().__init__()``) can reach the override, not those of ``E``'s sibling classes,
    whose objects run their own ``capture_one_shape``.  A caller whose class cannot be that
    of the object (:meth:`Project.may_share_object`) is not followed; a call on another object
    starts again from the caller's own class.  A method whose every caller was left out so is
    an entry point for that class only where code outside can call it on such an object (the
    class inherits it, and it is public or the constructor: ``E(...)`` runs an inherited
    ``B.__init__``); ``classes`` (when given) receives, per entry point, the classes other
    than its own to run it for.
    """
    project = graph.project
    up: dict[tuple[str, str], FunctionInfo] = {}  # (function, class of its `self`) -> function
    callers_of: dict[tuple[str, str], list[tuple[FunctionInfo, str]]] = {}
    pruned: set[tuple[str, str]] = set()  # states some caller of which was left out for its class
    seen: set[str] = set()
    todo = [(s, s.owner or "", 0) for s in seeds]
    while todo and len(seen) < MAX_ENTRIES * 4 and len(up) < MAX_ENTRIES * 16:
        fn, recv, level = todo.pop()
        state = (fn.key, recv)
        if state in up:
            continue
        up[state] = fn
        seen.add(fn.key)
        # a caller in test code (a test kit that builds the object and calls its API) is not
        # the program: it does not make a production function part of a larger entry point
        # (code that is itself test code keeps its test callers)
        test = is_test_module(fn.module)
        cs: list[tuple[FunctionInfo, str]] = []
        for c in graph.callers(fn) if level < MAX_CALLER_LEVELS else ():
            if c.key == fn.key or not test and is_test_module(c.module):
                continue
            if recv and c.owner and fn.key in graph.self_callees(c):
                narrowed = _self_class(project, c.owner, recv)
                if narrowed is None:
                    pruned.add(state)  # `c` runs on objects of a class that cannot be `recv`'s
                    continue
                cs.append((c, narrowed))
            else:
                cs.append((c, c.owner or ""))
        callers_of[state] = cs
        todo.extend((c, r, level + 1) for c, r in cs if (c.key, r) not in up)
    fns = {f.key: f for f in up.values()}

    def runs_as(state: tuple[str, str], f: FunctionInfo) -> bool:
        """Whether an object of the state's class runs ``f`` when called by its name: the
        class inherits it (it may also run it through ``super()``, but then that call is a
        caller of the state)."""
        if not state[1] or state[1] == f.owner:
            return True
        cls = project.class_info(state[1])
        m = project.find_method(cls, f.name) if cls is not None else None
        return m is not None and m.key == f.key

    # the callers of each state that the search reached (the others were cut by its bounds)
    inside_of = {st: [c for c, r in cs if (c.key, r) in up] for st, cs in callers_of.items()}

    def is_entry(state: tuple[str, str], f: FunctionInfo) -> bool:
        inside = inside_of.get(state, [])
        if not inside and (state in pruned and not callers_of.get(state) or not runs_as(state, f)):
            # every caller runs on objects of other classes (or the object's class overrides
            # `f`): outside code may still call it on one of this class if the class has it
            # and it is public (or constructs)
            return runs_as(state, f) and (f.name == "__init__" or not f.name.startswith("_"))
        if not inside:
            return True
        # a public method that only private methods of its own class call (`execute_model`,
        # which `_dummy_run` also calls) is the class's API: the engine calls it too, with
        # nothing reset.  One that only the constructor calls (`self.capture()` at the end of
        # `__init__`) is part of construction: it runs once, on what `__init__` built
        return bool(f.owner) and not f.name.startswith("_") and all(
            c.owner == f.owner and c.name.startswith("_") for c in inside) and not all(
            c.name == "__init__" for c in inside)

    root_fns: dict[str, FunctionInfo] = {}
    rooted: set[tuple[str, str]] = set()
    for state, f in up.items():
        if is_entry(state, f):
            rooted.add(state)
            root_fns.setdefault(f.key, f)
            if classes is not None and state[1] and state[1] != f.owner:
                cls, own = project.class_info(state[1]), project.class_info(f.owner)
                if cls is not None and own is not None and _constructs_as(project, cls, own):
                    classes.setdefault(f.key, set()).add(state[1])
    # states below a dead end (a state none of whose callers can be on its object, and no
    # entry point itself): those from which some chain of callers leads to one.  Only the
    # others may be a cycle that no outside function calls
    dead = [st for st in up if st not in rooted and not inside_of.get(st)]
    doomed: set[tuple[str, str]] = set(dead)
    below: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for st, cs in callers_of.items():
        for c, r in cs:
            below.setdefault((c.key, r), []).append(st)
    while dead:
        for st in below.get(dead.pop(), ()):
            if st not in doomed:
                doomed.add(st)
                dead.append(st)
    roots = list(root_fns.values())
    covered: set[str] = set()

    def cover(f: FunctionInfo) -> None:
        stack = [f]
        while stack:
            x = stack.pop()
            if x.key in covered:
                continue
            covered.add(x.key)
            stack.extend(c for c in graph.callees(x) if c.key in fns and c.key not in covered)

    for r in roots:
        cover(r)
    entries = list(roots)
    cyclic = {f.key for st, f in up.items() if st not in doomed}
    for k, f in sorted(fns.items(), key=lambda kv: (kv[1].module, kv[1].start)):
        if k not in covered and k in cyclic and len(entries) < MAX_ENTRIES:
            entries.append(f)  # a cycle no outside function calls
            cover(f)
    return sorted(entries, key=lambda f: (f.module, f.start))


def _self_class(project: Project, caller_class: str, recv: str) -> str | None:
    """The class of ``self`` in a method of ``caller_class`` that calls, on ``self``, a method
    whose ``self`` is known to be a ``recv``: the narrower of the two when one is a subclass of
    the other, ``caller_class`` when a project class derives from both (a mixin), None when no
    object can be both."""
    if caller_class == recv:
        return recv
    d, r = project.class_info(caller_class), project.class_info(recv)
    if d is None or r is None:
        return caller_class
    if any(c.key == r.key for c in project.mro(d)):
        return d.key
    if any(c.key == d.key for c in project.mro(r)):
        return r.key
    # unrelated classes: an object of a project class deriving from both (a mixin's method
    # calling a method of the other base) is of neither; the caller's class is all that is known
    return d.key if project.may_share_object(d, r) else None


#: How many subclasses an inherited entry point is run for (:func:`inherited_runs`).
MAX_INHERITED_RUNS = 4
#: How deep the methods an entry point calls on ``self`` are followed to find the names it calls.
SELF_CALL_DEPTH = 3


def _self_names(fn_node: ast.AST) -> set[str]:
    """Names ``fn`` reads as attributes of ``self`` (``self.m()``, ``self.m`` handed on)."""
    return {n.attr for n in ast.walk(fn_node)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"
            and isinstance(n.ctx, ast.Load)}


def inherited_runs(project: Project, entry: FunctionInfo) -> list[str]:
    """Project subclasses for which entry point ``entry`` (a method) runs differently: classes
    that inherit it and override a method it calls on ``self`` (directly, or through the methods
    of its class it calls on ``self``, a few levels deep).  Inside ``entry``, ``self`` is an
    instance of any of them, and ``self.m()`` runs the override; each is run as its own entry
    point (a join of every subclass's overrides would combine methods of different classes on
    one path).  At most :data:`MAX_INHERITED_RUNS`: subclasses defined in checked files first
    (what the user asked about), then by class key."""
    owner = project.class_info(entry.owner) if entry.owner else None
    if owner is None:
        return []
    names: set[str] = set()
    seen: set[str] = {entry.key}
    todo = [(entry, 0)]
    while todo:
        fn, depth = todo.pop()
        for name in _self_names(fn.peek()) - names:
            names.add(name)
            m = project.find_method(owner, name)
            if m is not None and m.key not in seen and depth + 1 < SELF_CALL_DEPTH:
                seen.add(m.key)
                todo.append((m, depth + 1))
    out: dict[str, None] = {}
    for name in sorted(names):
        for sub in project.subclass_candidates(owner, name):
            inherited = project.find_method(sub, entry.name)
            if inherited is not None and inherited.key == entry.key and _constructs_as(project, sub, owner):
                out.setdefault(sub.key)
    chosen = sorted(out, key=lambda k: (not project.is_checked(k.split(":", 1)[0]), k))
    return sorted(chosen[:MAX_INHERITED_RUNS])


def _constructs_as(project: Project, sub, base) -> bool:
    """Whether constructing ``sub`` runs ``base``'s construction: every ``__init__`` defined on
    the way from ``sub`` up to ``base`` calls its base's (``super().__init__(...)``,
    ``Base.__init__(self, ...)``).  A subclass whose constructor skips it (SGLang's per-step
    multi-layer draft-extend runner sets up its own fields and attaches buffers later) has none
    of the state the base's methods use: they are not its interface."""
    mro = project.mro(sub)
    keys = [c.key for c in mro]
    if base.key not in keys:
        return False
    above = {c.name for c in mro[1:keys.index(base.key) + 1]}  # the classes up to the base
    for c in mro[:keys.index(base.key)]:
        init = c.methods.get("__init__")
        if init is not None and not any(
                isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "__init__"
                and (isinstance(n.func.value, ast.Call) and isinstance(n.func.value.func, ast.Name)
                     and n.func.value.func.id == "super"
                     # `Base.__init__(self, ...)` of a class on the way up (not `nn.Module.__init__`)
                     or (_dotted(n.func.value) or "").rsplit(".", 1)[-1] in above)
                for n in ast.walk(init.peek())):
            return False
    return True


def dummy_run_functions(project: Project, graph: CallGraph, profile: Profile) -> list[FunctionInfo]:
    """The project's dummy-run functions (the profile's ``[dummy_runs] functions``) that may
    reach a sink, found by their ``def`` lines' text."""
    words = [f"def {pat.split('*', 1)[0].split('?', 1)[0].split('[', 1)[0]}" for pat in profile.dummy_runs]
    out: list[FunctionInfo] = []
    for key in sorted(project.modules_mentioning(words)) if words else ():
        mod = project.module(key)
        if mod is None:
            continue
        out.extend(fn for fn in module_functions(mod) if profile.is_dummy_run(fn.name) and graph.relevant(fn))
    return out


def dummy_reads(project: Project, graph: CallGraph, interp: Interpreter, profile: Profile) -> dict:
    """Every buffer a dummy run of the project reads unwritten into an index field
    (:attr:`Interpreter.dummy_reads`): the run's own records, and those of the dummy-run
    functions its entry points did not reach (a file checked alone whose classes a dummy run
    reads but does not call: ``InputBatch``'s block table), interpreted apart so that the
    findings of the run stay those of its entry points."""
    reads = {k: list(v) for k, v in interp.dummy_reads.items()}
    missing = [fn for fn in dummy_run_functions(project, graph, profile) if fn.key not in interp.dummy_started]
    if missing:
        extra = Interpreter(profile, project, graph)
        with _deep_recursion():
            for fn in missing:
                if fn.key not in extra.dummy_started:
                    extra.run_entry(fn)
        extra.release_summaries()
        for k, v in extra.dummy_reads.items():
            known = reads.setdefault(k, [])
            known.extend(r for r in v if all(r.via != x.via for x in known))
    return reads


def stale_paths(interp: Interpreter) -> dict[tuple[str, int, str], list[tuple[str, ...]]]:
    """(sink file, sink line, field) -> every call path (function names, entry first) on which
    the value reaching that sink argument may be stale: the engine's facts behind a finding,
    whose trace shows only the most direct of them."""
    out: dict[tuple[str, int, str], list[tuple[str, ...]]] = {}
    for hit in interp.hits.values():
        if all(t.reason == "init" for t in hit.taints):
            continue  # a never-written buffer's allocation value: not stale (PAD005)
        paths = [tuple(n.split("`")[1] for _l, n, _p in chain if "`" in n) for chain in hit.stale_chains]
        out.setdefault((hit.path, hit.span[0], hit.field), []).extend(paths)
    return out


def check_project(sources: list[Source], profile: Profile, *, seeds: set[str] | None = None,
                  project: Project | None = None, facts: dict | None = None,
                  read: dict | None = None, rules=None) -> dict[str, list[Finding] | AnalysisSyntaxError]:
    """Findings of every static rule (or of ``rules``) for each checked file, analysed as one program.

    ``seeds``: paths whose functions may start the search for entry points
    (default: every source); the others are checked files too (findings in
    them are reported) but only reached through calls.  A seed that does not
    parse gets an :class:`AnalysisSyntaxError`.  ``RecursionError`` /
    ``MemoryError`` propagate (pathologically deep nesting).
    """
    project = project or Project()
    keys: dict[str, str] = {}
    for s in sources:
        keys[s.path] = project.add_source(s.path, s.text, s.file or s.path)
    seed_paths = [s for s in sources if seeds is None or s.path in seeds]
    out: dict[str, list[Finding] | AnalysisSyntaxError] = {}
    graph = CallGraph(project, profile)
    candidates: list[FunctionInfo] = []
    feeders: list[FunctionInfo] = []
    for s in seed_paths:
        mod = project.module(keys[s.path])
        if mod is None:
            err = _syntax_error(s.path, s.text)
            if err is not None:
                out[s.path] = err
            continue
        for fn in module_functions(mod):
            if graph.relevant(fn):
                (candidates if graph.sinkward(fn) else feeders).append(fn)
    if feeders and len(seed_paths) <= FEEDER_SEARCH_MAX_FILES \
            and _some_module_unchecked(project, profile, set(keys.values())):
        # a function the candidates call is reached from their entry points anyway; the others
        # are searched for a caller that reaches a sink in a module not checked.  (When every
        # module that could start a search is checked, such a caller's own sinkward callee is a
        # candidate, so the caller is found upward from it: nothing to search.)
        below = _called_from(graph, candidates)
        candidates += [fn for fn in feeders if fn.key not in below and _feeds_a_sink(graph, fn)]
    interp = Interpreter(profile, project, graph)
    with _deep_recursion():
        classes: dict[str, set[str]] = {}
        for entry in find_entries(graph, candidates, classes):
            interp.run_entry(entry)
            subs = inherited_runs(project, entry)
            for sub in [*subs, *sorted(classes.get(entry.key, set()) - set(subs))]:
                interp.run_entry(entry, self_class=sub)
    interp.release_summaries()  # the rules query the run's facts, not the callees' summaries
    if facts is not None:
        facts.update(stale_paths(interp))
    texts = {s.path: s.text for s in sources}
    by_key = {keys[s.path]: s.path for s in sources}
    for mod_key, (msg, line, col) in interp.syntax_errors.items():
        path = by_key.get(mod_key)
        if path is not None and path not in out:
            out[path] = AnalysisSyntaxError(msg, (path, line, col, None))
    from padlint.rules.base import Facts
    from padlint.rules.registry import static_rules

    known = Facts(profile=profile, project=project, graph=graph, interp=interp, texts=texts,
                  keys={s.path: keys[s.path] for s in sources})
    for rule in (static_rules() if rules is None else rules):
        for f in rule.check(known):
            if f.path in texts and not isinstance(out.get(f.path), AnalysisSyntaxError):
                out.setdefault(f.path, []).append(f)  # type: ignore[union-attr]
    if read is not None:
        # other files the analysis looked at (path -> text), the rules' queries included (the
        # dummy runs PAD003 asks about): the cache's dependencies
        read.update(project.files_read())
    for s in sources:
        out.setdefault(s.path, [])
    return out


def check_source(source: str, path: str, profile: Profile) -> list[Finding]:
    """PAD001 findings for one file's text, sorted by position.

    The file is analysed with the modules it reaches in its package on disk
    (if it lies in one), on an analysis thread with a large stack as the CLI runs it (the
    calls from a real engine's outer loops down to a runner nest deeper than the main thread's
    recursion limit).  Raises :class:`AnalysisSyntaxError` (with ``lineno``) when the file does
    not parse, and ``RecursionError`` or ``MemoryError`` for pathologically deep nesting.
    """
    from padlint.parse import with_big_stack

    res = with_big_stack(lambda srcs: check_project(srcs, profile), [Source(path, source)])[path]
    if isinstance(res, AnalysisSyntaxError):
        raise res
    return sorted(res, key=Finding.sort_key)


def check_module(module, path: str, profile: Profile) -> list[Finding]:
    """PAD001 findings for a libcst module (see :func:`check_source`)."""
    return check_source(module.code, path, profile)
