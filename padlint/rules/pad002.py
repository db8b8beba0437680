"""PAD002 pad-value-differs-from-contract: a query over the engine's pad-value facts.

The engine (:mod:`padlint.analysis.padvalue`) judges every write that covers
the padding rows of a sink argument against the field's contract in the
profile; this rule turns each wrong value into a finding at the write (when it
is in a checked file, else at the sink), once per (write, field), with the
replacement of the written value by the neutral value as an unsafe fix, and
each index field without a contract into one finding.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from padlint.model import Finding, Fix, TraceStep, split_lines
from padlint.profile import Profile
from padlint.rules.base import Facts, Rule
from padlint.rules.pad001 import _short, _shown

if TYPE_CHECKING:  # the engine (and libcst) load only when a rule runs: a cached run needs neither
    from padlint.analysis.padvalue import ConstructionDisagrees, PadValueFacts, UnknownContract, WrongPadValue

CODE = "PAD002"


def _facts(facts: Facts) -> PadValueFacts:
    from padlint.analysis.padvalue import pad_value_facts

    return facts.family("pad_values", lambda f: pad_value_facts(f.interp, f.profile, f.project, f.keys))


def _module_names(source: str) -> set[str]:
    """Names the module binds at its top level (imports, assignments, definitions)."""
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                out.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
    return out


def _shown_value(neutral: str, profile: Profile, source: str) -> str:
    """The neutral value as code in ``source`` can write it: a named constant only where the
    module binds the name (imports or defines it), else its value."""
    if re.fullmatch(r"[A-Za-z_]\w*", neutral) and neutral not in ("True", "False", "None"):
        value = profile.constant(neutral)
        if value is not None and neutral not in _module_names(source):
            return repr(value)
    return neutral


def _base(buffer: str) -> str:
    """`self.seq_lens[:num_reqs_padded]` -> `seq_lens`; `q.gpu[:n]` -> `q.gpu`."""
    short = _short(buffer)
    i = short.find("[")
    return short[:i] if i > 0 else short


def _rows(profile: Profile, padded: str, offset: int, real: str = "") -> str:
    pair = profile.pair_for_padded(padded)
    real = real or (pair.real[0] if pair else "?")
    return f"[{real} + {offset}:{padded} + {offset}]" if offset else f"[{real}:{padded}]"


def _where(hit) -> str:
    if hit.kind == "attribute":
        return f"stored as `.{hit.field}` on a {hit.sink}"
    if hit.kind == "keyword":
        return f"passed as `{hit.field}=` to {hit.sink}"
    if hit.kind == "replay":
        return f"read by the CUDA graph replayed there (bound at capture as `{hit.field}`)"
    if hit.kind == "capture":
        return f"read as `{hit.field}` by the graphs captured there, on rows that hold no request"
    return f"passed as argument {hit.field} to {hit.sink}"


def _location(facts: Facts, path: str, line: int, span) -> tuple[int, int, int, int]:
    if span is not None:
        return span[:4]
    text = facts.texts.get(path, "")
    lines = split_lines(text)
    row = lines[line - 1] if 0 < line <= len(lines) else ""
    start = len(row) - len(row.lstrip()) + 1
    return (line, start, line, max(len(row.rstrip()) + 1, start))


def _placed(facts: Facts, site, hit, span) -> tuple[str, tuple[int, int, int, int], str]:
    """Where a finding about a write is reported: at the write when it is in a checked file (its
    span when known), else at the sink; with the reported statement's text."""
    from padlint.analysis.interp import norm  # the engine loads when a rule runs (see above)

    if site.path in facts.texts:
        path, where, statement_line = site.path, _location(facts, site.path, site.line, span), site.line
    else:
        path, where, statement_line = hit.path, hit.span()[:4], hit.stmt_line
    lines = split_lines(facts.texts.get(path, ""))
    return path, where, norm(lines[statement_line - 1]) if 0 < statement_line <= len(lines) else ""


def _span_text(source: str, span) -> str | None:
    lines = split_lines(source)
    line, col, end_line, end_col = span[:4]
    if not (0 < line <= end_line <= len(lines)):
        return None
    if line == end_line:
        return lines[line - 1][col - 1:end_col - 1]
    return None  # a value written over several lines: no fix


def _wrong(facts: Facts, w: WrongPadValue) -> Finding:
    profile = facts.profile
    site, hit, spec = w.site, w.hit, w.spec
    in_checked = site.path in facts.texts
    source = facts.texts.get(site.path, "")
    rows = _rows(profile, w.cover.padded, w.cover.offset, w.cover.real)
    if hit.kind == "capture":  # at capture every row of the captured size is a padding row
        rows = "[0:" + (w.cover.buffer.rpartition("[:")[2].rstrip("]") or w.cover.padded) + "]"
    buffer = hit.arg_name if w.cover.derived and hit.arg_name else _base(w.cover.buffer)
    flat = w.neutral == "flat"
    neutral = "the last real value (cumulative offsets)" if flat else \
        _shown_value(w.neutral, profile, source or facts.texts.get(hit.path, ""))
    constant = profile.constant(w.neutral) if not flat else None
    neutral_said = f"{w.neutral} ({constant!r})" if constant is not None else \
        ("the last real value (cumulative offsets)" if flat else w.neutral)
    written = " or ".join(v for v in w.value.split("|") if v) or w.value
    span = facts.interp.write_span(site) if in_checked and site.node else None
    as_written = _span_text(source, span) if span is not None and span[4] == "value" else None
    if as_written and as_written.strip() != written:
        written = f"`{as_written.strip()}` ({written})"
    if site.kind == "fill":
        what = f"the allocation at line {site.line} fills `{buffer}` with {written}"
        how = f"and its padding rows {rows} are not written again before they are {_where(hit)}"
    elif site.kind == "kernel":
        what = f"the kernel launched at line {site.line} stores {written}"
        how = f"into the padding rows {rows} of `{buffer}`, {_where(hit)}"
    elif site.kind == "registry":
        what = f"the padding policy applied at line {site.line} writes {written}"
        how = f"into the padding rows {rows} of `{buffer}`, {_where(hit)}"
    else:
        what = f"the reset at line {site.line} writes {written}"
        how = f"into the padding rows {rows} of `{buffer}`, {_where(hit)}"
    contract = f"the profile's [fields.{w.field}]"
    if w.backend is not None:
        contract += f" under backend {w.backend} (module `{w.module}`)"
    message = f"{what} {how}; the neutral value of `{w.field}` is {neutral_said} ({contract}"
    if spec.why:
        message += f": {spec.why}"
    message += ")"
    if spec.backends and w.backend is None:
        message += f"; the backend cannot be told here: this assumes {spec.assumed_backend}"
        if w.also_neutral_for:
            message += f" ({written} is the neutral value only under {', '.join(w.also_neutral_for)})"
    if w.wraps:
        consumer = f" ({spec.consumer})" if spec.consumer else ""
        message += (f"; its consumer uses `{w.field}` as an index{consumer}: {written} wraps to the last "
                    f"row, a live entry, instead of being skipped")

    # the fix: the written value replaced by the neutral value, in the write's own file
    fix = None
    if span is not None and not flat and "|" not in w.value:
        old = _span_text(source, span)
        new = None
        if old is not None and span[4] == "value":
            new = neutral
        elif old is not None and span[4] == "zero" and re.search(r"\bzero_\(\s*\)$", old):
            new = re.sub(r"\bzero_\(\s*\)$", f"fill_({neutral})", old)
        if new is not None and old and new != old:
            fix = Fix(path=site.path, line=span[0], indent="", text=new,
                      description=f"write {neutral} (the neutral value of `{w.field}`) instead of {written}",
                      safe=False, column=span[1], end_line=span[2], end_column=span[3], old=old)
    if fix is not None:
        message += f"; write {neutral} instead"
    elif not flat:
        message += f"; make it write {neutral}"
    else:
        message += f"; write the last real offset into rows {rows} instead"

    trace = [TraceStep(_shown(site.path) or site.path, site.line, f"writes {written} into the padding rows "
                                                                  f"{rows} of `{buffer}`")]
    trace.extend(TraceStep(_shown(p) or hit.path, line, note) for line, note, p in hit.chain)
    trace.append(TraceStep(hit.path, hit.span()[0], f"reaches sink {hit.sink} as `{hit.field}`"))
    path, (line, col, end_line, end_col), statement = _placed(facts, site, hit, span)
    if path != site.path and site.path:
        message += f" (the write is in {_shown(site.path)}, not a checked file)"
    return Finding(code=CODE, path=path, line=line, column=col, end_line=end_line, end_column=end_col,
                   message=message, severity="error", sink=hit.sink, field=w.field, buffer=w.cover.buffer,
                   padded=w.cover.padded, real=_rows(profile, w.cover.padded, 0, w.cover.real)[1:].split(":")[0],
                   trace=tuple(trace), fix=fix, statement=statement, function=hit.function)


def _unknown(facts: Facts, u: UnknownContract) -> Finding:
    from padlint.analysis.interp import norm  # the engine loads when a rule runs (see above)

    profile = facts.profile
    hit = u.hit
    rows = _rows(profile, u.cover.padded, u.cover.offset, u.cover.real)
    buffer = hit.arg_name if u.cover.derived and hit.arg_name else _base(u.cover.buffer)
    checked = [s for s in u.sites if s.path in facts.texts]
    site = checked[0] if checked else u.sites[0]
    values = ", ".join(dict.fromkeys(s.value for s in u.sites))
    message = (f"`{u.field}` holds indices (the profile's index_fields: `{u.pattern}`) but the profile gives it "
               f"no neutral value: the write at line {site.line} puts {values} into the padding rows {rows} "
               f"of `{buffer}`, {_where(hit)}; padlint cannot tell whether its consumer skips that index or "
               f"reads a live row, and does not trust it; check the consumer and give the field its neutral "
               f"value in [fields.{u.field}]")
    trace = [TraceStep(_shown(s.path) or s.path, s.line, f"writes {s.value} into the padding rows {rows}")
             for s in u.sites[:3]]
    trace.extend(TraceStep(_shown(p) or hit.path, line, note) for line, note, p in hit.chain)
    sink_span = hit.span()
    trace.append(TraceStep(hit.path, sink_span[0], f"reaches sink {hit.sink} as `{u.field}`"))
    if site.path in facts.texts:
        path = site.path
        line, col, end_line, end_col = _location(facts, site.path, site.line,
                                                 facts.interp.write_span(site) if site.node else None)
        statement_line = site.line
    else:
        path = hit.path
        line, col, end_line, end_col = sink_span
        statement_line = hit.stmt_line
    lines = split_lines(facts.texts.get(path, ""))
    statement = norm(lines[statement_line - 1]) if 0 < statement_line <= len(lines) else ""
    return Finding(code=CODE, path=path, line=line, column=col, end_line=end_line, end_column=end_col,
                   message=message, severity="warning", sink=hit.sink, field=u.field, buffer=u.cover.buffer,
                   padded=u.cover.padded, real="", trace=tuple(trace), fix=None, statement=statement,
                   function=hit.function)


def _disagrees(facts: Facts, d: ConstructionDisagrees) -> Finding:
    """A reset that writes one literal into padding rows whose buffer the code constructs with
    another deliberate value, for a field the profile gives no contract."""
    profile = facts.profile
    site, hit = d.site, d.hit
    in_checked = site.path in facts.texts
    source = facts.texts.get(site.path, "")
    rows = _rows(profile, d.cover.padded, d.cover.offset, d.cover.real)
    buffer = _base(d.cover.buffer)
    built = (f"line {d.construction.line}" if d.construction.path == site.path
             else f"{_shown(d.construction.path) or d.construction.path}:{d.construction.line}")
    shown = f"`{d.constructed}`" if not re.fullmatch(r"-?[\d.]+|True|False", d.constructed) else d.constructed
    span = facts.interp.write_span(site) if in_checked and site.node else None
    what = {"registry": "the padding policy applied", "kernel": "the kernel launched"}.get(site.kind, "the reset")
    contract = (f"whose neutral value the profile does not give" if not d.assumed else
                f"whose neutral value depends on the backend ({d.value} assumes {d.assumed}; this code "
                f"does not tell which backend runs it, the construction does)")
    message = (f"{what} at line {site.line} writes {d.value} into the padding rows {rows} of `{buffer}`, "
               f"{_where(hit)}, but the code constructs `{buffer}` with {shown} in every row ({built}): two "
               f"pad values for `{d.field}`, {contract}; padding rows hold {d.value} after this write and "
               f"{shown} at capture")
    fix = None
    # the construction's value can be written at the reset only where it means the same there: a
    # literal, or `self.x` of the class that constructs the buffer when the reset is on that
    # class's own `self.<buffer>` in the same file
    own = d.cover.buffer.startswith(f"self.{buffer.split('.')[-1]}") and "." not in buffer \
        and d.construction.path == site.path
    portable = re.fullmatch(r"-?[\d.]+|True|False", d.constructed) is not None or (
        own and re.fullmatch(r"self\.\w+", d.constructed) is not None)
    if span is not None and span[4] == "value" and d.constructed and portable:
        old = _span_text(source, span)
        if old is not None and old.strip() == d.value and old != d.constructed:
            fix = Fix(path=site.path, line=span[0], indent="", text=d.constructed,
                      description=f"write {d.constructed} (the value `{buffer}` is constructed with) instead of "
                                  f"{d.value}", safe=False, column=span[1], end_line=span[2],
                      end_column=span[3], old=old)
    message += (f"; write {shown} instead" if fix is not None else f"; make the two agree") + \
        ("" if d.assumed else f" (or give [fields.{d.field}] the neutral value its consumer needs)")
    trace = [TraceStep(_shown(d.construction.path) or d.construction.path, d.construction.line,
                       f"`{buffer}` constructed with {shown} in every row"),
             TraceStep(_shown(site.path) or site.path, site.line, f"writes {d.value} into the padding rows {rows}")]
    trace.extend(TraceStep(_shown(p) or hit.path, line, note) for line, note, p in hit.chain)
    trace.append(TraceStep(hit.path, hit.span()[0], f"reaches sink {hit.sink} as `{d.field}`"))
    path, (line, col, end_line, end_col), statement = _placed(facts, site, hit, span)
    return Finding(code=CODE, path=path, line=line, column=col, end_line=end_line, end_column=end_col,
                   message=message, severity="warning", sink=hit.sink, field=d.field, buffer=d.cover.buffer,
                   padded=d.cover.padded, real="", trace=tuple(trace), fix=fix, statement=statement,
                   function=hit.function)


class PadValueDiffersFromContract(Rule):
    code = CODE
    name = "pad-value-differs-from-contract"

    def check(self, facts: Facts) -> list[Finding]:
        found = _facts(facts)
        out: list[Finding] = [f for u in found.unknown if (f := _unknown(facts, u)).path in facts.texts]
        seen: set[tuple] = set()  # one finding per write and field (a wrong value first)
        for f in [_wrong(facts, w) for w in found.wrong] + [_disagrees(facts, d) for d in found.disagree]:
            key = (f.path, f.line, f.column, f.field)
            if f.path in facts.texts and key not in seen:
                seen.add(key)
                out.append(f)
        out.sort(key=Finding.sort_key)
        return out
