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

from padlint.analysis.interp import Interpreter
from padlint.model import Finding
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


class InitialValue(Rule):
    code = CODE
    name = "initial-value"

    def check(self, facts: Facts) -> list[Finding]:
        return init_findings(facts.interp, facts.profile, facts.texts)
