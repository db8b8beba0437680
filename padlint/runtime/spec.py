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

from padlint.profile import Profile, ProfileError, load_profile, parse_neutral


class _Flat:
    """Neutral value of cumulative offsets: every padding entry equals the last real offset."""

    def __repr__(self) -> str:
        return "flat"


#: Marker for the "flat" neutral value (``query_start_loc``: padding requests are empty).
FLAT = _Flat()

#: Axes a field may have; "reqs+1" is a cumulative-offset buffer with a leading 0.
AXES = ("reqs", "reqs+1", "tokens")


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

    ``target`` is ``"module:Class.method"``; ``reqs``/``tokens`` are the
    argument names (real, padded).  A padded argument that is None or
    missing means "not padded" (vLLM passes ``num_reqs_padded=None`` when
    the step does not use a full CUDA graph), so padded = real.
    """

    target: str
    reqs: tuple[str, str] = ("num_reqs", "num_reqs_padded")
    tokens: tuple[str, str] = ("num_tokens", "num_tokens_padded")


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
    step: str | None = None
    poison: tuple[PoisonSpec, ...] = ()
    constants: tuple[tuple[str, Any], ...] = ()
    by_name: dict[str, FieldRule] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        self.by_name.update({r.name: r for r in self.rules})

    def rule(self, name: str) -> FieldRule | None:
        return self.by_name.get(name)

    def count_names(self, axis: str) -> tuple[str, str]:
        """Names of the (real, padded) counts on ``axis`` as the provider spells them."""
        p = self.provider or ProviderSpec("")
        return p.tokens if axis == "tokens" else p.reqs

    def reset_text(self, rule: FieldRule) -> str:
        """The reset that would fix a stale ``rule.name``, in the provider's terms.

        e.g. ``is_prefilling[num_reqs:num_reqs_padded] = False``.
        """
        real, padded = self.count_names(rule.axis)
        if rule.axis == "reqs+1":
            return (f"{rule.name}[{real} + 1:{padded} + 1] = {rule.name}[{real}]"
                    f"   (e.g. buf.np[{real} + 1:].fill(last_offset) before the copy to the device)")
        value = rule.neutral_text if rule.neutral is not FLAT else "0"
        return f"{rule.name}[{real}:{padded}] = {value}   (or buf[{real}:].fill_({value}) on the persistent buffer)"


def _pair(value: Any, where: str) -> tuple[str, str]:
    if (not isinstance(value, (list, tuple)) or len(value) != 2
            or not all(isinstance(v, str) for v in value)):
        raise ProfileError(f"{where}: expected [real_name, padded_name]")
    return (value[0], value[1])


def _names(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ProfileError(f"{where}: expected a name or a list of names")


_UNSET: Any = object()


def _poison_specs(table: Any, where: str) -> tuple[PoisonSpec, ...]:
    if not isinstance(table, dict):
        raise ProfileError(f"{where}: expected a table of path = {{ axis = ..., sentinel = ... }}")
    out = []
    for path, spec in table.items():
        spec = spec if isinstance(spec, dict) else {}
        axis = spec.get("axis", "reqs")
        if axis not in AXES:
            raise ProfileError(f"{where}.{path}.axis: expected one of {', '.join(AXES)}, got {axis!r}")
        out.append(PoisonSpec(str(path), axis, spec.get("sentinel")))
    return tuple(out)


def runtime_spec(profile: Profile | str = "vllm", *, provider: Any = _UNSET, classes: Any = _UNSET,
                 step: Any = _UNSET, poison: Any = _UNSET) -> RuntimeSpec:
    """Build the :class:`RuntimeSpec` of ``profile`` (a :class:`Profile` or a name).

    ``provider`` (a target string or :class:`ProviderSpec`, or None to
    disable), ``classes`` (target strings or :class:`ClassSpec`), ``step``
    and ``poison`` (:class:`PoisonSpec` or ``(path, axis, sentinel)``
    tuples) override the profile's ``[runtime]`` tables, so tests and
    other engines can point the hooks at their own runner.
    Raises :class:`padlint.profile.ProfileError` on a malformed table.
    """
    if isinstance(profile, str):
        profile = load_profile(profile)
    origin = profile.source or profile.name
    rules = []
    for f in profile.fields:
        value = parse_neutral(f.neutral, profile)
        rules.append(FieldRule(f.name, f.axis, FLAT if value == "flat" else value, f.neutral, f.why))
    rt = profile.runtime or {}

    if provider is _UNSET:
        p = rt.get("provider")
        if p is None:
            prov = None
        else:
            if not isinstance(p, dict) or not isinstance(p.get("target"), str):
                raise ProfileError(f"{origin}: runtime.provider: expected a table with target")
            prov = ProviderSpec(p["target"],
                                _pair(p.get("reqs", ["num_reqs", "num_reqs_padded"]), f"{origin}: runtime.provider.reqs"),
                                _pair(p.get("tokens", ["num_tokens", "num_tokens_padded"]), f"{origin}: runtime.provider.tokens"))
    elif isinstance(provider, str):
        base = rt.get("provider") or {}
        prov = ProviderSpec(provider, tuple(base.get("reqs", ("num_reqs", "num_reqs_padded"))),
                            tuple(base.get("tokens", ("num_tokens", "num_tokens_padded"))))
    else:
        prov = provider

    if classes is _UNSET:
        items = rt.get("classes", [])
        if not isinstance(items, list):
            raise ProfileError(f"{origin}: runtime.classes: expected an array of tables")
        cls_specs = []
        for i, item in enumerate(items):
            if not isinstance(item, dict) or not isinstance(item.get("target"), str):
                raise ProfileError(f"{origin}: runtime.classes[{i}]: expected a table with target")
            ex = item.get("exempt", {})
            if not isinstance(ex, dict):
                raise ProfileError(f"{origin}: runtime.classes[{i}].exempt: expected a table of field = reason")
            cls_specs.append(ClassSpec(item["target"], _names(item.get("infer_from"), f"{origin}: runtime.classes[{i}].infer_from"),
                                       tuple((str(k), str(v)) for k, v in ex.items())))
        cls_tuple = tuple(cls_specs)
    else:
        base_infer = ()
        for item in rt.get("classes", []) or []:
            base_infer = _names(item.get("infer_from"), f"{origin}: runtime.classes")
            break
        cls_tuple = tuple(c if isinstance(c, ClassSpec) else ClassSpec(str(c), base_infer) for c in classes)

    if step is _UNSET:
        s = rt.get("step")
        step_target = s.get("target") if isinstance(s, dict) else None
    else:
        step_target = step

    if poison is _UNSET:
        poison_specs = _poison_specs(rt.get("poison", {}), f"{origin}: runtime.poison")
    else:
        poison_specs = tuple(p if isinstance(p, PoisonSpec) else PoisonSpec(*p) for p in poison)

    return RuntimeSpec(profile=profile.name, rules=tuple(rules), exempt=profile.exempt, provider=prov,
                       classes=cls_tuple, step=step_target, poison=poison_specs, constants=profile.constants)
