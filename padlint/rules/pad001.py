"""PAD001 stale-padding-reaches-sink: a query over the engine's sink hits.

The engine records every sink argument reached with padding rows that are not
reset on some path (:class:`padlint.analysis.interp.SinkHit`); this rule turns
each into a :class:`~padlint.model.Finding`: the message, the trace (each step
in its own file) and the reset to add.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from padlint.analysis.values import PADDED_AS_REAL, TAIL_WRITE, Taint, origin_key, real_in_scope
from padlint.model import Finding, Fix, TraceStep
from padlint.profile import Profile
from padlint.rules.base import Facts, Rule, shown_path

if TYPE_CHECKING:  # the engine (and libcst) load only when a rule runs: a cached run needs neither
    from padlint.analysis.interp import Interpreter, SinkHit

CODE = "PAD001"


def _short(buffer: str) -> str:
    """`self.input_batch.x_cpu_tensor[:n]` -> `x_cpu_tensor[:n]`; keeps `q.gpu[:n]` views."""
    i = buffer.find("[")
    base, rest = (buffer[:i], buffer[i:]) if i > 0 else (buffer, "")
    if "(" in base:
        return buffer
    parts = base.split(".")
    keep = 2 if len(parts) >= 2 and parts[-1] in ("gpu", "cpu", "np") else 1
    return ".".join(parts[-keep:]) + rest


def _neutral(profile: Profile, field: str, source: str) -> str:
    text = profile.neutral_for(field, "0")
    if text != "flat" and not re.fullmatch(r"[-\w.]+", text):
        return text
    if re.fullmatch(r"[A-Za-z_]\w*", text) and text not in ("True", "False", "None"):
        # a named constant: use the name only where the module can see it
        if not re.search(rf"\b{re.escape(text)}\b", source):
            value = profile.constant(text)
            if value is not None:
                return repr(value)
    return text


def _flat_source(real: str, off: int) -> str:
    """The last real entry: index R for cumulative offsets (R + 1 entries), R - 1 otherwise."""
    return real if off else f"{real} - 1"


def _fix_text(hit: SinkHit, taint: Taint, real: str | None, neutral: str) -> str | None:
    """The reset statement, in the names in scope at the sink."""
    if real is None:
        return None
    off = taint.offset
    lo = f"{real} + {off}" if off else real
    if len({t.dim for t in hit.taints} | set(hit.dims)) > 1:
        return None  # alternatives disagree on the padded dimension: no single reset fits all
    lead = ":, " * taint.dim
    if hit.arg_name is not None and not taint.beyond:
        target = hit.arg_name
        if neutral == "flat":
            text = f"{target}[{lead}{lo}:] = {target}[{lead}{_flat_source(real, off)}]"
        else:
            text = f"{target}[{lead}{lo}:] = {neutral}"
        if hit.maybe_none:
            text = f"if {target} is not None: {text}"
        return text
    if any(t.derived_from for t in hit.taints):
        # derived inline in the argument (`is_prefilling=buf[:P] < 1`): the derived tensor exists
        # only inside the sink call, and a reset of its inputs does not make it neutral
        # (rows of False give `False < 1` = True): no statement before the sink fixes it
        return None
    # the sink argument is the padded slice itself: reset the buffer's padding rows
    text = taint.buffer if taint.reason == "stale" else hit.arg_text
    i = text.rfind("[")
    if i <= 0 or not text.endswith("]"):
        return None
    base = text[:i]
    inner = text[i + 1:-1]
    dims = inner.split(",")
    if len(dims) != taint.dim + 1 or not dims[-1].startswith(":"):
        return None
    upper = dims[-1][1:]
    if neutral == "flat":
        text = f"{base}[{lead}{lo}:{upper}] = {base}[{lead}{_flat_source(real, off)}]"
    else:
        text = f"{base}[{lead}{lo}:{upper}] = {neutral}"
    line = taint.steps[0][0] if taint.steps else 0  # the slice, in the sink's file (checked by the caller)
    if base.isidentifier() and 0 < line <= len(hit.lines) and \
            re.search(rf"\bfor\s+{re.escape(base)}\s+in\b", hit.lines[line - 1]):
        # `x` is bound by a `for` on the slice's line (`[x[:P] for x in self.tables]`): not at the
        # sink, or not to one element only
        return _reset_every_element(hit, taint, base, text) if taint.element_of else None
    return text


def _reset_every_element(hit: SinkHit, taint: Taint, base: str, text: str) -> str | None:
    """The reset of a slice ``x[:P]`` of each element of a persistent container, ``x`` a local of
    a comprehension or loop (``[x[:P] for x in self.tables]``): a loop over the container with a
    name the file does not use (``x`` may be bound at the sink to something else, or not at
    all).  Only where the slice's own line iterates over the container as the code names it
    (``for x in self.tables``) in the sink's function (same file, no ``def`` between the two
    lines): elsewhere the container's name (``self...``) is in another function's terms."""
    line = taint.steps[0][0]
    lines = hit.lines
    if not 0 < line <= hit.stmt_line <= len(lines):
        return None
    if not re.search(rf"\bfor\s+{re.escape(base)}\s+in\s+{re.escape(taint.element_of)}\b(?!\.)",
                     lines[line - 1]):
        return None
    if any(re.match(r"\s*(async\s+)?def\s", ln) for ln in lines[line:hit.stmt_line - 1]):
        return None
    words = set(re.findall(r"\w+", "\n".join(lines)))
    fresh = next(n for n in ("buf", "padded_buf", *(f"buf{i}" for i in range(2, 1000))) if n not in words)
    return f"for {fresh} in {taint.element_of}: " + re.sub(rf"\b{re.escape(base)}\b", fresh, text)


def _path_text(hit, shown: int = 5) -> str:
    """The functions of the finding's shown path, entry first: ``a -> b -> c``.  A path of more
    than ``shown`` functions keeps its first two and last two (``a -> b -> ... -> y -> z``): the
    finding's trace lists every step with its file and line."""
    names = [n.split("`")[1] for _, n, _p in hit.chain if "`" in n]
    if len(names) > shown:
        names = [*names[:2], "...", *names[-2:]]
    return " -> ".join(names)


def _from_entries(hit, shown: int = 3) -> str:
    """`` from `a` and `b` ``: the entry points of the paths on which the value is stale, so that
    two reports tell which steps reach the sink (a fix that removes the real step's path and
    leaves a dummy run's changes this part of the message)."""
    # one name per entry point (its file and line): a path through a same-named callee names the
    # entry with its class (`Worker.execute_model`), another path from it may not
    by_entry: dict[tuple[str, int], str] = {}
    for c in hit.stale_chains:
        if c and c[0][1].startswith("entry point `"):
            name = c[0][1].split("`")[1]
            where = (c[0][2], c[0][0])
            if len(name) > len(by_entry.get(where, "")):
                by_entry[where] = name
    names = sorted(set(by_entry.values()))
    if not names:
        return ""
    if len(names) == 1:
        return f" from `{names[0]}`"
    if len(names) > shown:
        more = len(names) - shown
        return " from " + ", ".join(f"`{n}`" for n in names[:shown]) + \
            f" and {more} more entry point{'s' if more > 1 else ''}"
    return " from " + ", ".join(f"`{n}`" for n in names[:-1]) + f" and `{names[-1]}`"


def _through_dummy(hit) -> str:
    """Whether the stale paths are dummy runs' (a call on each passes a padded count as the
    callee's real count: the rows that path did not write hold an earlier step's values).  The
    engine reports the paths of dummy runs and those of real steps to one sink argument apart."""
    if not hit.dummy:
        return ""
    if len(hit.stale_chains) == 1:
        return ", a dummy run (a call on it passes a padded count as the callee's real count)"
    return ", all dummy runs (a call on each passes a padded count as the callee's real count)"


def _dummy_call(hit) -> str:
    """Where the most direct dummy-run path passes its padded count as the real count
    (``line 5690``, ``other.py:12``), as a message names it."""
    for line, note, p in hit.chain:
        if PADDED_AS_REAL in note:
            name = note.split("`")[1] if "`" in note else "the callee"
            where = f"line {line}" if p in ("", hit.path) else f"{_shown(p)}:{line}"
            return f"the call of `{name}` at {where}"
    return "the dummy run's call"


def _shared_owner(hit: SinkHit, taint: Taint, profile: Profile) -> tuple[str, str] | None:
    """(buffer, owner) when the reset writes into a persistent buffer of another object than
    ``self`` (``self.input_batch.x_cpu_tensor``, ``forward_batch.seq_lens``), else None."""
    if taint.reason != "stale" or taint.derived_from:
        return None  # the fix resets a tensor of the function's own (derived, allocated)
    base = taint.buffer.split("[", 1)[0].strip()
    if not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+", base):
        return None  # a local alias (`x[:n]`) or a getter call: its owner is not written here
    parts = base.split(".")
    views = {"gpu", "cpu", "np", *profile.shared_views, profile.device_view}
    while len(parts) > 2 and parts[-1] in views:
        parts.pop()
    owner = ".".join(parts[:-1])
    if owner == "self":
        return None
    return base, owner


_shown = shown_path


def sink_trace(hit: SinkHit, taints, path: str) -> tuple[TraceStep, ...]:
    """A finding's trace: the call path from the entry point, each taint's derivation steps
    (shared ones once, the first three taints), and the sink; each step in its own file
    (``path`` where a step names none)."""
    trace = [TraceStep(_shown(p) or path, line, note) for line, note, p in hit.chain]
    steps: list[tuple[int, str, str]] = []
    for t in tuple(taints)[:3]:
        for i, st in enumerate(t.steps):
            if st in steps:
                continue
            # before the first later step of its own taint already listed (a second source goes
            # before the derivation both sources share): each taint's steps stay in their order
            later = next((steps.index(x) for x in t.steps[i + 1:] if x in steps), len(steps))
            steps.insert(later, st)
    trace.extend(TraceStep(_shown(p) or path, line, note) for line, note, p in steps)
    trace.append(TraceStep(_shown(hit.path) or path, hit.span[0], f"reaches sink {hit.sink} as `{hit.field}`"))
    return tuple(trace)


def hits_to_findings(interp: Interpreter, profile: Profile, texts: dict[str, str]) -> list[Finding]:
    """One :class:`Finding` per sink argument reached stale on some path, sorted by position.

    ``texts``: the checked files (path -> text); sinks elsewhere are not reported.
    """
    out: list[Finding] = []
    outside: dict[tuple, Finding] = {}
    for key, hit in interp.hits.items():
        path = hit.path
        source = texts.get(path)
        if source is None:
            # the sink is in a module read but not checked (pre-commit passes the file that
            # changed): report where a checked file makes the padded slice that flows there
            for h in (hit, *hit.others.values()):
                for f in _outside_findings(h, texts) or _writer_findings(interp, profile, h, texts):
                    # (a dummy run's paths and a real step's are two findings, as at a checked sink)
                    outside.setdefault((f.path, f.line, f.sink, f.field, f.buffer, h.dummy), f)
            continue
        # one finding per sink argument and buffer the stale rows come from: a second buffer
        # reaching the same argument is a second bug, with its own reset (and baseline entry),
        # reported with the most direct path that brings it
        seen: set[int] = set()
        for h in (hit, *hit.others.values()):
            if id(h) in seen:
                continue
            seen.add(id(h))
            stale = tuple(t for t in h.taints if t.reason != "init")
            # (only never-written buffers' allocation values reach it: PAD005's)
            for group in _origins(stale):
                out.append(_finding(interp, key, replace(h, taints=group) if group != h.taints else h,
                                    profile, source, path))
    out.extend(outside.values())
    out.sort(key=Finding.sort_key)
    return out


def _origins(taints: tuple[Taint, ...]) -> list[tuple[Taint, ...]]:
    """``taints`` grouped by origin, in order of first appearance: a padded slice handed to the
    sink as it is, by the buffer it was taken from (``self.seq_lens`` of
    ``self.seq_lens[:num_reqs_padded]``: each needs its own reset); a tensor derived from stale
    inputs (``torch.where(live, self.seq_lens[:P], 0)``) is one origin, however many inputs
    it has (one reset of the derived value fixes it)."""
    groups: dict[str, list[Taint]] = {}
    for t in taints:
        groups.setdefault(origin_key(t), []).append(t)
    return [tuple(g) for g in groups.values()]


def sink_phrase(hit: SinkHit) -> str:
    """How the padding rows reach the sink, as a message says it
    (``when passed as `seq_lens=` to CommonAttentionMetadata``)."""
    if hit.kind == "attribute":
        return f"when stored as `.{hit.field}` on a {hit.sink}"
    if hit.kind == "replay":
        return f"when the CUDA graph replayed here reads them (bound at capture as `{hit.field}`)"
    if hit.kind == "capture":
        return f"when the graphs captured here read them as `{hit.field}` at capture"
    if hit.kind == "keyword":
        return f"when passed as `{hit.field}=` to {hit.sink}"
    return f"when passed as argument {hit.field} to {hit.sink}"


def _graph_input_finding(hit: SinkHit, taint: Taint, path: str) -> Finding:
    """A buffer the captured graph reads whole, written by the capture from the captured size and
    by no path to this replay (:meth:`padlint.analysis.callgraph.CallGraph.graph_inputs`)."""
    cap_line, _note, cap_path = taint.steps[0]
    where = f"line {cap_line}" if cap_path in ("", path, hit.path) else f"{_shown(cap_path)}:{cap_line}"
    write = " ".join(taint.graph_input.split())
    via = ""
    if len(hit.stale_chains) > 1:
        via = f" on {len(hit.stale_chains)} paths{_from_entries(hit)}, e.g. " + _path_text(hit)
    message = (f"`{_short(taint.buffer)}` is read whole by the CUDA graph replayed here (bound at capture as "
               f"`{hit.field}`), and the capture writes it with a value computed from the size it captures "
               f"(`{write}`, {where}); no path to this replay writes it{via}, so the graph reads what the last "
               f"capture or an earlier replay wrote, for another size; write it for this replay's size "
               f"before line {hit.stmt_line}, as the capture does")
    return Finding(
        code=CODE, path=path, line=hit.span[0], column=hit.span[1], end_line=hit.span[2],
        end_column=hit.span[3], message=message, severity=hit.severity, sink=hit.sink,
        field=hit.field, buffer=taint.buffer, padded="", real="",
        trace=sink_trace(hit, (taint,), path), fix=None, statement=hit.stmt_text, function=hit.function)


def _finding(interp: Interpreter, key, hit: SinkHit, profile: Profile, source: str, path: str) -> Finding:
    """The finding of one sink argument for the stale taints of one origin (``hit.taints``)."""
    taint = hit.taints[0]
    if taint.graph_input:
        return _graph_input_finding(hit, taint, path)
    # inferred from the step's writes, or the profile's pair
    real_canon, shown, holds = real_in_scope(taint, profile.pair_for_padded(taint.padded), hit.real_names,
                                             hit.count_locals)
    real_name = shown if holds else None  # a reset from it covers the stale rows
    # counts as the sink's code names them; entry-point names only where none is in scope
    real_shown = shown or real_canon or "?"
    padded_shown = hit.padded_names.get(taint.padded) or taint.padded
    # a number `self` keeps that only the code's own resets make the padded count (`s[...][bs:r]
    # .zero_()` with `r = self._capture_req_slots`): no count name of the profile, no step computes it
    learned = re.fullmatch(r"self\.\w+", taint.padded_written or "") is not None \
        and profile.is_padded_count(taint.padded_written[5:]) is None
    if taint.padded not in hit.padded_names and re.fullmatch(r"[A-Za-z_]\w*(\.\w+)+", taint.padded_written) \
            and not taint.padded_written.startswith("self."):
        # no name for the padded count in scope, but the code at the source wrote it as a field
        # of a local (`desc.num_reqs`, the descriptor of a replayed graph): shown as written
        padded_shown = taint.padded_written
    elif taint.padded not in hit.padded_names and learned:
        padded_shown = taint.padded_written  # shown as the code names it
    if not re.fullmatch(r"[A-Za-z_][\w.]*", padded_shown) and taint.padded_written:
        # a padded count the engine named after an expression (`raw_bs*w_padded` for the capture
        # width `bs * w` read in a replay): shown as the code writes it
        padded_shown = taint.padded_written
    if real_shown == padded_shown:
        # the sink's code names the padded count like the real one (a callee's `num_reqs`
        # bound to the caller's padded count): show the counts in the entry point's terms
        real_shown = real_canon or "?"
        padded_shown = taint.padded if taint.padded_written in ("", real_shown) else taint.padded_written
    neutral = _neutral(profile, hit.field, source)
    # a reset statement names the buffer as written where it was sliced: only valid at the
    # sink when that is the same file (a `self.x` of another class's method is not this `self.x`)
    local = all(not t.steps or t.steps[0][2] in ("", path) for t in hit.taints)
    # rows a dummy run did not write are reset in the dummy run: the sink is shared with real steps
    fix_text = _fix_text(hit, taint, real_name, neutral) \
        if hit.fixable and local and not taint.dummy and not hit.dummy and not taint.partial else None
    lead = ":, " * taint.dim
    noun = "rows" if taint.dim == 0 else "entries"
    rows = (f"[{lead}{real_shown} + {taint.offset}:{padded_shown} + {taint.offset}]" if taint.offset
            else f"[{lead}{real_shown}:{padded_shown}]")
    if taint.beyond:  # to the end of the buffer
        rows = f"[{real_shown} + {taint.offset}:]" if taint.offset else f"[{real_shown}:]"
    short = _short(taint.buffer)
    # a slice of a list's element named by a local (`x[:n] for x in self.tables`): the list too
    of = f" of an element of `{taint.element_of}`" if taint.element_of else ""
    if hit.container:
        what = f"`{hit.arg_name or hit.arg_text}` holds the padded slice `{short}`{of}"
    elif taint.beyond:
        whole = taint.buffer[:taint.buffer.rfind("[")]
        what = (f"`{hit.arg_name or hit.arg_text}` is a slice of the persistent buffer `{_short(whole)}`, "
                f"whose consumer reads the whole buffer, not the slice")
    elif hit.arg_name and taint.derived_from:
        what = f"`{hit.arg_name}` is derived from `{_short(taint.derived_from)}`"
    elif hit.arg_name and taint.reason == "uninit":
        what = f"`{hit.arg_name}` is allocated with `{taint.buffer}`"
    elif hit.arg_name:
        what = f"`{hit.arg_name}` is the padded slice `{short}`{of}"
    elif taint.reason == "uninit":
        what = f"`{hit.arg_text}` is allocated with `{taint.buffer}`"
    elif taint.derived_from:
        what = f"`{hit.arg_text}` is derived from `{_short(taint.derived_from)}`"
    elif taint.width:
        whole = taint.buffer[:taint.buffer.rfind("[")] if taint.buffer.endswith("]") else taint.buffer
        what = (f"`{_short(whole)}` is a persistent buffer handed whole to a sink whose "
                f"`{taint.width}` makes its consumer read rows up to {padded_shown}")
    elif of:
        what = f"`{short}` is a padded slice{of}, a persistent buffer"
    else:
        what = f"`{short}` is a padded slice of a persistent buffer"
    state = "are uninitialised" if taint.reason == "uninit" else "may be stale"
    if taint.dummy:
        # every row of the slice, counted as the slice was written (it need not be padded)
        rows = f"[0:{taint.padded_written or padded_shown}]"
        what = what.replace("padded slice", "slice")
        state = (f"were written by no step of the dummy run `{taint.dummy}` and may hold a live "
                 f"request's indices")
        if hit.kind == "capture":  # every row of a captured size is a padding row at capture
            state = ("hold no request at capture (every row is a padding row) and nothing before the "
                     "capture writes them: they may hold a live request's indices from an earlier run")
    shown_k = ""
    if taint.partial:
        # rows from 0 that this step writes on one branch of a test only: real rows too
        # the count as the sink's code names it, else as the write names it (a callee's own name)
        shown_k = hit.real_names.get(taint.padded) or hit.padded_names.get(taint.padded) \
            or taint.padded_written or taint.padded
        rows = f"[0:{shown_k}]"
        tline, _note, tpath = taint.steps[0]
        at = f"line {tline}" if tpath in ("", path) else f"{_shown(tpath)}:{tline}"
        base = taint.buffer[:taint.buffer.rfind("[:")] if taint.buffer.endswith("]") else taint.buffer
        reads = (f"is derived from `{_short(taint.derived_from)}`, which reads" if taint.derived_from
                 else "reads")
        what = (f"`{hit.arg_name or hit.arg_text}` {reads} rows {rows} of the persistent buffer `{_short(base)}`, "
                f"which this step writes on some paths only")
        state = f"are not written where {taint.partial} ({at}) and hold an earlier step's values there"
    where = sink_phrase(hit)
    more = f" (and {len(hit.taints) - 1} more source{'s' if len(hit.taints) > 2 else ''})" \
        if len(hit.taints) > 1 else ""
    via = ""
    if len(hit.stale_chains) > 1:
        via = f" on {len(hit.stale_chains)} paths{_from_entries(hit)}{_through_dummy(hit)}, e.g. " + _path_text(hit)
    elif key[:2] in interp.clean_hits and (*key[:2], not key[2]) not in interp.hits:
        # (other paths reach it clean; not when the other kind of path, a dummy run's or a real
        # step's, is stale: that is the other finding)
        dummy = _through_dummy(hit)
        via = " on the path " + _path_text(hit) + dummy + \
            ("; other paths to this sink reset these rows or have none" if dummy else
             " (other paths to this sink reset these rows or have none)")
    elif hit.dummy:  # the one stale path is a dummy run's: say so (a real step's path is another finding)
        via = " on the path " + _path_text(hit) + _through_dummy(hit)
    shown = "the last real value" if neutral == "flat" else neutral
    shared = _shared_owner(hit, taint, profile) if fix_text else None
    shared_note = (f" (it writes into `{shared[0]}`, a buffer of `{shared[1]}` that other code reads too)"
                   if shared else "")
    if taint.partial:
        fix_hint = (f"; write them on that path too (or do not read them there) before line "
                    f"{hit.stmt_line}")
    elif taint.dummy and hit.kind == "capture":
        fix_hint = f"; reset the buffer to {shown} before line {hit.stmt_line}"
    elif taint.dummy:
        fix_hint = (f"; reset them to {shown} in the dummy run `{taint.dummy}` (or its callees) before "
                    f"they reach the sink, which real steps reach too")
    elif hit.dummy:
        # the dummy run binds the real count to its padded one: a reset here from it writes nothing
        fix_hint = (f"; a reset here from `{real_shown}` writes no row on {'these paths' if len(hit.stale_chains) > 1 else 'this path'} "
                    f"({_dummy_call(hit)} passes the padded count as `{real_shown}`): write or reset rows "
                    f"{rows} to {shown} in the dummy run before that call")
    elif fix_text:
        fix_hint = f"; add `{fix_text}` before line {hit.stmt_line}{shared_note}"
    elif hit.fixable and hit.arg_name is None and any(t.derived_from for t in hit.taints):
        fix_hint = (f"; assign it to a variable before line {hit.stmt_line}, reset that variable's {noun} "
                    f"{rows} to {shown} and pass the variable (resetting the inputs does not reset "
                    f"the derived value)")
    elif hit.container:
        fix_hint = (f"; reset {noun} {rows} of `{short}` to {shown} on every path before line "
                    f"{hit.stmt_line}")
    elif hit.fixable:
        fix_hint = f"; reset {noun} {rows} to {shown} before line {hit.stmt_line}"
    elif len(hit.stale_chains) > 1:  # no single statement at the sink covers every path
        fix_hint = (f"; reset {noun} {rows} to {shown} on each of these paths before the sink "
                    f"(one reset before line {hit.stmt_line} does not cover them all)")
    elif hit.in_lambda:  # the lambda's body runs where it is called, not at its line
        fix_hint = f"; reset {noun} {rows} to {shown} on every path before the lambda of line {hit.stmt_line} is called"
    elif hit.at_test:  # an `elif`/`while` test: no single statement to insert before
        fix_hint = f"; reset {noun} {rows} to {shown} on every path before this test"
    elif learned:
        fix_hint = (f"; reset {noun} {rows} to {shown} where the code resets the other padding rows up "
                    f"to `{taint.padded_written}`, on every path to line {hit.stmt_line}")
    elif (taint.padded_written or "").startswith("self."):
        # the replay's sizes are fields the path stored (`self.bs = bs` in a `load_batch`)
        fix_hint = (f"; reset {noun} {rows} to {shown} where `{taint.padded_written}` is computed and "
                    f"stored, on every path to line {hit.stmt_line}")
    else:  # the counts are not named at the sink (the slice was made in a caller or another class)
        fix_hint = (f"; reset {noun} {rows} to {shown} on every path to line {hit.stmt_line} (the counts "
                    f"are not in scope here: reset where the padded slice is made)")
    message = f"{what}{more}; {noun} {rows} {state} {where}{via}{fix_hint}"

    trace = sink_trace(hit, hit.taints, path)
    indent = re.match(r"[ \t]*", hit.lines[hit.stmt_line - 1]).group(0) \
        if 0 < hit.stmt_line <= len(hit.lines) else ""
    fix = Fix(path=path, line=hit.stmt_line, indent=indent, text=fix_text,
              description=f"reset the padding {noun} {rows} of `{hit.arg_name or short}` to {shown}"
                          + (f", writing into `{shared[0]}`, a buffer of `{shared[1]}`" if shared else ""),
              safe=False) if fix_text else None
    return Finding(
        code=CODE, path=path, line=hit.span[0], column=hit.span[1], end_line=hit.span[2],
        end_column=hit.span[3], message=message, severity=hit.severity, sink=hit.sink,
        field=hit.field, buffer=taint.buffer, padded=shown_k if taint.partial else padded_shown,
        real="0" if taint.partial else real_shown,
        trace=trace, fix=fix, statement=hit.stmt_text, function=hit.function, dummy_run=hit.dummy)


def origin_place(texts: dict[str, str], path: str, line: int, hit: SinkHit):
    """Where a finding about a sink outside the checked files is reported instead: the line of
    the padded slice in checked file ``path`` (its span, from the first non-blank column) and
    the statement as the finding names it (``code -> Sink.field``); None when ``path`` is not
    checked or has no such line."""
    text = texts.get(path)
    lines = text.splitlines() if text is not None else []
    if not 0 < line <= len(lines):
        return None
    code = lines[line - 1]
    span = (line, len(code) - len(code.lstrip()) + 1, line, len(code.rstrip()) + 1)
    return span, f"{' '.join(code.split())} -> {hit.sink}.{hit.field}"


def _elsewhere(hit: SinkHit, t: Taint, path: str, placed, what: str, rows: str, advice: str,
               trace: tuple[TraceStep, ...], proposed: bool = True) -> Finding:
    """A finding about a sink outside the checked files, reported at ``placed`` (the span and
    statement :func:`origin_place` gives) in checked file ``path``: ``what`` reaches the sink with
    ``rows`` stale on the hit's paths; ``advice`` says what to do here."""
    (line, col, _e, end_col), statement = placed
    n = len(hit.stale_chains)
    message = (f"{what} reaches {hit.sink} as `{hit.field}` in {_shown(hit.path)}:{hit.span[0]} (a module not "
               f"checked here) with {rows} on {n} path{'s' if n != 1 else ''}{_from_entries(hit)}"
               f"{'' if t.dummy else _through_dummy(hit)}, e.g. " + _path_text(hit)
               + f"; {advice} (check {_shown(hit.path)} too for the full report"
               + (" and a proposed reset" if proposed else "") + ")")
    return Finding(
        code=CODE, path=path, line=line, column=col, end_line=line, end_column=end_col,
        message=message, severity=hit.severity, sink=hit.sink, field=hit.field, buffer=t.buffer,
        padded=t.padded_written or t.padded, real="", trace=trace, fix=None,
        statement=statement, function=hit.function, dummy_run=hit.dummy)


def _stale_rows(t: Taint) -> str:
    """The rows of ``t`` that reach a sink outside the checked files, as its message says it."""
    padded = t.padded_written or t.padded
    if t.graph_input:
        return "the rows the CUDA graph replayed there reads and no path to that replay writes"
    if t.dummy:
        return f"rows [0:{padded}] written by no step of the dummy run `{t.dummy}`"
    if t.partial:
        return f"rows [0:{padded}] not written where {t.partial}"
    return f"its padding rows (up to {padded}) not reset"


def _outside_findings(hit: SinkHit, texts: dict[str, str]) -> list[Finding]:
    """Findings for a sink outside the checked files: one at each padded slice (the first step
    of a stale source) that a checked file makes, naming the sink it reaches."""
    out = []
    for t in hit.taints:
        if t.reason == "init" or not t.steps or t.graph_input:
            continue  # (a graph input's first step is the capture's write, not a padded slice)
        line, _note, spath = t.steps[0]
        placed = origin_place(texts, spath, line, hit)
        if placed is None:
            continue
        what = (f"`{_short(t.derived_from)}`, from which `{hit.arg_text}` is derived," if t.derived_from
                else f"`{_short(t.buffer)}`")
        rows = _stale_rows(t)
        advice = "reset those rows in the dummy run" if t.dummy else \
            "write those rows on every path before it reaches the sink" if t.partial else \
            "reset its padding rows before it reaches the sink"
        out.append(_elsewhere(hit, t, spath, placed, what, rows, advice, sink_trace(hit, (t,), spath),
                              proposed=not (t.dummy or t.partial)))
    return out


def _on_the_way(write: tuple, stale: tuple) -> bool:
    """Whether a write made in a function reached by call path ``write`` runs on the way along
    the stale call path ``stale`` (both from the same entry point, steps ``(line, file, function
    key)``: :meth:`padlint.analysis.interp.Interpreter._qpath`):
    where the two paths part, they part at different call sites (one call made before or after
    the other), or the write is in a function on the stale path itself.  Two callees of one call
    site are dispatch alternatives (`self.speculator.capture()` resolved to two classes): only
    one of them runs, so the other's write is not on the way."""
    k = 0
    while k < len(write) and k < len(stale) and write[k] == stale[k]:
        k += 1
    if k == 0:
        return False  # another entry point
    if k == len(write) or k == len(stale):
        return True
    return write[k][:2] != stale[k][:2]


def _writer_findings(interp: Interpreter, profile: Profile, hit: SinkHit, texts: dict[str, str]) -> list[Finding]:
    """Findings for a sink outside the checked files whose padded slice no checked file makes,
    but whose buffer a checked file writes on the way (a function that writes a buffer's real
    rows and whose padding reset was deleted, checked alone by pre-commit): one at the first
    statement of each checked file that writes rows of that buffer, for the same entry point,
    naming the sink the stale rows reach."""
    stale = [t for t in hit.taints if t.reason != "init"]
    if not stale:
        return []
    t = stale[0]
    out = []
    pair = profile.pair_for_padded(t.padded)
    reals = set(t.real) | set(pair.real if pair is not None else ())
    done: set[tuple[str, int]] = set()
    for key in sorted(hit.locs):
        for path, writes in sorted(interp.writers.get(key, {}).items(), key=lambda kv: kv[0]):
            if path not in texts or not writes:
                continue
            # a function that also resets a tail of the buffer is not where its stale rows come
            # from (another dispatch alternative's path joined in: `self.drafter.prepare()` with
            # one class resetting and one not); the others' writes on the way are
            resetting = {w[2] for w in writes if w[3] == TAIL_WRITE}
            writes = [w for w in writes if w[2] not in resetting and any(_on_the_way(w[4], q) for q in hit.qpaths)]
            if not writes:
                continue
            # the write that stops at the real count (`buf[:num_reqs].copy_(x)`): the padding rows
            # past it are what it leaves stale; else the first write of the file seen
            seg, stmt, qual, count, _chain = next((w for w in writes if w[3] and w[3] in reals), writes[0])
            line = seg.line(stmt, stmt)
            placed = origin_place(texts, path, line, hit)
            if placed is None or (path, line) in done:
                continue
            done.add((path, line))
            writer = qual.rpartition(":")[2]
            base = _short(re.sub(r"\[[^\[\]]*\]$", "", t.buffer))
            padded = t.padded_written or t.padded
            if t.dummy:
                did = (f"`{writer}` writes rows of `{base}` here, and no write of the dummy run reaches those "
                       f"rows: write them in the dummy run")
            elif count and count in reals:
                did = (f"`{writer}` writes rows [:{count}] of `{base}` here and no write on those paths "
                       f"resets rows [{count}:{padded}]: reset them after this write")
            else:
                did = f"`{writer}` writes rows of `{base}` here, on the way: write its padding rows too"
            trace = (TraceStep(path, line, f"`{writer}` writes rows of `{base}` (this checked file)"),
                     *sink_trace(hit, (t,), path))
            out.append(_elsewhere(hit, t, path, placed, f"`{_short(t.derived_from or t.buffer)}`", _stale_rows(t),
                                  did, trace))
    return out


class StalePaddingReachesSink(Rule):
    code = CODE
    name = "stale-padding-reaches-sink"

    def check(self, facts: Facts) -> list[Finding]:
        return hits_to_findings(facts.interp, facts.profile, facts.texts)
