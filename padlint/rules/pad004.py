"""PAD004 count-axis-mismatch: a query over the engine's axis facts.

(a) A persistent buffer whose rows are requests sliced or written with a token count
(:class:`padlint.analysis.axes.SliceSite` on a request buffer with a token count; the
reverse stays inside the live rows and is a deliberate reuse in decode steps); (b) the fields of one metadata object sliced to the real count of an axis
beside fields sliced to its padded count (:class:`padlint.analysis.axes.MetadataWidths`).
A buffer refreshed up to ``[:n]`` and handed out up to ``[:n_padded]`` is PAD001's
(stale padding rows reach the sink); see the rule page.
"""

from __future__ import annotations

from padlint.analysis.axes import (
    AxisFacts,
    CountAxis,
    MetadataWidths,
    SliceSite,
    WholeHandout,
    axis_facts,
)
import re

from padlint.model import Finding, Fix, TraceStep, split_lines
from padlint.profile import Profile
from padlint.rules.base import Facts, Rule, shown_path

CODE = "PAD004"
_NOUN = {"reqs": "request", "tokens": "token"}


def _facts(facts: Facts) -> AxisFacts:
    return axis_facts(facts.profile, facts.project, facts.keys, facts.texts)


def _short(text: str) -> str:
    return text.removeprefix("self.")


def _count_words(c: CountAxis) -> str:
    """`batch_size`, a token count (`batch_size = m.num_actual_tokens`, line 412)"""
    what = f"a {_NOUN[c.axis]} count"
    if c.via and c.definition is not None:
        base = c.text.split("+", 1)[0].strip()
        return f"`{c.text}`, {what} (`{base} = {c.definition[0]}`, line {c.definition[1]})"
    return f"`{c.text}`, {what}"


def _replacement(profile: Profile, c: CountAxis) -> tuple[str, str] | None:
    """(old text, new text) that puts the count on the other axis, from ``[axes.counterparts]``:
    the definition of the local (``m.num_actual_tokens`` -> ``m.num_reqs``) or the count itself."""
    other = profile.axes.counterpart(c.name)
    if other is None:
        return None
    old = c.definition[0] if c.definition is not None else c.text.split("+", 1)[0].strip()
    last = old.rsplit(".", 1)
    if last[-1] != c.name:
        return None
    return old, (f"{last[0]}.{other}" if len(last) == 2 else other)


def _char_span(source: str, line: int, col: int, end_line: int, end_col: int) -> tuple[int, int, str] | None:
    """(start column, end column, text) in characters of a one-line span given in ``ast``'s
    UTF-8 byte columns (1-based, end exclusive); None for a span over several lines."""
    lines = split_lines(source)
    if line != end_line or not 0 < line <= len(lines):
        return None
    raw = lines[line - 1].encode("utf-8")
    try:
        start = len(raw[:col - 1].decode("utf-8")) + 1
        end = len(raw[:end_col - 1].decode("utf-8")) + 1
    except UnicodeDecodeError:
        return None
    return start, end, lines[line - 1][start - 1:end - 1]


def _slice_fix(profile: Profile, s: SliceSite, source: str, reported: list[SliceSite]) -> Fix | None:
    """The count put on the request axis: at the local's definition when every read of that
    local in the function is a reported slice (``batch_size = m.num_actual_tokens`` ->
    ``m.num_reqs``, vLLM 0.24.0's fix), else in the slice itself when the count is written
    there (``[:m.num_actual_tokens]``).  Unsafe: the rows the consumer gets change."""
    rep = _replacement(profile, s.count)
    if rep is None or not source:
        return None
    old, new = rep
    c = s.count
    if c.definition is not None:
        local = c.via[0]
        same = [r for r in reported if r.path == s.path and r.function == s.function
                and r.count.via[:1] == (local,)]
        if len(same) != c.uses:
            return None  # the local is read elsewhere too: changing it would change those reads
        _text, line, col, end_line, end_col = c.definition
        span = _char_span(source, line, col, end_line, end_col)
        if span is None or span[2] != old:
            return None
        return Fix(path=s.path, line=line, indent="", text=new, safe=False, column=span[0], end_line=line,
                   end_column=span[1], old=old,
                   description=f"count `{local}` on the request axis: `{old}` -> `{new}`")
    span = _char_span(source, s.line, s.column, s.end_line, s.end_column)
    if span is None:
        return None
    hits = list(re.finditer(rf"(?<![\w.]){re.escape(old)}(?!\w)", span[2]))
    if len(hits) != 1:
        return None
    h = hits[0]
    text = span[2][:h.start()] + new + span[2][h.end():]
    return Fix(path=s.path, line=s.line, indent="", text=text, safe=False, column=span[0], end_line=s.line,
               end_column=span[1], old=span[2], description=f"slice with the request count `{new}`")


def slice_findings(facts: Facts, ax: AxisFacts) -> list[Finding]:
    out: list[Finding] = []
    profile = facts.profile
    reported = [s for s in ax.slices if s.path in facts.texts and _reported(s)]
    for s in reported:
        out.append(_slice_finding(profile, s, "reqs", _slice_fix(profile, s, facts.texts[s.path], reported)))
    return out


def _reported(s: SliceSite) -> bool:
    """A request buffer sliced or written with a token count."""
    axis = s.buffer.axis(skip=(s.path, s.line))
    if not any(e.kind == "write" and e.axis == axis and (e.path, e.line) != (s.path, s.line)
               for e in s.buffer.evidence):
        # the allocation alone is a name (`max_bs`, `max_batch_size`); SGLang sizes token
        # buffers and flashinfer decode rows (one per query token) with such names: the code
        # must also write the buffer with a count of that axis somewhere else
        return False
    # the reverse (a token buffer sliced or written with a request count) stays inside
    # the live tokens (every request has at least one): decode steps and drafters reuse
    # token buffers with one row per request on purpose (see the rule page)
    return axis == "reqs" and s.count.axis == "tokens"


def _slice_finding(profile: Profile, s: SliceSite, axis: str, fix: Fix | None = None) -> Finding:
    alloc = s.buffer.allocation()
    writes = [e for e in s.buffer.evidence if e.kind == "write" and (e.path, e.line) != (s.path, s.line)]
    why = alloc.text if alloc else ""
    if writes:
        why += f"; {len(writes)} write{'s' if len(writes) > 1 else ''} with {_NOUN[axis]} counts"
    verb = "written" if s.write else "sliced"
    harm = ("rows past the live requests are read as requests (stale or unrelated rows reach the "
            "consumer)" if not s.write else "rows past the live requests are overwritten")
    rep = _replacement(profile, s.count)
    if rep is not None:
        where = f" at line {s.count.definition[1]}" if s.count.definition is not None else ""
        hint = f"; use the {_NOUN[axis]} count: replace `{rep[0]}` with `{rep[1]}`{where}"
    else:
        hint = f"; slice it with a {_NOUN[axis]} count"
    message = (f"`{_short(s.buffer_text)}` has one row per {_NOUN[axis]} ({why}) but is {verb} with "
               f"{_count_words(s.count)}: {harm}{hint}")
    trace: list[TraceStep] = []
    if alloc is not None:
        trace.append(TraceStep(alloc.path, alloc.line, f"`{s.buffer.attr}` {alloc.text}: one row per {_NOUN[axis]}"))
    trace.extend(TraceStep(e.path, e.line, e.text) for e in writes[:3])
    if s.count.definition is not None:
        trace.append(TraceStep(s.path, s.count.definition[1],
                               f"`{s.count.via[0]}` = `{s.count.definition[0]}`, a {_NOUN[s.count.axis]} count"))
    trace.append(TraceStep(s.path, s.line, f"`{s.text}` {verb} with a {_NOUN[s.count.axis]} count"))
    return Finding(code=CODE, path=s.path, line=s.line, column=s.column, end_line=s.end_line,
                   end_column=s.end_column, message=message, severity="error", sink="",
                   field=s.buffer.attr, buffer=s.text, padded=s.count.text, real=rep[1] if rep else "",
                   trace=tuple(trace), fix=fix, statement=s.stmt_text, function=s.function)


def width_findings(facts: Facts, ax: AxisFacts) -> list[Finding]:
    """One finding per field and place: an object judged on every path and again on the path
    where its counts are padded reports a field narrower on both once (the first)."""
    out: list[Finding] = []
    seen: set[tuple] = set()
    for m in ax.metadata:
        if m.path in facts.texts:
            for f in _width_findings(facts.profile, m):
                key = (f.path, f.line, f.column, f.field)
                if key not in seen:
                    seen.add(key)
                    out.append(f)
    return out


def _width_findings(profile: Profile, m: MetadataWidths) -> list[Finding]:
    out: list[Finding] = []
    for axis in ("reqs", "tokens"):
        fields = []
        for f in m.fields:
            spec = profile.field_spec(f.field)
            declared = None if spec is None else ("reqs" if spec.axis == "reqs+1" else spec.axis)
            if f.count.axis == axis and declared in (None, axis) and f.count.padded is not None:
                fields.append(f)
        real = [f for f in fields if not f.count.padded]
        padded = [f for f in fields if f.count.padded]
        if not real or not padded:
            continue
        paired = [f for f in real if any(profile.is_real_for(f.count.name, p.count.name) for p in padded)]
        if not paired:
            continue
        odd, rest = (padded, real) if len(padded) < len(real) else (paired, padded)
        # a count field (``num_reqs=num_reqs_padded``) says how many rows the consumer reads: it
        # counts for the padded width but is never the odd one
        if any(f.declared for f in odd):
            odd, rest = paired, padded
        odd = [f for f in odd if not f.declared]
        width = min((f.count for f in rest), key=lambda c: (c.offset != 0, c.offset))
        sliced = [f for f in rest if not f.declared]
        counts = [f for f in rest if f.declared]
        parts = []
        if sliced:
            parts.append(", ".join(f"`{f.field}`" for f in sliced[:4]) + (" ..." if len(sliced) > 4 else "")
                         + f" of the same object {'are' if len(sliced) > 1 else 'is'} sliced to `{width.text}`")
        if counts:
            parts.append(", ".join(f"`{f.field}`" for f in counts[:2])
                         + f"{'' if sliced else ' of the same object'} {'say' if len(counts) > 1 else 'says'} "
                         f"`{counts[0].count.text}` rows")
        where = f" where {m.condition}" if m.condition else ""
        for f in odd:
            state = "padded" if f.count.padded else "real"
            real_text = f.count.text
            if f.steps:
                # not sliced where it is handed over: its rows were made elsewhere (a gather, a copy),
                # with a count named there (maybe a local of another function): say where
                made = f.steps[-1]
                real_text = f"{f.count.text} ({shown_path(made[0])}:{made[1]})"
                has = (f"has one row per {state} {_NOUN[axis]} (`{f.text}`: `{f.count.text}` rows, made at "
                       f"{shown_path(made[0])}:{made[1]})")
                fix = (f"slice `{f.field}` to the count the others have" if f.count.padded else
                       f"give `{f.field}` the rows the others have: pad it up to their count with the "
                       f"{_NOUN[axis]}s' neutral value where it is made or handed over")
            else:
                has = f"is sliced to `{f.count.text}` ({state} {_NOUN[axis]} count)"
                fix = (f"slice every {_NOUN[axis]} field to the same count"
                       + (" (and reset the padding rows of the ones that grow)" if not f.count.padded else ""))
            message = (f"`{f.field}` of {m.sink} {has} while {' and '.join(parts)}{where}: the {_NOUN[axis]} "
                       f"fields of one metadata object disagree on their row count; {fix}")
            trace = tuple(TraceStep(m.path, g.line, f"`{g.field}` = `{g.slice_text}`") for g in (f, *rest[:3]))
            trace += tuple(TraceStep(shown_path(p), line, text) for p, line, text in f.steps[:12])
            out.append(Finding(code=CODE, path=m.path, line=f.line, column=f.column, end_line=f.end_line,
                               end_column=f.end_column, message=message, severity="error", sink=m.sink,
                               field=f.field, buffer=f.slice_text, padded=width.text, real=real_text,
                               trace=trace, fix=None, statement=m.stmt_text, function=m.function))
    return out


def handout_findings(facts: Facts, ax: AxisFacts) -> list[Finding]:
    return [_handout_finding(h) for h in ax.handouts if h.path in facts.texts]


def _handout_finding(h: WholeHandout) -> Finding:
    c = h.count
    noun = _NOUN[c.axis]
    message = (f"`{_short(h.buffer_text)}` is refreshed only up to `[:{c.text}]` (line {h.refresh_line}, the real "
               f"{noun} count) but handed whole to {h.sink} as `{h.field}`: the consumer gets every row of the "
               f"buffer, and the rows past `{c.text}` hold what earlier steps left there; pass "
               f"`{h.buffer_text}[:{c.text}]`, or the padded slice with its padding rows reset")
    trace = (TraceStep(h.path, h.refresh_line, f"`{h.refresh_text}` refreshes rows [:{c.text}] only"),
             TraceStep(h.path, h.line, f"`{h.buffer_text}` handed out whole as `{h.field}`"))
    return Finding(code=CODE, path=h.path, line=h.line, column=h.column, end_line=h.end_line,
                   end_column=h.end_column, message=message, severity="error", sink=h.sink, field=h.field,
                   buffer=h.buffer_text, padded="", real=c.text, trace=trace, fix=None, statement=h.stmt_text,
                   function=h.function)


class CountAxisMismatch(Rule):
    code = CODE
    name = "count-axis-mismatch"

    def check(self, facts: Facts) -> list[Finding]:
        ax = facts.family("axes", _facts)
        out = slice_findings(facts, ax) + width_findings(facts, ax) + handout_findings(facts, ax)
        out.sort(key=Finding.sort_key)
        return out
