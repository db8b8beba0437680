"""The runtime checker's view of an engine profile (no torch).

Built from the same :class:`padlint.profile.Profile` the static checker
reads, so both checkers share one model of the invariant: per field the
axis ("reqs", "reqs+1", "tokens"), the neutral (pad) value and why.  The
``[runtime]`` tables add what only the runtime needs: the *provider*
(the function whose arguments give the real and padded counts of a step),
the metadata classes to hook, and the step function after which poison
mode fills padding rows with a sentinel.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from padlint.profile import AXES, Profile, ProfileError, load_profile, parse_neutral
from padlint.profile import _names as _profile_names
from padlint.profile import _string as _profile_string
from padlint.profile import _table as _profile_table


class _Flat:
    """Neutral value of cumulative offsets: every padding entry equals the last real offset."""

    def __repr__(self) -> str:
        return "flat"


#: Marker for the "flat" neutral value (``query_start_loc``: padding requests are empty).
FLAT = _Flat()


@dataclass(frozen=True)
class FieldRule:
    """How one metadata field is checked.

    ``axis`` "reqs": ``Tensor[num_reqs_padded, ...]``, padding rows ``[num_reqs:num_reqs_padded)``;
    "reqs+1": ``Tensor[num_reqs_padded + 1]``, padding rows ``[num_reqs + 1:num_reqs_padded + 1)``;
    "tokens": ``Tensor[num_tokens_padded, ...]``, padding rows ``[num_tokens:num_tokens_padded)``.
    ``neutral`` is the Python value (``False``, ``0``, ``-1``) or :data:`FLAT`;
    ``neutral_text`` is the profile text ("NULL_BLOCK_ID"), ``why`` the profile's reason.
    """

    name: str
    axis: str
    neutral: Any
    neutral_text: str
    why: str = ""

    def expected_text(self) -> str:
        if self.neutral is FLAT:
            return "flat (equal to the last real cumulative offset)"
        if self.neutral_text != repr(self.neutral):
            return f"{self.neutral_text} = {self.neutral!r}"
        return repr(self.neutral)


@dataclass(frozen=True)
class ProviderSpec:
    """The function whose arguments give a step's real and padded counts.

    ``target`` is ``"module:Class.method"`` or ``"module:function"``;
    ``reqs``/``tokens`` are the (real, padded) counts: an argument name
    (``num_reqs``), or an argument name followed by attribute names
    (``input_batch.num_reqs_after_padding``: vLLM Model Runner V2 keeps a
    step's counts on its ``InputBatch``).  A padded count that is None or
    missing means "not padded" (vLLM passes ``num_reqs_padded=None`` when
    the step does not use a full CUDA graph), so padded = real.
    """

    target: str
    reqs: tuple[str, str] = ("num_reqs", "num_reqs_padded")
    tokens: tuple[str, str] = ("num_tokens", "num_tokens_padded")
    #: the return value itself is a metadata object (SGLang's ``build_replay_fb_view`` returns a
    #: ``SimpleNamespace`` view of the padded buffers): check its profile fields with the call's counts
    check_result: bool = False


@dataclass(frozen=True)
class ClassSpec:
    """A metadata class checked at construction and on attribute stores.

    ``infer_from``: cumulative-offset fields (first present CPU one wins)
    from which the real request count is inferred when no provider call is
    active: trailing requests with zero query length are padding.
    ``exempt``: fields of this class not checked, with the reason.
    """

    target: str
    infer_from: tuple[str, ...] = ()
    exempt: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class PoisonSpec:
    """A source buffer poison mode fills, as an attribute path from the step's ``self``.

    ``path``: e.g. ``"input_batch.num_computed_tokens_cpu_tensor"``; ``axis``
    as for fields; ``sentinel``: None for the per-dtype default.
    """

    path: str
    axis: str = "reqs"
    sentinel: Any = None


@dataclass(frozen=True)
class RuntimeSpec:
    """Everything the runtime checker reads from a profile."""

    profile: str
    rules: tuple[FieldRule, ...]
    exempt: tuple[tuple[str, str], ...] = ()
    provider: ProviderSpec | None = None
    classes: tuple[ClassSpec, ...] = ()
    #: every provider (``provider`` is the first): a profile may describe several runners
    #: (vLLM's v1 ``GPUModelRunner`` and Model Runner V2's model states)
    providers: tuple[ProviderSpec, ...] = ()
    step: str | None = None
    poison: tuple[PoisonSpec, ...] = ()
    constants: tuple[tuple[str, Any], ...] = ()
    by_name: dict[str, FieldRule] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        self.by_name.update({r.name: r for r in self.rules})
        if self.provider is not None and not self.providers:
            object.__setattr__(self, "providers", (self.provider,))
        elif self.providers and self.provider is None:
            object.__setattr__(self, "provider", self.providers[0])

    def rule(self, name: str) -> FieldRule | None:
        """The :class:`FieldRule` of metadata field ``name`` (axis, neutral value, reason),
        or None when the profile has no ``[fields.<name>]``; raises nothing."""
        return self.by_name.get(name)

    def count_names(self, axis: str) -> tuple[str, str]:
        """Names of the (real, padded) counts on ``axis`` as the provider spells them."""
        p = self.provider or ProviderSpec("")
        return p.tokens if axis == "tokens" else p.reqs

    def reset_text(self, rule: FieldRule, names: dict[str, tuple[str, str]] | None = None) -> str:
        """The reset that would fix a stale ``rule.name``, in the provider's terms
        (``names``: axis -> (real, padded) of the provider call, else the first provider's).

        e.g. ``is_prefilling[num_reqs:num_reqs_padded] = False``.
        """
        key = "tokens" if rule.axis == "tokens" else "reqs"
        real, padded = names[key] if names and key in names else self.count_names(rule.axis)
        if rule.axis == "reqs+1":
            return (f"{rule.name}[{real} + 1:{padded} + 1] = {rule.name}[{real}]"
                    f"   (e.g. buf.np[{real} + 1:].fill(last_offset) before the copy to the device)")
        value = rule.neutral_text if rule.neutral is not FLAT else "0"
        return f"{rule.name}[{real}:{padded}] = {value}   (or buf[{real}:].fill_({value}) on the persistent buffer)"


def _pair(value: Any, where: str) -> tuple[str, str]:
    """[real_name, padded_name]: two non-empty strings (the profile's name-list check, then the length)."""
    names = _profile_names(value, where)
    if len(names) != 2:
        raise ProfileError(f"{where}: expected [real_name, padded_name], got {value!r}")
    return (names[0], names[1])


def _names(value: Any, where: str) -> tuple[str, ...]:
    """None, one name, or a list of non-empty names (the profile's check)."""
    if value is None:
        return ()
    if isinstance(value, str) and value.strip():
        return (value,)
    return _profile_names(value, where)


_UNSET: Any = object()
_PROVIDER_KEYS = ("target", "reqs", "tokens", "check_result")
_POISON_KEYS = ("axis", "sentinel")
_DEFAULT_REQS = ["num_reqs", "num_reqs_padded"]
_DEFAULT_TOKENS = ["num_tokens", "num_tokens_padded"]


def _provider_counts(table: Any, where: str) -> tuple[tuple[str, str], tuple[str, str]]:
    """The (reqs, tokens) argument-name pairs of a ``[runtime.provider]`` table, checked."""
    table = _profile_table(table, where)
    unknown = [k for k in table if k not in _PROVIDER_KEYS]
    if unknown:
        raise ProfileError(f"{where}: unknown key {unknown[0]!r} (expected {', '.join(_PROVIDER_KEYS)})")
    return (_pair(table.get("reqs", _DEFAULT_REQS), f"{where}.reqs"),
            _pair(table.get("tokens", _DEFAULT_TOKENS), f"{where}.tokens"))


def _provider_specs(value: Any, where: str) -> tuple[ProviderSpec, ...]:
    """``[runtime.provider]`` (one table) or ``[[runtime.provider]]`` (an array of tables)."""
    if value is None:
        return ()
    tables = value if isinstance(value, list) else [value]
    out = []
    for i, p in enumerate(tables):
        w = f"{where}[{i}]" if isinstance(value, list) else where
        if not isinstance(p, dict) or not isinstance(p.get("target"), str):
            raise ProfileError(f"{w}: expected a table with target, got {p!r}")
        check_result = p.get("check_result", False)
        if not isinstance(check_result, bool):
            raise ProfileError(f"{w}.check_result: expected true or false, got {check_result!r}")
        out.append(ProviderSpec(_profile_string(p["target"], f"{w}.target", nonempty=True), *_provider_counts(p, w),
                                check_result=check_result))
    return tuple(out)


def _poison_specs(table: Any, where: str) -> tuple[PoisonSpec, ...]:
    """``[runtime.poison]``: a table of attribute path = { axis = ..., sentinel = ... }."""
    out = []
    for path, spec in _profile_table(table, where).items():
        key = f"{where}.{path}"
        spec = _profile_table(spec, key)
        unknown = [k for k in spec if k not in _POISON_KEYS]
        if unknown:
            raise ProfileError(f"{key}: unknown key {unknown[0]!r} (expected axis, sentinel)")
        out.append(_poison_spec(str(path), spec.get("axis", "reqs"), spec.get("sentinel"), key, ProfileError))
    return tuple(out)


def _poison_spec(path: str, axis: Any, sentinel: Any, key: str, error: type[ValueError]) -> PoisonSpec:
    if axis not in AXES:
        raise error(f"{key}.axis: expected one of {', '.join(AXES)}, got {axis!r}")
    if sentinel is not None and not isinstance(sentinel, (bool, int, float)):
        raise error(f"{key}.sentinel: expected a boolean or a number, got {sentinel!r}")
    return PoisonSpec(path, axis, sentinel)


def _poison_override(p: Any, i: int) -> PoisonSpec:
    """A ``poison=`` override: a :class:`PoisonSpec` or a ``(path[, axis[, sentinel]])`` tuple."""
    if isinstance(p, PoisonSpec):
        path, axis, sentinel = p.path, p.axis, p.sentinel
    else:
        path, axis, sentinel = (tuple(p) + (None, "reqs", None)[len(p):])[:3]
    return _poison_spec(str(path), axis, sentinel, f"poison[{i}] ({path!r})", ValueError)


def _class_spec(item: Any, where: str) -> ClassSpec:
    """One ``[[runtime.classes]]`` table: target, optional infer_from and exempt."""
    if not isinstance(item, dict) or not isinstance(item.get("target"), str):
        raise ProfileError(f"{where}: expected a table with target, got {item!r}")
    ex = item.get("exempt", {})
    if not isinstance(ex, dict) or not all(isinstance(v, str) for v in ex.values()):
        raise ProfileError(f"{where}.exempt: expected a table of field = reason, got {ex!r}")
    return ClassSpec(_profile_string(item["target"], f"{where}.target", nonempty=True),
                     _names(item.get("infer_from"), f"{where}.infer_from"),
                     tuple((str(k), v) for k, v in ex.items()))


def runtime_spec(profile: Profile | str = "vllm", *, provider: Any = _UNSET, classes: Any = _UNSET,
                 step: Any = _UNSET, poison: Any = _UNSET) -> RuntimeSpec:
    """Build the :class:`RuntimeSpec` of ``profile`` (a :class:`Profile` or a name).

    ``provider`` (a target string or :class:`ProviderSpec`, or None to
    disable), ``classes`` (target strings or :class:`ClassSpec`), ``step``
    and ``poison`` (:class:`PoisonSpec` or ``(path, axis, sentinel)``
    tuples) override the profile's ``[runtime]`` tables, so tests and
    other engines can point the hooks at their own runner.
    Raises :class:`padlint.profile.ProfileError` (a ValueError; one line,
    naming the file and the key) on a malformed ``[runtime]`` table, also
    when ``provider`` is overridden by a target string (the argument names
    still come from the profile); ValueError on a ``poison`` override with
    an unknown axis or a sentinel that is not a boolean or a number.
    """
    if isinstance(profile, str):
        profile = load_profile(profile)
    origin = profile.source or profile.name
    rules = []
    for f in profile.fields:
        value = parse_neutral(f.neutral, profile)
        rules.append(FieldRule(f.name, f.axis, FLAT if value == "flat" else value, f.neutral, f.why))
    rt = profile.runtime or {}

    profile_providers = _provider_specs(rt.get("provider"), f"{origin}: runtime.provider")
    if provider is _UNSET:
        provs = profile_providers
    elif provider is None:
        provs = ()
    else:
        items = provider if isinstance(provider, (list, tuple)) else [provider]
        provs = []
        for item in items:
            if isinstance(item, str):  # a new target; the count names still come from the profile's first provider
                base = profile_providers[0] if profile_providers else ProviderSpec("")
                provs.append(ProviderSpec(item, base.reqs, base.tokens))
            else:
                provs.append(item)
        provs = tuple(provs)
    prov = provs[0] if provs else None

    items = rt.get("classes", [])
    if not isinstance(items, list):
        raise ProfileError(f"{origin}: runtime.classes: expected an array of tables, got {items!r}")
    profile_classes = [_class_spec(item, f"{origin}: runtime.classes[{i}]") for i, item in enumerate(items)]
    if classes is _UNSET:
        cls_tuple = tuple(profile_classes)
    else:  # overridden targets infer counts from the fields the profile's first class names
        base_infer = profile_classes[0].infer_from if profile_classes else ()
        cls_tuple = tuple(c if isinstance(c, ClassSpec) else ClassSpec(str(c), base_infer) for c in classes)

    if step is _UNSET:
        s = rt.get("step")
        if s is None:
            step_target = None
        else:
            where = f"{origin}: runtime.step"
            s = _profile_table(s, where)
            step_target = _profile_string(s.get("target"), f"{where}.target", nonempty=True)
    else:
        step_target = step

    if poison is _UNSET:
        poison_specs = _poison_specs(rt.get("poison", {}), f"{origin}: runtime.poison")
    else:
        poison_specs = tuple(_poison_override(p, i) for i, p in enumerate(poison))

    return RuntimeSpec(profile=profile.name, rules=tuple(rules), exempt=profile.exempt, provider=prov,
                       providers=provs, classes=cls_tuple, step=step_target, poison=poison_specs, constants=profile.constants)
