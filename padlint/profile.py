"""Engine profiles: framework knowledge as data, read by both checkers.

A profile is a TOML file under ``rules/`` (shipped in the wheel as
``padlint/_rules``).  ``load_profile("vllm")`` returns a frozen
:class:`Profile`.  ``[tool.padlint]`` extends it through
:func:`Profile.extended` (see ``padlint.config``).
"""

from __future__ import annotations

import ast
import fnmatch
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class ProfileError(ValueError):
    """A profile (or an extension of one) is malformed; the message names file and key."""


def rules_dir() -> Path:
    """Directory holding profiles and rule docs.

    Installed wheel: ``padlint/_rules``; source checkout: ``<repo>/rules``.
    """
    here = Path(__file__).resolve().parent
    installed = here / "_rules"
    if installed.is_dir():
        return installed
    return here.parent / "rules"


@dataclass(frozen=True)
class CountPair:
    """A real/padded count pair on one axis, e.g. ``num_reqs``/``num_reqs_padded`` on "reqs"."""

    axis: str
    real: tuple[str, ...]
    padded: tuple[str, ...]


@dataclass(frozen=True)
class FieldSpec:
    """Axis and neutral (pad) value of one metadata field.

    ``axis``: "reqs" (Tensor[num_reqs_padded]), "reqs+1" (Tensor[num_reqs_padded + 1],
    cumulative offsets), "tokens" (Tensor[num_tokens_padded]).
    ``neutral``: a Python literal as text ("False", "0", "-1"), a constant
    name from ``[constants]`` ("NULL_BLOCK_ID"), or "flat" (the last real
    cumulative value).
    """

    name: str
    axis: str
    neutral: str
    why: str = ""


@dataclass(frozen=True)
class Profile:
    """Everything padlint knows about one engine's padding conventions."""

    name: str
    description: str = ""
    counts: tuple[CountPair, ...] = ()
    shared_views: tuple[str, ...] = ("cpu", "np")
    device_view: str = "gpu"
    copy_to_device: tuple[str, ...] = ("copy_to_gpu",)
    padded_getters: tuple[str, ...] = ()
    uninitialized_allocators: tuple[str, ...] = ()
    initialized_allocators: tuple[str, ...] = ()
    sink_constructors: tuple[str, ...] = ()
    forward_calls: tuple[str, ...] = ()
    forward_severity: str = "warning"
    forward_exempt: tuple[tuple[str, str], ...] = ()
    sink_calls: tuple[str, ...] = ()
    fill_methods: tuple[str, ...] = ("fill_", "fill", "zero_")
    reset_helpers: tuple[tuple[str, int], ...] = ()
    fields: tuple[FieldSpec, ...] = ()
    exempt: tuple[tuple[str, str], ...] = ()
    constants: tuple[tuple[str, Any], ...] = ()
    ignore_args: tuple[str, ...] = ()
    runtime: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    source: str = ""

    # -- queries -------------------------------------------------------
    def pair_for_padded(self, name: str) -> CountPair | None:
        """The count pair whose padded names include ``name`` (or the ``X_padded`` rule)."""
        for pair in self.counts:
            if name in pair.padded:
                return pair
        if name.endswith("_padded") and len(name) > len("_padded"):
            base = name[: -len("_padded")]
            return CountPair(axis="?", real=(base,), padded=(name,))
        return None

    def is_padded_name(self, name: str) -> bool:
        return self.pair_for_padded(name) is not None

    def is_real_for(self, real: str, padded: str) -> bool:
        pair = self.pair_for_padded(padded)
        return pair is not None and real in pair.real

    def is_sink_constructor(self, name: str) -> bool:
        last = name.rsplit(".", 1)[-1]
        return any(fnmatch.fnmatchcase(last, pat) or fnmatch.fnmatchcase(name, pat)
                   for pat in self.sink_constructors)

    def field_spec(self, name: str) -> FieldSpec | None:
        for f in self.fields:
            if f.name == name:
                return f
        return None

    def is_exempt(self, field_name: str) -> bool:
        """Fields exempt at every metadata sink (``[exempt]``, each with its reason)."""
        return any(name == field_name for name, _ in self.exempt)

    def is_forward_exempt(self, field_name: str) -> bool:
        """Model-forward arguments exempt on purpose (``[sinks.forward_exempt]``)."""
        return any(name == field_name for name, _ in self.forward_exempt)

    def constant(self, name: str) -> Any:
        return dict(self.constants).get(name)

    def neutral_for(self, field_name: str, default: str = "0") -> str:
        spec = self.field_spec(field_name)
        return spec.neutral if spec else default

    def is_arg_ignored(self, sink: str, field_name: str) -> bool:
        last = sink.rsplit(".", 1)[-1]
        return f"{last}.{field_name}" in self.ignore_args or f"{sink}.{field_name}" in self.ignore_args

    def extended(self, ext: dict[str, Any], origin: str) -> "Profile":
        """A copy with ``[tool.padlint]`` extensions applied.

        Keys of ``ext``: ``counts`` (list of {axis, real, padded}),
        ``sinks`` (list of constructor names or patterns), ``sink-calls``,
        ``reset-helpers`` ({name: buffer_arg_index}), ``neutral``
        ({field: value}), ``ignore-args`` (["Sink.field"]).
        Raises :class:`ProfileError` naming ``origin`` and the key.
        """
        p = self
        if "counts" in ext:
            p = replace(p, counts=p.counts + tuple(_count_pairs(ext["counts"], f"{origin}: counts")))
        if "sinks" in ext:
            p = replace(p, sink_constructors=p.sink_constructors + _str_tuple(ext["sinks"], f"{origin}: sinks"))
        if "sink-calls" in ext:
            p = replace(p, sink_calls=p.sink_calls + _str_tuple(ext["sink-calls"], f"{origin}: sink-calls"))
        if "reset-helpers" in ext:
            helpers = ext["reset-helpers"]
            if not isinstance(helpers, dict) or not all(isinstance(v, int) for v in helpers.values()):
                raise ProfileError(f"{origin}: reset-helpers: expected a table of name = buffer argument index")
            p = replace(p, reset_helpers=p.reset_helpers + tuple(helpers.items()))
        if "neutral" in ext:
            neutral = ext["neutral"]
            if not isinstance(neutral, dict):
                raise ProfileError(f"{origin}: neutral: expected a table of field = value")
            fields = {f.name: f for f in p.fields}
            for name, value in neutral.items():
                text = _neutral_text(value, f"{origin}: neutral.{name}")
                old = fields.get(name)
                fields[name] = FieldSpec(name, old.axis if old else "reqs", text, old.why if old else "")
            p = replace(p, fields=tuple(fields.values()))
        if "ignore-args" in ext:
            p = replace(p, ignore_args=p.ignore_args + _str_tuple(ext["ignore-args"], f"{origin}: ignore-args"))
        return p


def _str_tuple(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ProfileError(f"{where}: expected a list of strings")
    return tuple(value)


def _neutral_text(value: Any, where: str) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str) and value:
        return value
    raise ProfileError(f"{where}: expected a literal (false, 0, -1) or a name")


def _count_pairs(items: Any, where: str) -> list[CountPair]:
    if not isinstance(items, list):
        raise ProfileError(f"{where}: expected an array of tables")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise ProfileError(f"{where}[{i}]: expected a table with real and padded")
        try:
            real = item["real"]
            padded = item["padded"]
        except KeyError as e:
            raise ProfileError(f"{where}[{i}]: missing key {e.args[0]}") from None
        real = [real] if isinstance(real, str) else real
        padded = [padded] if isinstance(padded, str) else padded
        out.append(CountPair(axis=str(item.get("axis", "?")),
                             real=_str_tuple(real, f"{where}[{i}].real"),
                             padded=_str_tuple(padded, f"{where}[{i}].padded")))
    return out


def available_profiles() -> list[str]:
    return sorted(p.stem for p in rules_dir().glob("*.toml"))


def load_profile(name_or_path: str) -> Profile:
    """Load a profile by name ("vllm") or from a TOML path.

    Raises :class:`ProfileError` (unknown name, unreadable file, bad TOML, bad key).
    """
    path = Path(name_or_path)
    if not (path.suffix == ".toml" and path.is_file()):
        path = rules_dir() / f"{name_or_path}.toml"
        if not path.is_file():
            raise ProfileError(
                f"unknown profile {name_or_path!r}; available: {', '.join(available_profiles())}")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ProfileError(f"{path}: cannot read profile: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ProfileError(f"{path}: invalid TOML: {e}") from None
    return profile_from_dict(data, str(path))


def profile_from_dict(data: dict[str, Any], origin: str) -> Profile:
    """Build a :class:`Profile` from parsed TOML; raises :class:`ProfileError`."""
    buffers = data.get("buffers", {})
    sinks = data.get("sinks", {})
    resets = data.get("resets", {})
    fields = []
    for name, spec in data.get("fields", {}).items():
        if not isinstance(spec, dict) or "neutral" not in spec:
            raise ProfileError(f"{origin}: fields.{name}: expected a table with axis and neutral")
        axis = spec.get("axis", "reqs")
        if axis not in ("reqs", "reqs+1", "tokens"):
            raise ProfileError(f"{origin}: fields.{name}.axis: expected reqs, reqs+1 or tokens, got {axis!r}")
        fields.append(FieldSpec(name, axis, _neutral_text(spec["neutral"], f"{origin}: fields.{name}.neutral"),
                                str(spec.get("why", ""))))
    helpers = resets.get("helpers", {})
    return Profile(
        name=str(data.get("name", Path(origin).stem)),
        description=str(data.get("description", "")),
        counts=tuple(_count_pairs(data.get("counts", []), f"{origin}: counts")),
        shared_views=_str_tuple(buffers.get("shared_views", ["cpu", "np"]), f"{origin}: buffers.shared_views"),
        device_view=str(buffers.get("device_view", "gpu")),
        copy_to_device=_str_tuple(buffers.get("copy_to_device", ["copy_to_gpu"]), f"{origin}: buffers.copy_to_device"),
        padded_getters=_str_tuple(buffers.get("padded_getters", []), f"{origin}: buffers.padded_getters"),
        uninitialized_allocators=_str_tuple(buffers.get("uninitialized_allocators", []), f"{origin}: buffers.uninitialized_allocators"),
        initialized_allocators=_str_tuple(buffers.get("initialized_allocators", []), f"{origin}: buffers.initialized_allocators"),
        sink_constructors=_str_tuple(sinks.get("constructors", []), f"{origin}: sinks.constructors"),
        forward_calls=_str_tuple(sinks.get("forward_calls", []), f"{origin}: sinks.forward_calls"),
        forward_severity=str(sinks.get("forward_severity", "warning")),
        forward_exempt=tuple((str(k), str(v)) for k, v in sinks.get("forward_exempt", {}).items()),
        sink_calls=_str_tuple(sinks.get("calls", []), f"{origin}: sinks.calls"),
        fill_methods=_str_tuple(resets.get("fill_methods", ["fill_", "fill", "zero_"]), f"{origin}: resets.fill_methods"),
        reset_helpers=tuple((str(k), int(v)) for k, v in helpers.items()),
        fields=tuple(fields),
        exempt=tuple((str(k), str(v)) for k, v in data.get("exempt", {}).items()),
        constants=tuple(data.get("constants", {}).items()),
        runtime=dict(data.get("runtime", {})),
        source=origin,
    )


def parse_neutral(text: str, profile: Profile) -> Any:
    """The Python value of a neutral-value text: literal, named constant, or the string "flat"."""
    if text == "flat":
        return "flat"
    value = profile.constant(text)
    if value is not None:
        return value
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise ProfileError(f"{profile.source}: neutral value {text!r} is neither a literal nor a known constant") from None
