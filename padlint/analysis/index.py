"""Text tests of what can matter to PAD001: the prefilter and the relevance patterns.

Substring and regex tests only (no parsing): which files may start an
entry-point search (:func:`may_matter`: a sink call or a padded count
mentioned), and the patterns the call graph uses to decide which functions
can touch padding state (:func:`relevance_pattern`) or hold a sink
(:func:`prefilter_patterns`).  The project index and the call graph are in
``project.py`` and ``callgraph.py``.
"""

from __future__ import annotations

import functools
import re

from padlint.profile import Profile


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
    sinks += tuple(lit(p) for p in profile.graph_replay)  # a graph replay reads its bound buffers
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
    # an `ast` parse, never a finding; regexes over whole files cost more.  A constructor's
    # class named without a call counts too: the module may build it through a class-level
    # attribute (`self.metadata_cls(...)`, `metadata_cls: type[M]`, M bound to a metadata class)
    return any(x in text for x in pad_lits) or any(x in text for x in sink_lits) \
        or any(x in text for x in _class_literals(profile)) \
        or bool(profile.sink_builders) and builds_annotated(text)


_RETURNS = re.compile(r"->\s*([^:\n]+):")  # the return annotation's text (`X`, `"X"`, `X | None`, `Optional[X]`)
_NAME = re.compile(r"[A-Za-z_][\w.]*")


def builds_annotated(text: str) -> bool:
    """Whether ``text`` names a builder class (``Builder``) and constructs a class a function of
    it is annotated to return (``def _build_decode(...) -> FlashMLADecodeMetadata:`` and
    ``FlashMLADecodeMetadata(...)``): the shape of a metadata builder's method, whatever its
    classes are called.  A text test only (it decides what is parsed): whether the class is a
    builder of the profile's ``[sinks] builders`` is the analysis's question
    (:meth:`padlint.analysis.callgraph.CallGraph.builder_outputs`)."""
    if "->" not in text or "Builder" not in text:
        return False
    names = {n.rsplit(".", 1)[-1] for ann in _RETURNS.findall(text) for n in _NAME.findall(ann)} - _NOT_CLASSES
    if not names:
        return False
    return re.search(rf"\b(?:{'|'.join(sorted(map(re.escape, names)))})\s*\(", text) is not None


_NOT_CLASSES = frozenset({"None", "int", "float", "bool", "str", "bytes", "list", "dict", "tuple", "set",
                          "object", "Any", "Optional", "Union", "torch", "np", "Tensor", "List", "Dict",
                          "Tuple", "Sequence", "Iterator", "Callable", "type"})


def _class_literals(profile: Profile) -> tuple[str, ...]:
    """The fixed pieces of the constructor patterns, without the call's ``(``."""
    return tuple(x for x in (max(re.split(r"[*?]|\[[^\]]*\]", p), key=len) for p in profile.sink_constructors) if x)


def _relevance_literals(profile: Profile) -> tuple[str, ...]:
    sink_lits, pad_lits = _literals(profile)
    calls = set(profile.copy_to_device) | set(profile.fill_methods) | {n for n, _ in profile.reset_helpers}
    return sink_lits + pad_lits + tuple(f"{c}(" for c in sorted(calls))
