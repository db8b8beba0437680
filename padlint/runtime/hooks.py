"""Installing and uninstalling the runtime hooks: the one installation and its patches.

Nothing is patched until :func:`install` is called; :func:`uninstall`
restores every patched attribute exactly (an attribute that was inherited
is deleted again, not left as a copy).  Hooks:

* the *provider* (``module:Class.method``): its arguments give the real and
  padded counts of the step (pushed on a per-thread stack while it runs);
  on return, fields whose tensor or version changed are re-checked;
* each metadata class: ``__init__`` (also reached by ``dataclasses.replace``)
  checks every profile field on creation; ``__setattr__`` checks a profile
  field stored after construction (``meta.dcp_local_seq_lens = ...``);
* the optional *step* function: poison mode fills padding rows of
  registered source buffers with a sentinel when a step returns.

With ``lazy=True`` a target whose module is not imported yet is patched
right after its module is first imported (a ``sys.meta_path`` finder),
so an engine plugin can install before the engine imports its runner.
A lazy target that cannot be hooked (no such attribute, not a class) never
breaks the import that reached it: it is recorded, and
:func:`unresolved_targets` lists it with the targets whose module was
never imported, for the plugins' summaries.
"""

from __future__ import annotations

import functools
import importlib
import importlib.abc
import importlib.util
import inspect
import sys
import threading
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from padlint.runtime import context
from padlint.runtime.checker import Checker
from padlint.runtime.context import StepCounts, row_count
from padlint.runtime.errors import warn
from padlint.runtime.spec import ClassSpec, ProviderSpec, RuntimeSpec

#: pytest leaves padlint's own frames (and their locals) out of tracebacks
__tracebackhide__ = True

_MISSING = object()


@dataclass
class _Patch:
    owner: Any
    name: str
    old: Any  # the value in owner.__dict__ before, or _MISSING

    def undo(self) -> None:
        if self.old is _MISSING:
            try:
                delattr(self.owner, self.name)
            except AttributeError:
                pass
        else:
            setattr(self.owner, self.name, self.old)


@dataclass(frozen=True)
class Unresolved:
    """A target that hooks nothing: ``kind`` "provider", "class" or "step"; ``reason``
    "was never imported" or "could not be hooked: <why>"."""

    kind: str
    target: str
    reason: str

    def line(self, source: str) -> str:
        """The summary warning, naming ``source`` (the ini key, or the profile table, the target came from)."""
        what = "no buffer was poisoned after it" if self.kind == "step" else "nothing was checked through it"
        return f"padlint runtime: warning: target {self.target!r} ({source}) {self.reason}: {what}"


@dataclass
class Installation:
    """The installed hooks: checker, patches, targets not (yet) found, post-import finder.

    ``waiting``: module name -> (kind, target, apply) of lazy targets whose
    module is not imported yet; ``failed``: lazy targets that could not be hooked.
    """

    checker: Checker
    patches: list[_Patch] = field(default_factory=list)
    waiting: dict[str, list[tuple[str, str, Callable[[Any], None]]]] = field(default_factory=dict)
    failed: list[Unresolved] = field(default_factory=list)
    finder: Any = None
    poison: Any = None
    #: targets hooked (patched at least once)
    hooked: set[str] = field(default_factory=set)
    #: provider label -> number of calls that gave no counts (see :func:`no_count_providers`)
    no_counts: dict[str, int] = field(default_factory=dict)
    no_count_names: dict[str, str] = field(default_factory=dict)


#: The current installation (None when nothing is installed): the only global state.
_INSTALLED: Installation | None = None
_LOCK = threading.RLock()


def installed() -> Installation | None:
    """The current installation, or None."""
    return _INSTALLED


def current_checker() -> Checker | None:
    """The installed :class:`Checker` (its ``stats`` is the tally), or None."""
    inst = installed()
    return inst.checker if inst else None


checker = current_checker  # short internal name


def _split(target: str) -> tuple[str, list[str]]:
    if ":" not in target:
        raise ValueError(f"target {target!r}: expected 'module:Qualified.name'")
    mod, qual = target.split(":", 1)
    return mod, qual.split(".")


def _resolve(module: Any, parts: list[str]) -> tuple[Any, str, Any]:
    """(owner, name, value) of ``module.<parts>``; AttributeError naming the missing part."""
    obj: Any = module
    owner: Any = module
    for i, p in enumerate(parts):
        owner = obj
        try:
            obj = getattr(owner, p)
        except AttributeError:
            where = ".".join([module.__name__, *parts[:i]])
            raise AttributeError(f"{where} has no attribute {p!r}") from None
    return owner, parts[-1], obj


def _patch(inst: Installation, owner: Any, name: str, new: Any) -> None:
    """Set ``owner.name = new``, remembered for :func:`uninstall` only once it took
    (an immutable type refuses it: TypeError, and nothing is left to undo)."""
    old = owner.__dict__.get(name, _MISSING) if hasattr(owner, "__dict__") else _MISSING
    setattr(owner, name, new)
    inst.patches.append(_Patch(owner, name, old))


def _function(kind: str, target: str, value: Any) -> None:
    """A provider or step target must name a function or method; raises TypeError otherwise
    (wrapping a class would replace it by a function, breaking ``isinstance``)."""
    if isinstance(value, type) or not callable(value):
        what = "a class" if isinstance(value, type) else f"a {type(value).__name__}"
        raise TypeError(f"{kind} {target}: names {what}, not a function or method")


# -- provider ------------------------------------------------------------------
def _arg_getter(func: Callable, name: str) -> Callable[[tuple, dict], Any]:
    """A fast getter of argument ``name`` from (args, kwargs), honouring defaults.

    ``name`` may continue with attribute names (``input_batch.num_reqs``): the
    argument's attribute, None when an attribute is missing (read from the
    instance's ``__dict__`` first: a count is data, never a computed property).
    """
    if "." in name:
        first, *attrs = name.split(".")
        base = _arg_getter(func, first)

        def dotted(a: tuple, k: dict) -> Any:
            obj = base(a, k)
            for attr in attrs:
                if obj is None:
                    return None
                d = getattr(obj, "__dict__", None)
                obj = d[attr] if d is not None and attr in d else getattr(obj, attr, None)
            return obj
        return dotted
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return lambda a, k: k.get(name)
    for i, p in enumerate(params):
        if p.name == name:
            default = None if p.default is inspect.Parameter.empty else p.default
            if p.kind is inspect.Parameter.KEYWORD_ONLY:
                return lambda a, k: k.get(name, default)
            return lambda a, k: k[name] if name in k else (a[i] if i < len(a) else default)
    return lambda a, k: k.get(name)


def _wrap_provider(inst: Installation, spec: ProviderSpec, module: Any) -> None:
    owner, name, func = _resolve(module, _split(spec.target)[1])
    _function("provider", spec.target, func)
    raw = owner.__dict__.get(name, func) if isinstance(owner, type) else func
    if isinstance(raw, (staticmethod, classmethod)):
        raise TypeError(f"provider {spec.target}: static and class methods are not supported")
    chk = inst.checker
    g_rr, g_rp = _arg_getter(func, spec.reqs[0]), _arg_getter(func, spec.reqs[1])
    g_tr, g_tp = _arg_getter(func, spec.tokens[0]), _arg_getter(func, spec.tokens[1])
    names = {"reqs": spec.reqs, "tokens": spec.tokens}
    label = spec.target.split(":", 1)[1]
    warned: list[bool] = []
    no_counts = inst.no_counts
    inst.no_count_names[label] = f"reqs from {spec.reqs[0]}, tokens from {spec.tokens[0]}"

    @functools.wraps(func)
    def provider(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        if not chk.active:
            return func(*args, **kwargs)
        bad = False
        try:
            rr, rp = _pair(g_rr(args, kwargs), g_rp(args, kwargs), spec.reqs)
            tr, tp = _pair(g_tr(args, kwargs), g_tp(args, kwargs), spec.tokens)
        except (TypeError, ValueError) as e:  # never out of the user's call: its objects go unchecked
            rr = rp = tr = tp = None
            bad = True
            if not warned:
                warned.append(True)
                warn(f"padlint runtime: {label} was called with counts that are not row counts "
                     f"({e}): the objects built in such calls are not checked", RuntimeWarning,
                     quiet=True, stacklevel=2)
        if rr is None and tr is None and not bad:  # attached, but no counts: say so (objects inside get inferred counts)
            n = no_counts.get(label, 0)
            no_counts[label] = n + 1
            if not n:
                warn(f"padlint runtime: provider {label} gave no counts ({inst.no_count_names[label]}): "
                     f"objects built in it are checked with counts inferred from the object, or not at all",
                     RuntimeWarning, quiet=True, stacklevel=2)
            return func(*args, **kwargs)
        counts = StepCounts(rr, rp, tr, tp, provider=label, names=names, frame=sys._getframe(1))
        context.push(counts)
        try:
            result = func(*args, **kwargs)
        finally:
            context.pop()
        if spec.check_result and result is not None and not any(o is result for o, _ in counts.seen):
            chk.check_object(result, counts, when="provider return (its result)")
        chk.on_provider_return(counts, result)
        counts.seen.clear()
        counts.frame = None
        return result

    provider.__padlint_wrapped__ = func  # type: ignore[attr-defined]
    _patch(inst, owner, name, provider)
    _patch_imported_copies(inst, owner, func, provider)


def _patch_imported_copies(inst: Installation, owner: Any, func: Any, new: Any) -> None:
    """A module-level function is also a global of every module that imported it by name
    (``from vllm.v1.worker.gpu.attn_utils import build_attn_metadata``): patch each of them
    (matched by identity, or by code object for a re-created copy), so no call escapes."""
    if not isinstance(owner, type(sys)):
        return
    code = getattr(func, "__code__", None)
    for mod in list(sys.modules.values()):
        if mod is owner or not isinstance(mod, type(sys)):
            continue
        d = mod.__dict__
        for key, value in list(d.items()):
            # only plain functions are asked for their code (a lazy module proxy would import on getattr)
            if value is func or (code is not None and type(value) is types.FunctionType
                                 and value.__code__ is code and not hasattr(value, "__padlint_wrapped__")):
                _patch(inst, mod, key, new)


def _pair(real: Any, padded: Any, names: tuple[str, str]) -> tuple[int | None, int | None]:
    """A provider call's (real, padded) counts as ints; padded None means not padded (vLLM
    passes ``num_reqs_padded=None`` outside full CUDA graphs).  Raises TypeError or
    ValueError for counts that are not row counts, or padded below real."""
    if real is None:
        return None, None
    r = row_count(real, names[0])
    p = r if padded is None else row_count(padded, names[1])
    if p < r:
        raise ValueError(f"{names[1]}={p} is below {names[0]}={r}")
    return r, p


# -- metadata classes -----------------------------------------------------------
def _wrap_class(inst: Installation, spec: ClassSpec, module: Any) -> None:
    _, _, cls = _resolve(module, _split(spec.target)[1])
    if not isinstance(cls, type):
        raise TypeError(f"metadata class {spec.target}: not a class")
    chk = inst.checker
    chk.register_class(cls, spec.infer_from, tuple(n for n, _ in spec.exempt))
    orig_init = cls.__init__
    orig_setattr = cls.__setattr__
    # A duplicate target, or a subclass inheriting a hooked class's wrappers: wrapping them
    # again would check every object (and store) twice.
    wrap_init = not hasattr(orig_init, "__padlint_wrapped__")
    wrap_setattr = not hasattr(orig_setattr, "__padlint_wrapped__")
    checked = frozenset(r.name for r in chk.spec.rules)
    local = context.local()
    # A class without an __init__ of its own (a NamedTuple: __new__ takes the fields) inherits
    # object.__init__, which refuses arguments once __init__ is overridden: call it without them.
    bare_init = orig_init is object.__init__

    @functools.wraps(orig_init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        __tracebackhide__ = True
        local.init_depth += 1
        try:
            if bare_init:
                orig_init(self)
            else:
                orig_init(self, *args, **kwargs)
        finally:
            local.init_depth -= 1
        if chk.active and not local.init_depth:
            chk.check_object(self, frame=sys._getframe(1))

    def __setattr__(self: Any, key: str, value: Any) -> None:
        __tracebackhide__ = True
        orig_setattr(self, key, value)
        if key in checked and value is not None and not local.init_depth and chk.active:
            chk.check_object(self, when="attribute store", frame=sys._getframe(1), only=(key,))

    __init__.__padlint_wrapped__ = orig_init  # type: ignore[attr-defined]
    __setattr__.__padlint_wrapped__ = orig_setattr  # type: ignore[attr-defined]
    if wrap_init:
        _patch(inst, cls, "__init__", __init__)
    if wrap_setattr:
        _patch(inst, cls, "__setattr__", __setattr__)


def _attr_path(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _wrap_step(inst: Installation, target: str, module: Any) -> None:
    owner, name, func = _resolve(module, _split(target)[1])
    _function("step", target, func)
    # runners whose profile buffers are registered: weakly, so that a new runner at a dead
    # one's address is registered too (ids of runners without weak references as a fallback)
    registered: weakref.WeakSet = weakref.WeakSet()
    registered_ids: set[int] = set()

    def is_registered(runner: Any) -> bool:
        try:
            return runner in registered
        except TypeError:
            return id(runner) in registered_ids

    def register_profile_buffers(runner: Any) -> None:
        """Register the profile's ``[runtime.poison]`` buffers of this runner, once per runner."""
        try:
            registered.add(runner)
        except TypeError:
            registered_ids.add(id(runner))
        missing = []
        for p in inst.checker.spec.poison:
            try:
                buf = _attr_path(runner, p.path)
            except Exception:  # noqa: BLE001 - a runner property that raises: not found; never out of the step
                buf = None
            if buf is None:
                missing.append(f"{type(runner).__name__}.{p.path}")
                continue
            inst.poison.register(buf, axis=p.axis, sentinel=p.sentinel, name=p.path, quiet=True, owner=runner)
        inst.poison.note_missing(missing)

    @functools.wraps(func)
    def step(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        context.clear_last()  # only a provider call made by this step may give the counts to poison
        try:
            return func(*args, **kwargs)
        finally:
            if inst.poison is not None and inst.checker.active:
                if args and inst.checker.spec.poison and not is_registered(args[0]):
                    register_profile_buffers(args[0])
                inst.poison.after_step(context.last())  # None (no provider call): nothing poisoned

    step.__padlint_wrapped__ = func  # type: ignore[attr-defined]
    _patch(inst, owner, name, step)
    _patch_imported_copies(inst, owner, func, step)


# -- post-import hook ------------------------------------------------------------
class _PostImportFinder(importlib.abc.MetaPathFinder):
    """Patches waiting targets right after their module is executed."""

    def __init__(self, inst: Installation):
        self.inst = inst
        self._busy: set[str] = set()

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in self.inst.waiting or fullname in self._busy:
            return None
        self._busy.add(fullname)
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self._busy.discard(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader = spec.loader
        inst = self.inst

        class _Loader(importlib.abc.Loader):
            def create_module(self, s: Any) -> Any:
                return loader.create_module(s)

            def exec_module(self, module: Any) -> None:
                loader.exec_module(module)
                _apply_waiting(inst, fullname, module)

            def __getattr__(self, name: str) -> Any:  # get_data, get_resource_reader, ...
                return getattr(loader, name)

        spec.loader = _Loader()
        return spec


def _apply_lazily(inst: Installation, kind: str, target: str, apply: Callable[[Any], None], module: Any) -> None:
    """Hook one lazy target; a failure is recorded (and its patches undone), never raised:
    this runs inside whatever import reached the module."""
    n = len(inst.patches)
    try:
        apply(module)
        inst.hooked.add(target)
    except Exception as e:  # noqa: BLE001 - a typo in a target must not break the user's import
        for p in reversed(inst.patches[n:]):
            p.undo()
        del inst.patches[n:]
        inst.failed.append(Unresolved(kind, target, f"could not be hooked: {e}"))


def _apply_waiting(inst: Installation, modname: str, module: Any) -> None:
    with _LOCK:
        for kind, target, apply in inst.waiting.pop(modname, []):
            _apply_lazily(inst, kind, target, apply, module)


def unresolved_targets(inst: Installation | None = None) -> list[Unresolved]:
    """Targets of ``inst`` (default: the current installation) that hook nothing: lazy
    targets that could not be hooked, and those whose module was never imported
    (the step only with poison mode on: it does nothing else)."""
    inst = installed() if inst is None else inst
    if inst is None:
        return []
    with _LOCK:
        out = list(inst.failed)
        for modname, entries in inst.waiting.items():
            reason = ("was imported without passing padlint's post-import hook" if modname in sys.modules
                      else "was never imported")
            out.extend(Unresolved(kind, target, reason) for kind, target, _ in entries)
    # a profile may name several providers, one per runner (vLLM's v1 runner and Model Runner
    # V2's model states): one whose module was never imported is no news once another was hooked
    any_provider = any(p.target in inst.hooked for p in inst.checker.spec.providers)
    return [u for u in out if (u.kind != "step" or inst.poison is not None)
            and not (u.kind == "provider" and any_provider and u.reason == "was never imported")]


def no_count_providers(inst: Installation | None = None) -> list[str]:
    """Summary warnings for providers that were called but gave no counts (a count name
    that is no argument, or an attribute path that does not exist), one line each."""
    inst = installed() if inst is None else inst
    if inst is None:
        return []
    return [f"padlint runtime: warning: provider {label} was called {n} time(s) but gave no counts "
            f"({inst.no_count_names.get(label, '')}): the objects built in it were checked with counts "
            f"inferred from the object, or not at all" for label, n in sorted(inst.no_counts.items())]


def coverage_lines(inst: Installation | None = None) -> list[str]:
    """Profile coverage: one warning per hooked class with tensor fields that the profile
    neither checks (``[fields]``) nor exempts (``[exempt]``, ``[runtime.classes.exempt]``)."""
    inst = installed() if inst is None else inst
    if inst is None:
        return []
    chk = inst.checker
    return [f"padlint runtime: warning: {cls} has tensor fields that profile {chk.spec.profile!r} neither checks "
            f"nor exempts: {', '.join(names)}: not checked (add [fields.<name>] with axis and neutral, or "
            f"[runtime.classes.exempt] with the reason)" for cls, names in sorted(chk.unknown_fields.items())]


def hooked_anything(inst: Installation | None = None) -> bool:
    """True when at least one provider or metadata class was hooked."""
    inst = installed() if inst is None else inst
    if inst is None:
        return False
    spec = inst.checker.spec
    return any(t in inst.hooked for t in [p.target for p in spec.providers] + [c.target for c in spec.classes])


# -- public API ------------------------------------------------------------------
def install(profile: Any = "vllm", *, mode: str = "strict", provider: Any = ..., classes: Any = ...,
            step: Any = ..., cuda_policy: str = "deferred", lazy: bool = False, poison: bool = False,
            poison_buffers: Any = ..., spec: RuntimeSpec | None = None) -> Checker:
    """Install the runtime hooks and return the :class:`Checker`.

    ``profile``: a profile name or :class:`padlint.profile.Profile`;
    ``provider``/``classes``/``step`` override its ``[runtime]`` tables
    (``None`` disables one).  ``mode``: "strict", "record" or "off".
    ``lazy``: targets whose module is not imported yet are patched when
    it is imported, and a target that cannot be hooked (no such attribute)
    is recorded for :func:`unresolved_targets` instead of raising;
    otherwise importing a target module that fails raises ``ImportError``
    and a missing attribute ``AttributeError``.  ``poison``: enable poison mode: after each step, the
    profile's ``[runtime.poison]`` buffers of the step's runner (or
    ``poison_buffers``: ``(attribute path, axis, sentinel)`` tuples) and
    buffers registered with :func:`padlint.runtime.register_poison_buffer`
    get their sentinel.
    Raises RuntimeError if hooks are already installed (call :func:`uninstall`);
    ValueError when there is nothing to hook (a profile without ``[runtime]``
    tables, such as the experimental sglang one, and no overrides).
    """
    global _INSTALLED
    from padlint.runtime.spec import _UNSET, runtime_spec

    def arg(v: Any) -> Any:
        return _UNSET if v is ... else v

    with _LOCK:
        if installed() is not None:
            raise RuntimeError("padlint runtime hooks are already installed; call padlint.runtime.uninstall() first")
        if spec is None:
            spec = runtime_spec(profile, provider=arg(provider), classes=arg(classes), step=arg(step),
                                poison=arg(poison_buffers))
        if spec.provider is None and not spec.classes and not spec.step:
            raise ValueError(f"profile {spec.profile!r} names no [runtime] provider, metadata classes or step: "
                             f"nothing to hook (give provider=/classes=, or use a profile with [runtime] "
                             f"tables, such as vllm)")
        inst = Installation(Checker(spec, mode=mode, cuda_policy=cuda_policy))
        if poison:
            from padlint.runtime.poison import Poisoner
            inst.poison = Poisoner()
        todo: list[tuple[str, str, Callable[[Any], None]]] = []
        for c in spec.classes:
            todo.append(("class", c.target, functools.partial(lambda c, m: _wrap_class(inst, c, m), c)))
        for p in spec.providers:
            todo.append(("provider", p.target, functools.partial(lambda p, m: _wrap_provider(inst, p, m), p)))
        if spec.step:
            todo.append(("step", spec.step, lambda m: _wrap_step(inst, spec.step, m)))
        try:
            for kind, target, apply in todo:
                modname = _split(target)[0]
                module = sys.modules.get(modname)
                if lazy:
                    if module is None:
                        inst.waiting.setdefault(modname, []).append((kind, target, apply))
                    else:
                        _apply_lazily(inst, kind, target, apply, module)
                    continue
                if module is None:
                    module = importlib.import_module(modname)
                apply(module)
                inst.hooked.add(target)
        except BaseException:
            for p in reversed(inst.patches):
                p.undo()
            raise
        if inst.waiting:
            inst.finder = _PostImportFinder(inst)
            sys.meta_path.insert(0, inst.finder)
        _INSTALLED = inst
        return inst.checker


def uninstall() -> Checker | None:
    """Remove every hook (and the post-import finder); returns the old checker (its
    tally stays readable).  Deferred device checks are flushed first (they
    may raise in strict mode, after the hooks are gone).  No-op when nothing
    is installed."""
    global _INSTALLED
    with _LOCK:
        inst, _INSTALLED = _INSTALLED, None
        if inst is None:
            return None
        if inst.finder is not None and inst.finder in sys.meta_path:
            sys.meta_path.remove(inst.finder)
        for p in reversed(inst.patches):
            p.undo()
        inst.patches.clear()
    inst.checker.flush()
    return inst.checker
