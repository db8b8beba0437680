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
stale rows, only its initial value, and is PAD005's.  One exception: the rows
of a view a dummy run hands on without writing them hold, at its first run (a
profile run, a capture, a warm-up: before any step), the value the buffer was
constructed with (:meth:`padlint.analysis.buffers.BufferIndex.construction_value`);
the engine adds an ``init`` taint marked with the dummy run
(:meth:`padlint.analysis.interp.Interpreter._first_run_taint`) beside PAD001's
stale one, and this rule reports it when that value is not neutral.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING

from padlint.analysis.buffers import EMPTY
from padlint.analysis.project import _dotted
from padlint.analysis.values import DUMMY_ROWS, real_in_scope
from padlint.model import Finding, Fix, TraceStep, split_lines
from padlint.profile import Profile
from padlint.rules.base import Facts, Rule
from padlint.rules.pad001 import _short, _shown, origin_place, sink_phrase, sink_trace

if TYPE_CHECKING:  # the engine (and libcst) load only when a rule runs: a cached run needs neither
    from padlint.analysis.interp import Interpreter

CODE = "PAD005"


def init_findings(interp: Interpreter, profile: Profile, texts: dict[str, str]) -> list[Finding]:
    """One finding per sink argument a never-written buffer's non-neutral initial value reaches."""
    out: list[Finding] = []
    seen: set[tuple] = set()
    firsts: list[Finding] = []
    for hit in interp.hits.values():
        first = [t for t in hit.taints if t.reason == "init" and t.dummy]
        if first:
            f = _first_run_finding(hit, first[0], first, profile, texts)
            if f is not None:
                firsts.append(f)
        if hit.path not in texts:
            continue
        taints = [t for t in hit.taints if t.reason == "init" and not t.dummy]
        if not taints:
            continue
        t = taints[0]
        canon, name, _holds = real_in_scope(replace(t, real=()), profile.pair_for_padded(t.padded),
                                            hit.real_names, hit.count_locals)
        real = name or canon or "?"
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
        # one finding per sink argument and buffer (a real step's and a dummy run's paths to it
        # are two engine hits: both reach the same never-written value)
        if (hit.path, hit.span[0], hit.sink, hit.field, t.buffer) in seen:
            continue
        seen.add((hit.path, hit.span[0], hit.sink, hit.field, t.buffer))
        out.append(Finding(
            code=CODE, path=hit.path, line=hit.span[0], column=hit.span[1], end_line=hit.span[2],
            end_column=hit.span[3], message=message, severity=hit.severity, sink=hit.sink,
            field=hit.field, buffer=t.buffer, padded=padded, real=real, trace=trace, fix=None,
            statement=hit.stmt_text, function=hit.function))
    # a first dummy run's reading of a buffer written nowhere is that buffer's finding already
    for f in firsts:
        if (f.path, f.line, f.sink, f.field, f.buffer) not in seen:
            seen.add((f.path, f.line, f.sink, f.field, f.buffer))
            out.append(f)
    out.sort(key=Finding.sort_key)
    return out


def _first_run_finding(hit, t, taints, profile: Profile, texts: dict[str, str]) -> Finding | None:
    """A view a dummy run hands to a sink, whose rows no write of the run reached: at the first
    dummy run (a profile run, a capture, a warm-up: before any step) they hold the value the
    buffer was constructed with, and that value is not the field's neutral value.  Reported at
    the sink, or, when the sink's module is not checked, at the slice in a checked file."""
    alloc_line, alloc_note, alloc_path = t.steps[0]
    slice_line, _note, slice_path = t.steps[1] if len(t.steps) > 1 else t.steps[-1]  # [0]: the construction
    if hit.path in texts:
        path, span, statement, outside = hit.path, hit.span, hit.stmt_text, ""
    elif (placed := origin_place(texts, slice_path, slice_line, hit)) is not None:
        path, (span, statement) = slice_path, placed
        outside = f" (in {_shown(hit.path)}:{hit.span[0]}, a module not checked here)"
    else:
        return None
    empty = t.init_value == EMPTY
    where_alloc = f"line {alloc_line}" if alloc_path == path else f"{_shown(alloc_path)}:{alloc_line}"
    spec = profile.field_spec(hit.field)
    padded = hit.padded_names.get(t.padded) or t.padded_written or t.padded
    if t.real == (DUMMY_ROWS,):
        rows = f"[0:{padded}]"
    else:
        canon, name, _holds = real_in_scope(t, profile.pair_for_padded(t.padded), hit.real_names,
                                            hit.count_locals)
        real = name or canon or "?"
        rows = f"[{real}:{padded}]"
    value = "uninitialised memory" if empty else t.init_value
    how = f"constructed uninitialised at {where_alloc}" if empty else f"constructed with {value} at {where_alloc}"
    want = ""
    if spec is not None and not empty:
        want = (", not the last real offset (cumulative offsets)" if spec.neutral == "flat"
                else f", not the neutral value {spec.neutral} of `{hit.field}`")
    base = t.buffer.split("[", 1)[0]
    head, _, view = base.rpartition(".")
    whole = head if head and view in {*profile.shared_views, profile.device_view} else base
    others = {x.buffer for x in taints} - {t.buffer}  # the same view judged twice is one source
    more = f" (and {len(others)} more)" if others else ""
    if "not copied to the device" in alloc_note:
        host = alloc_note.split("its host view holds ", 1)[1].split(",", 1)[0]
        how += f" (its host view holds {host}: it is not copied to the device view)"
        fix = (f"; copy the host view of `{_short(whole)}` to the device after filling it "
               f"(`{_short(whole)}.copy_to_gpu()`) or write rows {rows} in `{t.dummy}`")
    else:
        fix = (f"; construct `{_short(whole)}` with the neutral value"
               + (f" {spec.neutral}" if spec is not None and spec.neutral != "flat" else "")
               + f" (fill it after the allocation) or write rows {rows} in `{t.dummy}`")
    message = (f"`{_short(t.buffer)}`{more} is a slice of `{base}` ({how}) that the dummy run `{t.dummy}` hands "
               f"on with rows {rows} written by no write of that run; at its first run (a profile run, a "
               f"capture or a warm-up, before any step) they hold {value}{want}, {sink_phrase(hit)}{outside}{fix}")
    return Finding(
        code=CODE, path=path, line=span[0], column=span[1], end_line=span[2],
        end_column=span[3], message=message, severity=hit.severity, sink=hit.sink,
        field=hit.field, buffer=t.buffer, padded=padded, real="0" if t.real == (DUMMY_ROWS,) else "",
        trace=sink_trace(hit, taints, path), fix=None, statement=statement, function=hit.function)


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
        tree = None  # the module's tree, parsed for this file's specs and not kept
        for spec in specs:
            if f".{spec.table}" not in text:
                continue
            row = _int_value(profile, spec.neutral)
            mod = facts.project.module(key)
            if row is None or row < 0 or mod is None:
                continue  # a negative sentinel is skipped or wraps: PAD002's question
            if tree is None:
                tree = mod.peek_tree()
            for node in ast.walk(tree):
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


def local_findings(facts: Facts) -> list[Finding]:
    """Padding rows of a local allocation left uninitialised (:mod:`padlint.analysis.uninit`):
    allocated with as many rows as the step's padded batch, written only up to a real count,
    handed on whole.  Reported at the use that reads every row, with the tail reset to add
    (unsafe: it writes the padding rows); at the forward severity (they are activations)."""
    from padlint.analysis.uninit import uninit_rows

    profile = facts.profile
    allocators = set(profile.uninitialized_allocators)

    def is_count(name: str) -> bool:
        return profile.count_axis(name) is not None or profile.is_padded_count(name) is not None

    # allocations whose uninitialised rows the engine already follows to a sink (PAD001 reports
    # them there, with the sink's neutral value): (path, allocation line)
    judged = {(st[2], st[0]) for hit in facts.interp.hits.values() for t in hit.taints
              if t.reason == "uninit" and t.steps for st in t.steps[:1]}
    out: list[Finding] = []
    for path, key in sorted(facts.keys.items()):
        text = facts.texts.get(path, "")
        if "empty" not in text or "[:" not in text:
            continue
        # a module the analysis parsed already is read from the index; another is parsed here
        # and not kept (most files of a tree mention `empty` and are no part of the analysis)
        mod = facts.project.parsed(key)
        try:
            tree = mod.peek_tree() if mod is not None else ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        lines = split_lines(text)
        for u in uninit_rows(tree, lines, allocators, is_count):
            if (path, u.alloc_line) in judged:
                continue
            rows = f"[{u.bound}:{u.extent}]"
            reset = f"{u.name}[{u.bound}:].zero_()"
            fix = None
            if u.fix is not None:
                line, after, indent = u.fix
                fix = Fix(path=path, line=line, indent=indent, text=reset, after=after, safe=False,
                          description=f"zero the padding rows {rows} of `{u.name}`")
            read = f"`{u.name}` is returned whole (line {u.read_line})" if u.read_text.startswith("return") \
                else f"`{_short(u.read_text)}` reads the whole tensor"
            message = (f"`{u.name}` is allocated uninitialised (`{u.allocator}`) with `{u.extent}` rows and "
                       f"written only through `{u.name}[:{u.bound}]`; its padding rows {rows} hold "
                       f"uninitialised memory (possibly NaN) when {read}: "
                       f"they reach what follows (residuals, MoE routing, per-tensor scales, collectives mix "
                       f"padding rows into real ones); add `{reset}`"
                       + (f" {fix.where}" if fix is not None else " after the writes of the real rows"))
            trace = (
                TraceStep(path, u.alloc_line, f"`{u.name}` allocated uninitialised with `{u.extent}` rows"),
                TraceStep(path, u.write_line, f"written only through `{u.name}[:{u.bound}]`"),
                TraceStep(path, u.read_line, f"read whole: rows {rows} uninitialised"),
            )
            line_text = lines[u.read_line - 1] if u.read_line <= len(lines) else ""
            out.append(Finding(
                code=CODE, path=path, line=u.read_line, column=u.read_col + 1, end_line=u.read_end_line,
                end_column=u.read_end_col + 1, message=message, severity=profile.forward_severity,
                sink="whole-tensor read", field=u.name, buffer=f"{u.name}[:{u.bound}]", padded=u.extent,
                real=u.bound, trace=trace, fix=fix, statement=line_text.strip(), function=u.function))
    return out


class InitialValue(Rule):
    code = CODE
    name = "initial-value"

    def wants(self, text: str, profile: Profile | None = None) -> bool:
        # an uninitialised allocation of a table the profile names for an index field (its padding
        # rows index that table's row at the neutral value)
        if profile is None or "empty" not in text:
            return False
        # or a local allocated uninitialised and written through a prefix view (`x[:n]`)
        return any(f".{f.table}" in text for f in profile.fields if f.table) or "[:" in text

    def check(self, facts: Facts) -> list[Finding]:
        return sorted(init_findings(facts.interp, facts.profile, facts.texts) + table_findings(facts)
                      + local_findings(facts), key=Finding.sort_key)
