"""Engine profiles: framework knowledge as data, read by both checkers.

A profile is a TOML file under ``rules/`` (shipped in the wheel as
``padlint/_rules``).  ``load_profile("vllm")`` returns a frozen
:class:`Profile`.  ``[tool.padlint]`` extends it through
:func:`Profile.extended` (see ``padlint.config``).
"""

from __future__ import annotations

import ast
import fnmatch
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class ProfileError(ValueError):
    """A profile (or an extension of one) is malformed; the message names file and key.

    Control characters (a key with a newline in it) are shown escaped, so the
    message stays one line.
    """

    def __init__(self, message: str = "") -> None:
        super().__init__(one_line(str(message)))


def one_line(text: str) -> str:
    """``text`` with control characters shown escaped (``\\n``), so that a message stays one line."""
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)


class UnknownProfileError(ProfileError):
    """A profile name that is neither shipped nor a readable ``.toml`` path."""


#: Every table and key an engine profile file may hold: the one place to extend
#: when a profile learns a key.  A key maps to ``None`` (a value, checked where
#: it is read), to a dict (a table, or an array of tables, with these keys), to
#: :data:`ANY_KEY` (a table of free names: fields, constants, reasons), or to
#: :data:`DELEGATED` (contents checked by another parser).  ``{ANY_KEY: {...}}``
#: is a table of free names whose values are tables with those keys.  An
#: unknown table or key is an error naming the file and the dotted key
#: (``[[count]]`` for ``[[counts]]`` would otherwise drop every count pair).
ANY_KEY = "*"
DELEGATED = "delegated"
PROFILE_SCHEMA: dict[str, Any] = {
    "name": None,
    "description": None,
    "counts": {"axis": None, "real": None, "padded": None},
    "buffers": {"shared_views": None, "device_view": None, "copy_to_device": None, "padded_getters": None,
                "uninitialized_allocators": None, "initialized_allocators": None, "wrapper_allocators": ANY_KEY},
    "sinks": {"constructors": None, "builders": None, "forward_calls": None, "forward_severity": None,
              "calls": None, "forward_exempt": ANY_KEY},
    "resets": {"fill_methods": None, "helpers": ANY_KEY},
    "fields": {ANY_KEY: {"axis": None, "neutral": None, "why": None, "kind": None, "wraps_negative": None,
                         "consumer": None, "assumed_backend": None, "read_when": None, "reads": None,
                         "table": None,
                         "backends": {ANY_KEY: {"neutral": None, "modules": None, "why": None}}}},
    "index_fields": None,
    "exempt": ANY_KEY,
    "constants": ANY_KEY,
    "axes": {"allocators": None, "row_copies": None, "reqs": {"sizes": None, "counts": None},
             "tokens": {"sizes": None, "counts": None}, "counterparts": ANY_KEY},
    "graphs": {"capture": None, "captured_by": None, "replay": None, "host": None},
    "dummy_runs": {"functions": None},
    "setup": {"functions": None},
    "devices": {ANY_KEY: {"modules": None, "why": None}},
    "registry": {"slot_classes": None, "fill_methods": None, "buffer_position": None, "buffer_keyword": None,
                 "axis": None, "default_axis": None, "policy": None, "default_policy": None, "pad_value": None,
                 "computed": None, "resets": ANY_KEY, "declared_safe": None, "real_counts": ANY_KEY,
                 "lookup": None, "slice_method": None, "slice_counts": ANY_KEY, "has": None},
    # the runtime checker's tables: their names here, their contents checked by
    # padlint.runtime.spec (owned with the runtime checker)
    "runtime": {"provider": DELEGATED, "step": DELEGATED, "poison": DELEGATED, "classes": DELEGATED},
}


def check_keys(data: Any, schema: Any, origin: str, where: str = "") -> None:
    """Raise :class:`ProfileError` for the first table or key of ``data`` that ``schema`` does not know.

    See :data:`PROFILE_SCHEMA`.  Values are not checked here (their readers
    do, with the same file-and-key messages); a value of the wrong shape
    (a string where a table belongs) is left to them too.
    """
    if not isinstance(schema, dict):
        return  # None (a value), ANY_KEY (free names), DELEGATED
    items = data if isinstance(data, list) else [data]
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        at = f"{where}[{i}]" if isinstance(data, list) else where
        for key, value in item.items():
            if ANY_KEY in schema:
                sub = schema[ANY_KEY]
            elif key in schema:
                sub = schema[key]
            else:
                import difflib

                known = [k for k in schema if k != ANY_KEY]
                close = difflib.get_close_matches(str(key), known, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else f"; known: {', '.join(known)}"
                name = f"{at}.{key}" if at else str(key)
                what = "table" if isinstance(value, (dict, list)) and value and \
                    all(isinstance(v, dict) for v in (value if isinstance(value, list) else [value])) else "key"
                raise ProfileError(f"{origin}: unknown {what} {name!r}{hint}")
            check_keys(value, sub, origin, f"{at}.{key}" if at else str(key))


def read_toml(text: str, origin: str) -> dict[str, Any]:
    """Parse TOML ``text``; raises :class:`ProfileError` naming ``origin`` (also for nesting too deep to read)."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ProfileError(f"{origin}: invalid TOML: {e}") from None
    except RecursionError:
        raise ProfileError(f"{origin}: invalid TOML: nested too deeply to read") from None


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
class RegistrySpec:
    """A buffer registry whose slots declare their padding policy (SGLang's
    ``CudaGraphBufferRegistry``): a slot is built as ``SlotClass(name, buffer, axis=...,
    padding_policy=Policy.X, pad_value=v)``; a call of a ``fill_methods`` method applies
    every slot's policy to rows [real:] of its buffer, the real count being the call's
    keyword ``real_counts[axis]``.  ``resets``: policy -> the value written (a literal,
    or "pad_value": the slot's pad value); ``declared_safe``: policies under which the
    code declares the padding rows never read (taken as a reset of unknown value); any
    other policy leaves the padding rows as they were.  ``computed``: the slot keyword of a
    hook the fill calls to compute the slot's whole buffer (``post_fill=``): such a slot is
    written at every fill, whatever its policy (its value is the hook's, not judged).
    ``lookup`` / ``slice_method`` / ``slice_counts``: how code takes a slot's padded view,
    ``registry.<lookup>("name").<slice_method>(a, b)``, whose rows run up to the argument at
    position ``slice_counts[axis]`` (SGLang: ``get_slot("positions").slice_for(bs, num_tokens)``,
    ``bs`` for a slot of axis "bs", ``num_tokens`` for "tokens"): what a capture binds that way
    its graphs read at every replay."""

    slot_classes: tuple[str, ...]
    fill_methods: tuple[str, ...]
    buffer_position: int = 1
    buffer_keyword: str = "buffer"
    axis: str = "axis"
    default_axis: str = ""
    policy: str = "padding_policy"
    default_policy: str = ""
    pad_value: str = "pad_value"
    computed: str = ""
    resets: tuple[tuple[str, str], ...] = ()
    declared_safe: tuple[str, ...] = ()
    real_counts: tuple[tuple[str, str], ...] = ()
    lookup: str = ""
    slice_method: str = ""
    slice_counts: tuple[tuple[str, int], ...] = ()
    # the registry's test of a slot's presence (``registry.has_slot("mamba_track_mask")``): on the
    # branch where it fails, the slot (one the class registers) does not exist and nothing reads
    # its buffer, which takes the state the other branch left; everything else joins as usual
    has: str = ""


@dataclass(frozen=True)
class AxesSpec:
    """The axis vocabulary of ``[axes]`` (PAD004): fnmatch patterns of names, per axis.

    ``sizes``: axis -> capacities a buffer is allocated with (``max_num_reqs``);
    ``counts``: axis -> counts of one step besides ``[[counts]]`` (``num_actual_tokens``);
    ``allocators``: calls whose first positional argument is the first dimension, besides
    the ``[buffers]`` allocators; ``counterparts``: count -> the count of the other axis in
    the same padding state (``num_actual_tokens`` -> ``num_reqs``); ``row_copies``: calls whose
    result has the rows of their first positional argument (a host-to-device copy helper;
    not when called with ``out=``).
    """

    sizes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    counts: tuple[tuple[str, tuple[str, ...]], ...] = ()
    allocators: tuple[str, ...] = ()
    counterparts: tuple[tuple[str, str], ...] = ()
    row_copies: tuple[str, ...] = ()

    def size_axis(self, name: str) -> str | None:
        """The axis of a capacity named ``name`` (last name as written), or None."""
        return _axis_of(name, self.sizes)

    def count_axis(self, name: str) -> str | None:
        """The axis of a count named ``name`` by ``[axes.*].counts``, or None."""
        return _axis_of(name, self.counts)

    def counterpart(self, name: str) -> str | None:
        return dict(self.counterparts).get(name)


def _axis_of(name: str, table: tuple[tuple[str, tuple[str, ...]], ...]) -> str | None:
    hits = {axis for axis, pats in table if any(fnmatch.fnmatchcase(name, p) for p in pats)}
    return hits.pop() if len(hits) == 1 else None


@dataclass(frozen=True)
class CountPair:
    """A real/padded count pair on one axis, e.g. ``num_reqs``/``num_reqs_padded`` on "reqs"."""

    axis: str
    real: tuple[str, ...]
    padded: tuple[str, ...]


@dataclass(frozen=True)
class BackendNeutral:
    """The neutral value of a field under one attention backend, where it differs from the
    field's default (SGLang's ``get_cuda_graph_seq_len_fill_value()``: 0 on Ascend, 1 elsewhere).
    ``modules``: fnmatch patterns of module names (``sglang.srt.hardware_backend.npu.*``)
    whose code runs only with this backend; elsewhere the analysis cannot tell the backend."""

    name: str
    neutral: str
    modules: tuple[str, ...] = ()
    why: str = ""


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
    #: "index" for a field that holds indices (slots, blocks, state slots, request-pool rows),
    #: "value" otherwise.  A pad value of an index field is used as an index by its consumer.
    kind: str = "value"
    #: the consumer uses the pad value as a Python/torch index (``cache[slot // bs, slot % bs]``),
    #: so a negative sentinel wraps to the last row instead of being skipped
    wraps_negative: bool = False
    #: where the consumer reads the field (shown in messages; the contract's source)
    consumer: str = ""
    #: per-backend neutral values where they differ from ``neutral``
    backends: tuple[BackendNeutral, ...] = ()
    #: what ``neutral`` assumes about the backend (shown when the analysis cannot tell)
    assumed_backend: str = ""
    #: the consumer reads the field only when this condition holds (an expression as the
    #: analysed code tests it, ``envs.VLLM_MOE_SKIP_PADDING``): on the path where an ``if`` of
    #: it is false the field's padding rows are not read, so a reset under it counts
    read_when: str = ""
    #: "buffer": the consumer reads the whole persistent buffer a view of it is taken from, not
    #: only the view (a kernel captured in a CUDA graph at a larger size reads the capture-time
    #: extent at every replay); rows past the view handed to the sink must hold the neutral
    #: value.  ``consumer`` must name that code.  "" (default): the consumer reads the view.
    reads: str = ""
    #: an index field's table: the attribute name of the persistent buffer whose rows its values
    #: index (SGLang ``req_pool_indices`` -> ``req_to_token``).  Its padding rows hold the neutral
    #: value, so they index that row of the table: the row must be initialised (PAD005)
    table: str = ""

    def neutral_in(self, module: str) -> tuple[str, "BackendNeutral | None"]:
        """The neutral value for code in ``module`` and the backend it was taken from
        (None: the default, the backend could not be told from the module)."""
        for b in self.backends:
            if any(fnmatch.fnmatchcase(module, pat) for pat in b.modules):
                return b.neutral, b
        return self.neutral, None


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
    # buffer wrappers (CpuGpuBuffer) allocated by a call: name -> value of every row ("0", "empty")
    wrapper_allocators: tuple[tuple[str, str], ...] = ()
    sink_constructors: tuple[str, ...] = ()
    #: ``[sinks] builders``: names (fnmatch) of metadata-builder base classes.  What a builder
    #: returns is read by the attention kernels: the project classes its methods' return
    #: annotations name (``def build(...) -> FlashMLAMetadata``), and the classes of their
    #: annotated fields (``decode: FlashMLADecodeMetadata | None``), are metadata classes there,
    #: and constructing one in a method of the builder is a sink constructor call
    sink_builders: tuple[str, ...] = ()
    forward_calls: tuple[str, ...] = ()
    forward_severity: str = "warning"
    forward_exempt: tuple[tuple[str, str], ...] = ()
    sink_calls: tuple[str, ...] = ()
    #: ``[graphs] capture``: names (fnmatch) of methods that stage the inputs of the CUDA graph
    #: captured for one shape; the persistent buffers they slice are bound to that graph
    graph_capture: tuple[str, ...] = ()
    #: ``[graphs] captured_by``: calls (fnmatch on the callee as written, ``*cudagraph_manager.capture``)
    #: that capture a graph of each size by calling the function handed to them
    #: (``manager.capture(self._prefill)``): that method's slices are read by every replay
    graph_captured_by: tuple[str, ...] = ()
    #: ``[graphs] replay``: calls (fnmatch) that replay the graph of the current shape, which
    #: reads every bound buffer up to the padded count of its axis
    graph_replay: tuple[str, ...] = ()
    #: ``[graphs] host``: attribute names (fnmatch) of host (CPU) buffers, which a captured
    #: graph does not read
    graph_host: tuple[str, ...] = ()
    #: ``[dummy_runs] functions``: names (fnmatch) of functions that run or stage a batch of dummy
    #: requests (a warm-up, profile or idle data-parallel step: ``_dummy_run``,
    #: ``get_dummy_block_tables``).  Their rows are no request's: a row of a persistent buffer
    #: that no write of the run reached holds an earlier step's values, real count or not; an
    #: index field (slots, blocks, state slots) read there makes the dummy run write through
    #: a live request's indices
    dummy_runs: tuple[str, ...] = ()
    #: ``[setup] functions``: names (fnmatch) of methods that run before the steps, to set the
    #: engine up (``load_model``, ``initialize_kv_cache``, the graph capture set-up): an object one
    #: of them stores in a field of ``self`` (a block table, a graph runner) lives across steps
    #: like one the constructor stores, so the buffers it holds are persistent buffers: handed out
    #: whole, they are read to the sink's width (a field a step method stores may be that step's
    #: own object, and is not)
    setup: tuple[str, ...] = ()
    fill_methods: tuple[str, ...] = ("fill_", "fill", "zero_")
    reset_helpers: tuple[tuple[str, int], ...] = ()
    fields: tuple[FieldSpec, ...] = ()
    exempt: tuple[tuple[str, str], ...] = ()
    constants: tuple[tuple[str, Any], ...] = ()
    ignore_args: tuple[str, ...] = ()
    #: fnmatch patterns of fields that hold indices (besides ``[fields.X] kind = "index"``);
    #: one without a ``[fields]`` entry has no known pad value (PAD002 reports its resets once)
    index_fields: tuple[str, ...] = ()
    runtime: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    registry: "RegistrySpec | None" = None
    axes: AxesSpec = field(default_factory=AxesSpec)
    #: ``[devices.NAME] modules``: (device, module patterns) of code that runs only on that device
    #: (SGLang's Ascend NPU runners and backends).  On a call path through such a module, a
    #: dispatch with implementations in modules of the same device goes only to those: an NPU
    #: runner's attention backend is an NPU backend, not a CUDA one
    devices: tuple[tuple[str, tuple[str, ...]], ...] = ()
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
        """True for a padded count: a ``counts[].padded`` name or any ``X_padded``."""
        return self.pair_for_padded(name) is not None

    def is_real_for(self, real: str, padded: str) -> bool:
        """True when ``real`` is a real count paired with ``padded`` (``num_reqs`` / ``num_reqs_padded``)."""
        pair = self.pair_for_padded(padded)
        return pair is not None and real in pair.real

    def count_axis(self, name: str) -> str | None:
        """The axis ("reqs" or "tokens") of a count named ``name``: its ``[[counts]]`` pair
        (real or padded names), else ``[axes.*].counts``; None when unknown or ambiguous."""
        hits = {("reqs" if p.axis == "reqs+1" else p.axis) for p in self.counts
                if name in p.real or name in p.padded}
        hits.discard("?")
        if len(hits) == 1:
            return hits.pop()
        if hits:
            return None
        return self.axes.count_axis(name)

    def is_padded_count(self, name: str) -> bool | None:
        """True for a padded count name, False for a real one (``[[counts]]``), None otherwise."""
        for p in self.counts:
            if name in p.padded:
                return True
            if name in p.real:
                return False
        if name.endswith("_padded"):
            return True
        return None

    def is_sink_constructor(self, name: str) -> bool:
        """True when a call of ``name`` (dotted, as written) matches ``sinks.constructors`` (fnmatch)."""
        last = name.rsplit(".", 1)[-1]
        return any(fnmatch.fnmatchcase(last, pat) or fnmatch.fnmatchcase(name, pat)
                   for pat in self.sink_constructors)

    def field_spec(self, name: str) -> FieldSpec | None:
        """The ``[fields.<name>]`` entry (axis, neutral value, why), or None."""
        for f in self.fields:
            if f.name == name:
                return f
        return None

    def device_of(self, module: str) -> str:
        """The device whose ``[devices.NAME] modules`` match module key ``module`` ("" for none)."""
        for name, patterns in self.devices:
            if any(fnmatch.fnmatchcase(module, pat) for pat in patterns):
                return name
        return ""

    def is_setup(self, function_name: str) -> bool:
        """True for a method the profile's ``[setup] functions`` names."""
        return any(fnmatch.fnmatchcase(function_name, pat) for pat in self.setup)

    def is_dummy_run(self, function_name: str) -> bool:
        """True for a function the profile's ``[dummy_runs] functions`` names."""
        return any(fnmatch.fnmatchcase(function_name, pat) for pat in self.dummy_runs)

    def is_index_field(self, name: str) -> bool:
        """True for a field that holds indices: ``[fields.X] kind = "index"`` or ``index_fields``."""
        spec = self.field_spec(name)
        if spec is not None and spec.kind == "index":
            return True
        return any(fnmatch.fnmatchcase(name, pat) for pat in self.index_fields)

    def is_exempt(self, field_name: str) -> bool:
        """Fields exempt at every metadata sink (``[exempt]``, each with its reason)."""
        return any(name == field_name for name, _ in self.exempt)

    def is_forward_exempt(self, field_name: str) -> bool:
        """Model-forward arguments exempt on purpose (``[sinks.forward_exempt]``)."""
        return any(name == field_name for name, _ in self.forward_exempt)

    def constant(self, name: str) -> Any:
        """The value of a named constant from ``[constants]`` (vLLM ``NULL_BLOCK_ID = 0``), or None."""
        return dict(self.constants).get(name)

    def neutral_for(self, field_name: str, default: str = "0") -> str:
        """The neutral (pad) value of a field as text (``"False"``, ``"-1"``, ``"flat"``), else ``default``."""
        spec = self.field_spec(field_name)
        return spec.neutral if spec else default

    def is_arg_ignored(self, sink: str, field_name: str) -> bool:
        """True when ``ignore-args`` names ``Sink.field`` (last name of the sink, or as written)."""
        last = sink.rsplit(".", 1)[-1]
        return f"{last}.{field_name}" in self.ignore_args or f"{sink}.{field_name}" in self.ignore_args

    def extended(self, ext: dict[str, Any], origin: str) -> Profile:
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
            p = replace(p, sink_constructors=p.sink_constructors + _names(ext["sinks"], f"{origin}: sinks"))
        if "sink-calls" in ext:
            p = replace(p, sink_calls=p.sink_calls + _names(ext["sink-calls"], f"{origin}: sink-calls"))
        if "reset-helpers" in ext:
            p = replace(p, reset_helpers=p.reset_helpers + _helpers(ext["reset-helpers"], f"{origin}: reset-helpers"))
        if "neutral" in ext:
            neutral = ext["neutral"]
            if not isinstance(neutral, dict):
                raise ProfileError(f"{origin}: neutral: expected a table of field = value")
            fields = {f.name: f for f in p.fields}
            for name, value in neutral.items():
                text = _neutral_text(value, f"{origin}: neutral.{name}", dict(p.constants))
                old = fields.get(name)
                fields[name] = replace(old, neutral=text, backends=()) if old else FieldSpec(name, "reqs", text)
            p = replace(p, fields=tuple(fields.values()))
        if "ignore-args" in ext:
            args = _names(ext["ignore-args"], f"{origin}: ignore-args")
            for arg in args:
                if not _SINK_FIELD.fullmatch(arg):
                    raise ProfileError(f"{origin}: ignore-args: expected `Sink.field` (e.g. "
                                       f"'CommonAttentionMetadata.seq_lens'), got {arg!r}")
            p = replace(p, ignore_args=p.ignore_args + args)
        return p


#: ``Sink.field`` of ``ignore-args``: a (dotted) sink name, then the keyword or positional index.
_SINK_FIELD = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\.\w+")
AXES = ("reqs", "reqs+1", "tokens")
_COUNT_KEYS = ("axis", "real", "padded")


def _neutral_text(value: Any, where: str, constants: dict[str, Any]) -> str:
    """The text of a neutral value: a literal, a constant of the profile, or "flat".

    Literals are booleans, integers and finite floats (and tuples or lists of
    them, for rows of several columns).  A name must be one of ``constants``
    (the profile's ``[constants]``): anything else ("nope", ``inf``, ``nan``,
    ``mod.NAME``) would be written into fixes as it stands.
    """
    expected = ("expected a literal (false, 0, -1), a constant of the profile's [constants] "
                f"({', '.join(constants) or 'none defined'}) or \"flat\"")
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (int, float)):
        if not _finite_literal(value):
            raise ProfileError(f"{where}: {expected}, got {value!r} (not a finite number)")
        return repr(value)
    if isinstance(value, str) and value.strip():
        text = value.strip()
        if text == "flat" or text in constants:
            return text
        try:
            parsed = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            parsed = None
        else:
            if _finite_literal(parsed):
                return text
        raise ProfileError(f"{where}: {expected}, got {value!r}")
    raise ProfileError(f"{where}: {expected}, got {value!r}")


def _finite_literal(value: Any) -> bool:
    import math

    if isinstance(value, (bool, int)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, (tuple, list)):
        return bool(value) and all(_finite_literal(v) for v in value)
    return False


def _count_pairs(items: Any, where: str) -> list[CountPair]:
    if not isinstance(items, list):
        raise ProfileError(f"{where}: expected an array of tables")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise ProfileError(f"{where}[{i}]: expected a table with real and padded")
        unknown = [k for k in item if k not in _COUNT_KEYS]
        if unknown:
            raise ProfileError(f"{where}[{i}]: unknown key {unknown[0]!r} (expected axis, real, padded)")
        try:
            real = item["real"]
            padded = item["padded"]
        except KeyError as e:
            raise ProfileError(f"{where}[{i}]: missing key {e.args[0]}") from None
        axis = item.get("axis", "?")
        if "axis" in item and axis not in AXES:
            raise ProfileError(f"{where}[{i}].axis: expected reqs, reqs+1 or tokens, got {axis!r}")
        real = [real] if isinstance(real, str) else real
        padded = [padded] if isinstance(padded, str) else padded
        out.append(CountPair(axis=axis,
                             real=_names(real, f"{where}[{i}].real"),
                             padded=_names(padded, f"{where}[{i}].padded")))
    return out


def available_profiles() -> list[str]:
    """Names of the profiles shipped in :func:`rules_dir` (``["sglang", "vllm"]``)."""
    return sorted(p.stem for p in rules_dir().glob("*.toml"))


def load_profile(name_or_path: str) -> Profile:
    """Load a profile by name ("vllm") or from a TOML path.

    Raises :class:`ProfileError` (unknown name, unreadable file, bad TOML, bad key).
    """
    import os
    import stat

    path = Path(name_or_path)
    # a path (a `.toml` name, or one with a directory part) is a file, never a shipped name
    if path.suffix == ".toml" or any(sep and sep in name_or_path for sep in (os.sep, os.altsep)):
        if not os.path.lexists(path):
            raise UnknownProfileError(f"{name_or_path}: profile file not found")
    else:
        path = rules_dir() / f"{name_or_path}.toml"
        if not path.is_file():
            raise UnknownProfileError(
                f"unknown profile {name_or_path!r}; available: {', '.join(available_profiles())}")
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise ProfileError(f"{path}: cannot read profile: not a regular file")
        text = path.read_bytes().decode("utf-8")
    except OSError as e:
        raise ProfileError(f"{path}: cannot read profile: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise ProfileError(f"{path}: cannot read profile: not UTF-8: {e.reason} at byte {e.start}") from None
    return profile_from_dict(read_toml(text, str(path)), str(path))


def profile_from_dict(data: dict[str, Any], origin: str) -> Profile:
    """Build a :class:`Profile` from parsed TOML; raises :class:`ProfileError` naming ``origin`` and the key.

    Checked: ``buffers``, ``sinks``, ``resets``, ``fields``, ``exempt``,
    ``constants`` are tables; name lists are lists of non-empty strings;
    ``sinks.forward_exempt`` and ``exempt`` are tables of strings (field =
    reason); ``[constants]`` are integers; ``resets.helpers`` are argument
    indexes (integers >= 0).  A profile without any sink
    (``sinks.constructors``, ``sinks.forward_calls`` and ``sinks.calls`` all
    empty) can find nothing and is an error too.
    """
    check_keys(data, PROFILE_SCHEMA, origin)
    constants = _constants(data.get("constants", {}), f"{origin}: constants")
    buffers = _table(data.get("buffers", {}), f"{origin}: buffers")
    sinks = _table(data.get("sinks", {}), f"{origin}: sinks")
    resets = _table(data.get("resets", {}), f"{origin}: resets")
    fields = [_field(name, spec, f"{origin}: fields.{name}", dict(constants))
              for name, spec in _table(data.get("fields", {}), f"{origin}: fields").items()]
    constructors = _names(sinks.get("constructors", []), f"{origin}: sinks.constructors")
    forward_calls = _names(sinks.get("forward_calls", []), f"{origin}: sinks.forward_calls")
    sink_calls = _names(sinks.get("calls", []), f"{origin}: sinks.calls")
    graphs = _table(data.get("graphs", {}), f"{origin}: graphs")
    if not (constructors or forward_calls or sink_calls):
        raise ProfileError(f"{origin}: sinks: the profile has no sinks (set at least one of sinks.constructors, "
                           f"sinks.forward_calls, sinks.calls)")
    profile = Profile(
        name=_string(data.get("name", Path(origin).stem), f"{origin}: name", nonempty=True),
        description=_string(data.get("description", ""), f"{origin}: description"),
        counts=tuple(_count_pairs(data.get("counts", []), f"{origin}: counts")),
        shared_views=_names(buffers.get("shared_views", ["cpu", "np"]), f"{origin}: buffers.shared_views"),
        device_view=_string(buffers.get("device_view", "gpu"), f"{origin}: buffers.device_view", nonempty=True),
        copy_to_device=_names(buffers.get("copy_to_device", ["copy_to_gpu"]), f"{origin}: buffers.copy_to_device"),
        padded_getters=_names(buffers.get("padded_getters", []), f"{origin}: buffers.padded_getters"),
        uninitialized_allocators=_names(buffers.get("uninitialized_allocators", []),
                                        f"{origin}: buffers.uninitialized_allocators"),
        initialized_allocators=_names(buffers.get("initialized_allocators", []),
                                      f"{origin}: buffers.initialized_allocators"),
        wrapper_allocators=_wrappers(buffers.get("wrapper_allocators", {}), f"{origin}: buffers.wrapper_allocators",
                                     dict(constants)),
        sink_constructors=constructors,
        sink_builders=_names(sinks.get("builders", []), f"{origin}: sinks.builders"),
        forward_calls=forward_calls,
        forward_severity=_string(sinks.get("forward_severity", "warning"), f"{origin}: sinks.forward_severity",
                                 nonempty=True),
        forward_exempt=_reasons(sinks.get("forward_exempt", {}), f"{origin}: sinks.forward_exempt"),
        sink_calls=sink_calls,
        graph_capture=_names(graphs.get("capture", []), f"{origin}: graphs.capture"),
        graph_captured_by=_names(graphs.get("captured_by", []), f"{origin}: graphs.captured_by"),
        graph_replay=_names(graphs.get("replay", []), f"{origin}: graphs.replay"),
        graph_host=_names(graphs.get("host", []), f"{origin}: graphs.host"),
        dummy_runs=_names(_table(data.get("dummy_runs", {}), f"{origin}: dummy_runs").get("functions", []),
                          f"{origin}: dummy_runs.functions"),
        setup=_names(_table(data.get("setup", {}), f"{origin}: setup").get("functions", []),
                     f"{origin}: setup.functions"),
        fill_methods=_names(resets.get("fill_methods", ["fill_", "fill", "zero_"]), f"{origin}: resets.fill_methods"),
        reset_helpers=_helpers(resets.get("helpers", {}), f"{origin}: resets.helpers"),
        fields=tuple(fields),
        exempt=_reasons(data.get("exempt", {}), f"{origin}: exempt"),
        constants=constants,
        index_fields=_names(data.get("index_fields", []), f"{origin}: index_fields"),
        runtime=dict(_table(data.get("runtime", {}), f"{origin}: runtime")),
        registry=_registry(data["registry"], f"{origin}: registry") if "registry" in data else None,
        axes=_axes(data.get("axes", {}), f"{origin}: axes"),
        devices=_devices(data.get("devices", {}), f"{origin}: devices"),
        source=origin,
    )
    if profile.runtime:
        # the contents of the [runtime] tables are the runtime checker's to read:
        # its parser (no torch) reports them with the same file-and-key messages
        from padlint.runtime.spec import runtime_spec

        runtime_spec(profile)
    return profile


FIELD_KINDS = ("value", "index")


def _field(name: str, spec: Any, where: str, constants: dict[str, Any]) -> FieldSpec:
    """One ``[fields.NAME]`` table (see :class:`FieldSpec`); raises :class:`ProfileError` naming the key."""
    if not isinstance(spec, dict) or "neutral" not in spec:
        raise ProfileError(f"{where}: expected a table with axis and neutral")
    axis = spec.get("axis", "reqs")
    if axis not in ("reqs", "reqs+1", "tokens"):
        raise ProfileError(f"{where}.axis: expected reqs, reqs+1 or tokens, got {axis!r}")
    kind = spec.get("kind", "value")
    if kind not in FIELD_KINDS:
        raise ProfileError(f"{where}.kind: expected one of {', '.join(FIELD_KINDS)}, got {kind!r}")
    wraps = spec.get("wraps_negative", False)
    if not isinstance(wraps, bool):
        raise ProfileError(f"{where}.wraps_negative: expected true or false, got {wraps!r}")
    if wraps and kind != "index":
        raise ProfileError(f"{where}.wraps_negative: only an index field (kind = \"index\") is used as an index")
    backends = []
    for bname, b in _table(spec.get("backends", {}), f"{where}.backends").items():
        at = f"{where}.backends.{bname}"
        if not isinstance(b, dict) or "neutral" not in b:
            raise ProfileError(f"{at}: expected a table with neutral (and modules, why)")
        backends.append(BackendNeutral(bname, _neutral_text(b["neutral"], f"{at}.neutral", constants),
                                       _names(b.get("modules", []), f"{at}.modules"),
                                       _string(b.get("why", ""), f"{at}.why")))
    assumed = _string(spec.get("assumed_backend", ""), f"{where}.assumed_backend")
    if backends and not assumed.strip():
        raise ProfileError(f"{where}.assumed_backend: a field with per-backend values must say which backends "
                           f"its default neutral value is for")
    read_when = _string(spec.get("read_when", ""), f"{where}.read_when")
    if read_when:
        try:
            ast.parse(read_when, mode="eval")
        except SyntaxError:
            raise ProfileError(f"{where}.read_when: expected a Python expression, got {read_when!r}") from None
        if not spec.get("consumer"):
            raise ProfileError(f"{where}.read_when: name the consumer code that tests it in consumer = \"...\"")
    reads = _string(spec.get("reads", ""), f"{where}.reads")
    if reads not in ("", "buffer"):
        raise ProfileError(f"{where}.reads: expected \"buffer\" (the consumer reads the whole buffer), got {reads!r}")
    if reads and not spec.get("consumer"):
        raise ProfileError(f"{where}.reads: name the consumer code that reads past the view in consumer = \"...\"")
    table = _string(spec.get("table", ""), f"{where}.table")
    if table and not re.fullmatch(r"[A-Za-z_]\w*", table):
        raise ProfileError(f"{where}.table: expected the attribute name of the indexed buffer, got {table!r}")
    if table and kind != "index":
        raise ProfileError(f"{where}.table: only an index field (kind = \"index\") indexes a table")
    return FieldSpec(name, axis, _neutral_text(spec["neutral"], f"{where}.neutral", constants),
                     _string(spec.get("why", ""), f"{where}.why"), kind, wraps,
                     _string(spec.get("consumer", ""), f"{where}.consumer"), tuple(backends), assumed,
                     read_when, reads, table)


def _registry(value: Any, where: str) -> RegistrySpec:
    t = _table(value, where)

    def text(key: str, default: str) -> str:
        return _string(t.get(key, default), f"{where}.{key}")

    pos = t.get("buffer_position", 1)
    if not isinstance(pos, int) or isinstance(pos, bool) or pos < 0:
        raise ProfileError(f"{where}.buffer_position: expected a non-negative integer, got {pos!r}")
    resets = {k: _string(v, f"{where}.resets.{k}") for k, v in _table(t.get("resets", {}), f"{where}.resets").items()}
    reals = {k: _string(v, f"{where}.real_counts.{k}", nonempty=True)
             for k, v in _table(t.get("real_counts", {}), f"{where}.real_counts").items()}
    slice_counts = _table(t.get("slice_counts", {}), f"{where}.slice_counts")
    for k, v in slice_counts.items():
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise ProfileError(f"{where}.slice_counts.{k}: expected a non-negative integer, got {v!r}")
    return RegistrySpec(
        slot_classes=_names(t.get("slot_classes", []), f"{where}.slot_classes"),
        fill_methods=_names(t.get("fill_methods", []), f"{where}.fill_methods"),
        buffer_position=pos, buffer_keyword=text("buffer_keyword", "buffer"), axis=text("axis", "axis"),
        default_axis=text("default_axis", ""), policy=text("policy", "padding_policy"),
        default_policy=text("default_policy", ""), pad_value=text("pad_value", "pad_value"),
        computed=text("computed", ""), resets=tuple(sorted(resets.items())),
        declared_safe=_names(t.get("declared_safe", []), f"{where}.declared_safe"),
        real_counts=tuple(sorted(reals.items())), lookup=text("lookup", ""),
        slice_method=text("slice_method", ""), slice_counts=tuple(sorted(slice_counts.items())),
        has=text("has", ""))


def _axes(value: Any, where: str) -> AxesSpec:
    """``[axes]``: ``allocators`` (names), ``reqs``/``tokens`` tables of ``sizes`` and
    ``counts`` (names or fnmatch patterns), ``counterparts`` (count = count, strings).
    A name given to both axes is an error (its axis would be ambiguous)."""
    t = _table(value, where)
    sizes, counts = [], []
    for axis in ("reqs", "tokens"):
        sub = _table(t.get(axis, {}), f"{where}.{axis}")
        sizes.append((axis, _names(sub.get("sizes", []), f"{where}.{axis}.sizes")))
        counts.append((axis, _names(sub.get("counts", []), f"{where}.{axis}.counts")))
    for kind, table in (("sizes", sizes), ("counts", counts)):
        both = set(table[0][1]) & set(table[1][1])
        if both:
            raise ProfileError(f"{where}: {sorted(both)[0]!r} is in both reqs.{kind} and tokens.{kind}")
    pairs = _table(t.get("counterparts", {}), f"{where}.counterparts")
    for k, v in pairs.items():
        _string(v, f"{where}.counterparts.{k}", nonempty=True)
        if not _IDENT.fullmatch(v):
            raise ProfileError(f"{where}.counterparts.{k}: expected a name, got {v!r}")
    return AxesSpec(sizes=tuple(sizes), counts=tuple(counts),
                    allocators=_names(t.get("allocators", []), f"{where}.allocators"),
                    counterparts=tuple(pairs.items()),
                    row_copies=_names(t.get("row_copies", []), f"{where}.row_copies"))


_IDENT = re.compile(r"[A-Za-z_]\w*")


def _table(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ProfileError(f"{where}: expected a table, got {value!r}")
    return value


def _string(value: Any, where: str, *, nonempty: bool = False) -> str:
    if not isinstance(value, str) or (nonempty and not value.strip()):
        raise ProfileError(f"{where}: expected a {'non-empty ' if nonempty else ''}string, got {value!r}")
    return value


def _names(value: Any, where: str) -> tuple[str, ...]:
    """A list of non-empty strings (names, dotted names or fnmatch patterns)."""
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ProfileError(f"{where}: expected a list of non-empty strings, got {value!r}")
    return tuple(value)


def _devices(value: Any, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``[devices.NAME] modules = [...]`` (module-key patterns, required), ``why = "..."``."""
    out = []
    for name, spec in _table(value, where).items():
        spec = _table(spec, f"{where}.{name}")
        if "modules" not in spec:
            raise ProfileError(f"{where}.{name}: name the modules that run only on this device in modules = [...]")
        out.append((name, _names(spec["modules"], f"{where}.{name}.modules")))
        _string(spec.get("why", ""), f"{where}.{name}.why")
    return tuple(out)


def _reasons(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    """A table of field = reason, both strings."""
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ProfileError(f"{where}: expected a table of field = reason (strings), got {value!r}")
    return tuple(value.items())


def _constants(value: Any, where: str) -> tuple[tuple[str, int], ...]:
    if not isinstance(value, dict):
        raise ProfileError(f"{where}: expected a table of NAME = integer, got {value!r}")
    for name, v in value.items():
        if not isinstance(v, int) or isinstance(v, bool):
            raise ProfileError(f"{where}.{name}: expected an integer, got {v!r}")
    return tuple(value.items())


def _helpers(value: Any, where: str) -> tuple[tuple[str, int], ...]:
    """A table of function name = index of its buffer argument (an integer >= 0)."""
    if not isinstance(value, dict):
        raise ProfileError(f"{where}: expected a table of name = buffer argument index, got {value!r}")
    for name, v in value.items():
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise ProfileError(f"{where}.{name}: expected a buffer argument index (an integer >= 0), got {v!r}")
    return tuple(value.items())


def _wrappers(value: Any, where: str, constants: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """A table of wrapper allocator name = the value of every row it allocates: a literal
    (``0``, ``false``), a constant of the profile, or ``"empty"`` (uninitialised)."""
    if not isinstance(value, dict):
        raise ProfileError(f"{where}: expected a table of name = initial value, got {value!r}")
    out = []
    for name, v in value.items():
        if v == "empty":
            out.append((name, "empty"))
            continue
        text = _neutral_text(v, f"{where}.{name}", constants)
        if text == "flat":
            raise ProfileError(f"{where}.{name}: expected a literal, a constant or \"empty\", got 'flat'")
        if text in constants:
            text = repr(constants[text])
        out.append((name, text))
    return tuple(out)


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
