"""The pad-value contract: what the writes that reach a sink put into its padding rows.

The interpreter records, for every sink argument, the writes covering its
padding rows (:class:`padlint.analysis.interp.PadHit`: resets, registry
policies, allocation fills of tensors made on the path).  This module judges
them against the profile's contract for the sink's field (``[fields.X]``):
its neutral value, per backend where the profile gives backends, and whether
the field holds indices.  Out come plain facts, one per (write, field):

* :class:`WrongPadValue`: a literal written into the padding rows that is not
  the field's neutral value (under the backend the analysis assumes);
* :class:`UnknownContract`: an index field (``kind = "index"`` or
  ``index_fields``) with no ``[fields]`` entry whose padding rows are written:
  the written value cannot be judged, and an index is not trusted;
* :class:`ConstructionDisagrees`: a field with no ``[fields]`` entry (or a per-backend
  one the write's module does not pin down) whose graph-bound buffer the code
  constructs with a deliberate value (``torch.full(n, self.width)``) and whose
  padding rows a reset writes another literal into.

Writes whose value is not a literal (``fill_(self.seq_len_fill_value)``) are
accepted on trust.  Rules turn the facts into findings (PAD002).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from padlint.analysis.buffers import EMPTY, UNKNOWN_VALUE, InitialValue, Site
from padlint.analysis.interp import Interpreter, PadCover, PadHit
from padlint.analysis.literals import literal_value, same_literal
from padlint.analysis.project import Project, find_root
from padlint.analysis.values import PadWrite
from padlint.profile import FieldSpec, Profile


@dataclass(frozen=True)
class WrongPadValue:
    """``site`` writes ``value`` into the padding rows that reach ``hit`` as ``field``,
    whose neutral value (under ``backend``, None: the default) is ``neutral``."""

    site: PadWrite
    field: str
    value: str
    neutral: str
    spec: FieldSpec
    backend: str | None       # the backend the neutral value was taken from (None: default)
    also_neutral_for: tuple[str, ...]  # backends under which ``value`` is the neutral value
    wraps: bool               # a negative index its consumer wraps to the last row
    hit: PadHit
    cover: PadCover
    module: str               # module of the write


@dataclass(frozen=True)
class UnknownContract:
    """An index field with no neutral value in the profile whose padding rows are written."""

    field: str
    sites: tuple[PadWrite, ...]
    hit: PadHit
    cover: PadCover
    pattern: str              # the ``index_fields`` pattern (or "kind") that makes it an index field


@dataclass(frozen=True)
class ConstructionDisagrees:
    """A field with no contract in the profile (or a per-backend one the write's module does not
    pin down: ``assumed``) whose buffer a captured CUDA graph reads (bound
    at capture, read at every replay) and which is constructed with a deliberate value
    (``torch.full(n, self.width)``, ``torch.ones``, a fill right after the allocation: anything
    but zeros, ``False`` or no value), so capture ran every row, its dummy requests, with that
    value; while ``site`` writes another literal into the padding rows that reach ``hit``: the
    code states two pad values for one field."""

    site: PadWrite
    field: str
    value: str
    constructed: str          # the construction's value as the code writes it
    construction: Site
    hit: PadHit
    cover: PadCover
    #: "" for a field without a contract; else what the profile's per-backend contract assumes
    #: where the code does not tell the backend (the written literal is neutral only there)
    assumed: str = ""


@dataclass
class PadValueFacts:
    wrong: list[WrongPadValue]
    unknown: list[UnknownContract]
    disagree: list[ConstructionDisagrees] = field(default_factory=list)


def _deliberate(init: InitialValue | None) -> str:
    """The construction value as code writes it when it is a deliberate pad value (a reference,
    or a literal other than 0 / False), else ""."""
    if init is None:
        return ""
    if init.expr:
        return init.expr
    if init.value in (EMPTY, UNKNOWN_VALUE):
        return ""
    v = literal_value(init.value)
    return "" if v in (0, False) or isinstance(v, (list, tuple)) else init.value


def _construction_disagrees(interp: Interpreter, hit: PadHit, cover: PadCover, profile: Profile) -> list:
    bound = interp.graph_bound_locs.get(cover.loc) if cover.loc and not cover.derived else None
    if not bound:
        return []  # only a buffer a captured graph reads: capture ran it with that value in every row
    for cls_key, attr in bound:
        cls = interp.project.class_info(cls_key)
        written = interp.graph.capture_writes(cls) if cls is not None else frozenset({attr})
        if any(w == attr or w.startswith(attr + ".") for w in written):
            return []  # capture writes the buffer itself: it did not run with the construction value
    init = interp.construction_value(cover.loc)
    constructed = _deliberate(init)
    if not constructed:
        return []
    out = []
    for group in cover.writes:
        for s in sorted(group):
            if s.kind == "fill" or not s.value or "|" in s.value:
                continue  # an allocation of its own, or a value that is not one literal
            if init.expr or same_literal(s.value, init.value, profile) is False:
                out.append(ConstructionDisagrees(s, hit.field, s.value, constructed, init.site, hit, cover))
    return out


def _same(written: str, neutral: str, profile: Profile) -> bool | None:
    """Whether literal ``written`` equals the neutral value ``neutral`` (None: cannot tell)."""
    return same_literal(written, neutral, profile)


def _module_of(path: str, project: Project, keys: dict[str, str]) -> str:
    key = keys.get(path) or project.key_for_path(path)
    if key:
        return key
    found = find_root(path) if path else None
    return found[1] if found else ""


def _accepted(site: PadWrite, spec: FieldSpec, profile: Profile, module: str) -> bool:
    neutral, _b = spec.neutral_in(module)
    return _same(site.value, neutral, profile) is not False


def pad_value_facts(interp: Interpreter, profile: Profile, project: Project,
                    keys: dict[str, str]) -> PadValueFacts:
    """Judge every write covering the padding rows of a sink argument (see the module doc)."""
    wrong: dict[tuple, WrongPadValue] = {}
    unknown: dict[str, UnknownContract] = {}
    disagree: dict[tuple, ConstructionDisagrees] = {}
    modules: dict[str, str] = {}

    def module(path: str) -> str:
        if path not in modules:
            modules[path] = _module_of(path, project, keys)
        return modules[path]

    for hit in sorted(interp.pad_hits.values(), key=lambda h: (h.path, h.stmt_line, h.field)):
        spec = profile.field_spec(hit.field)
        for cover in sorted(hit.covers, key=lambda c: (c.buffer, c.padded, c.offset)):
            if spec is None:
                if not profile.is_index_field(hit.field):
                    for d in _construction_disagrees(interp, hit, cover, profile):
                        disagree.setdefault((d.site, d.field), d)
                if profile.is_index_field(hit.field) and hit.field not in unknown:
                    sites = tuple(sorted({s for group in cover.writes for s in group}))
                    if sites:
                        pattern = next(p for p in profile.index_fields if _match(hit.field, p))
                        unknown[hit.field] = UnknownContract(hit.field, sites, hit, cover, pattern)
                continue
            if spec.backends:
                # the contract depends on the backend and the write's module does not tell which:
                # a literal the assumed backend accepts may still contradict a construction value
                # the code computes (`torch.full(n, self.seq_len_fill_value)`)
                for d in _construction_disagrees(interp, hit, cover, profile):
                    mod = module(d.site.path)
                    if spec.neutral_in(mod)[1] is None and _accepted(d.site, spec, profile, mod):
                        disagree.setdefault((d.site, d.field), replace(d, assumed=spec.assumed_backend or "default"))
            # the rows hold the neutral value where one covering reset writes it on every path
            if any(all(_accepted(s, spec, profile, module(s.path)) for s in group) for group in cover.writes):
                continue
            for group in cover.writes:
                for s in sorted(group):
                    mod = module(s.path)
                    if _accepted(s, spec, profile, mod):
                        continue
                    key = (s, hit.field)
                    if key in wrong:
                        continue
                    neutral, backend = spec.neutral_in(mod)
                    others = tuple(b.name for b in spec.backends
                                   if b is not backend and _same(s.value, b.neutral, profile))
                    if backend is not None and _same(s.value, spec.neutral, profile):
                        others = ("default",) + others
                    value = literal_value(s.value)
                    wraps = spec.wraps_negative and isinstance(value, int) and not isinstance(value, bool) \
                        and value < 0
                    wrong[key] = WrongPadValue(s, hit.field, s.value, neutral, spec,
                                               backend.name if backend else None, others, wraps, hit, cover, mod)
    return PadValueFacts(list(wrong.values()), list(unknown.values()), list(disagree.values()))


def _match(name: str, pattern: str) -> bool:
    import fnmatch

    return fnmatch.fnmatchcase(name, pattern)
