"""PAD005 initial-value: a never-written persistent buffer's allocation value reaches a sink.

The engine marks a padded slice of a persistent buffer that nothing in the
project writes after its allocation (:class:`padlint.analysis.buffers.BufferIndex`)
with a taint of reason ``init`` when the allocation value is uninitialised
(``torch.empty``) or not the sink field's neutral value
(:meth:`padlint.analysis.interp.Interpreter._taints`).  This rule reports those
sink arguments.

How PAD001 and PAD005 divide: rows that some step may write are PAD001's
("may be stale", also on the dummy-run and capture paths where nothing wrote
them yet); a buffer that no code in the project writes after allocation has no
stale rows, only its initial value, and is PAD005's.  One sink argument is
never reported by both for the same source.
"""

from __future__ import annotations

import ast

from padlint.analysis.interp import Interpreter
from padlint.analysis.project import _dotted
from padlint.model import Finding, TraceStep, split_lines
from padlint.profile import Profile
from padlint.rules.base import Facts, Rule
from padlint.rules.pad001 import _short, _shown, sink_phrase, sink_trace

CODE = "PAD005"


def init_findings(interp: Interpreter, profile: Profile, texts: dict[str, str]) -> list[Finding]:
    """One finding per sink argument a never-written buffer's non-neutral initial value reaches."""
    out: list[Finding] = []
    for hit in interp.hits.values():
        if hit.path not in texts:
            continue
        taints = [t for t in hit.taints if t.reason == "init"]
        if not taints:
            continue
        t = taints[0]
        pair = profile.pair_for_padded(t.padded)
        real = next((hit.real_names[r] for r in (pair.real if pair else ()) if r in hit.real_names),
                    pair.real[0] if pair else "?")
        padded = hit.padded_names.get(t.padded) or t.padded_written or t.padded
        lead = ":, " * t.dim
        noun = "rows" if t.dim == 0 else "entries"
        rows = (f"[{lead}{real} + {t.offset}:{padded} + {t.offset}]" if t.offset else f"[{lead}{real}:{padded}]")
        alloc_line, alloc_note, alloc_path = t.steps[0]
        empty = "uninitialised" in alloc_note
        where_alloc = f"line {alloc_line}" if alloc_path == hit.path else f"{_shown(alloc_path)}:{alloc_line}"
        spec = profile.field_spec(hit.field)
        if empty:
            value = "uninitialised memory"
            how = f"allocated uninitialised at {where_alloc}"
        else:
            init = alloc_note.split(" with ", 1)[1].split(" in every row", 1)[0]
            value = init
            how = f"allocated with {init} at {where_alloc}"
        want = ""
        if spec is not None:
            want = (", not the last real offset (cumulative offsets)" if spec.neutral == "flat"
                    else f", not the neutral value {spec.neutral} of `{hit.field}`")
        sink = sink_phrase(hit)
        more = f" (and {len(taints) - 1} more)" if len(taints) > 1 else ""
        base = t.buffer.split("[", 1)[0]
        fix = (f"; allocate `{_short(base)}` with the neutral value"
               + (f" {spec.neutral}" if spec is not None and spec.neutral != "flat" else "")
               + f" or write its {noun} {rows} before the sink")
        message = (f"`{_short(t.buffer)}`{more} is a padded slice of `{base}`, {how} and never written "
                   f"anywhere in the project; {noun} {rows} hold {value}{want}{',' if want else ''} {sink}{fix}")
        trace = sink_trace(hit, taints, hit.path)
        out.append(Finding(
            code=CODE, path=hit.path, line=hit.span[0], column=hit.span[1], end_line=hit.span[2],
            end_column=hit.span[3], message=message, severity=hit.severity, sink=hit.sink,
            field=hit.field, buffer=t.buffer, padded=padded, real=real, trace=trace, fix=None,
            statement=hit.stmt_text, function=hit.function))
    out.sort(key=Finding.sort_key)
    return out


def _int_value(profile: Profile, text: str) -> int | None:
    """The integer a neutral value denotes (a literal or a profile constant), else None."""
    c = profile.constant(text)
    if isinstance(c, int) and not isinstance(c, bool):
        return c
    try:
        v = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def table_findings(facts: Facts) -> list[Finding]:
    """Padding rows that index an uninitialised table row: an index field with a ``table`` in the
    profile (``[fields.req_pool_indices] table = "req_to_token"``) pads with its neutral value v,
    so every padding row indexes row v of that table; a table allocated uninitialised
    (``torch.empty``) whose row v nothing in the project writes hands the consumer garbage
    there.  Reported at the allocation, in checked files."""
    profile = facts.profile
    specs = [f for f in profile.fields if f.table]
    out: list[Finding] = []
    if not specs:
        return out
    uninit = set(profile.uninitialized_allocators)
    for path, key in sorted(facts.keys.items()):
        text = facts.texts.get(path, "")
        for spec in specs:
            if f".{spec.table}" not in text:
                continue
            row = _int_value(profile, spec.neutral)
            mod = facts.project.module(key)
            if row is None or row < 0 or mod is None:
                continue  # a negative sentinel is skipped or wraps: PAD002's question
            for node in ast.walk(mod.tree):
                targets = node.targets if isinstance(node, ast.Assign) else \
                    [node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else []
                if not any(isinstance(t, ast.Attribute) and t.attr == spec.table for t in targets):
                    continue
                call = node.value
                name = _dotted(call.func) if isinstance(call, ast.Call) else None
                if name not in uninit:
                    continue
                written = facts.interp.buffers.row_written(spec.table, row)
                if written is not None:
                    continue
                target = next(t for t in targets if isinstance(t, ast.Attribute) and t.attr == spec.table)
                tname = _dotted(target) or spec.table
                message = (f"`{_short(tname)}` is allocated uninitialised (`{name}`) and nothing in the project "
                           f"writes its row {row}, but the padding rows of `{spec.name}` hold {spec.neutral} "
                           f"(its neutral value) and index that row"
                           + (f" ({spec.consumer})" if spec.consumer else "")
                           + f"; allocate it with `torch.zeros` or write row {row} before any step reads it")
                trace = (TraceStep(path, node.lineno, f"`{_short(tname)}` allocated uninitialised"),)
                out.append(Finding(
                    code=CODE, path=path, line=node.lineno, column=call.col_offset + 1,
                    end_line=call.end_lineno or node.lineno, end_column=(call.end_col_offset or 0) + 1,
                    message=message, severity="error", sink=f"{spec.name} -> {spec.table}",
                    field=spec.name, buffer=tname, padded="", real="", trace=trace, fix=None,
                    statement=split_lines(text)[node.lineno - 1].strip(), function=""))
    return out


class InitialValue(Rule):
    code = CODE
    name = "initial-value"

    def wants(self, text: str, profile: Profile | None = None) -> bool:
        # an uninitialised allocation of a table the profile names for an index field (its padding
        # rows index that table's row at the neutral value)
        if profile is None or "empty" not in text:
            return False
        return any(f".{f.table}" in text for f in profile.fields if f.table)

    def check(self, facts: Facts) -> list[Finding]:
        return sorted(init_findings(facts.interp, facts.profile, facts.texts) + table_findings(facts),
                      key=Finding.sort_key)
