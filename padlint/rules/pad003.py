"""PAD003 vacated-row-keeps-data: a query over the engine's row lifecycle facts.

The engine (:mod:`padlint.analysis.lifecycle`) finds, per class, the persistent buffers, the
statements that copy one row into another (the source row is vacated), the tuple swaps of two
row views, and whether the method that admits a new request writes each buffer's row on every
admission.  This rule reports a vacated row that nothing resets or provably overwrites before
it is read as a live row, and every view swap.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from padlint.analysis.lifecycle import (
    AdmissionGap,
    ClassLifecycle,
    RowMove,
    RowRelease,
    ViewSwap,
    module_lifecycles,
)
from padlint.model import Finding, Fix, TraceStep, split_lines
from padlint.profile import Profile
from padlint.rules.base import Facts, Rule, shown_path

if TYPE_CHECKING:
    from padlint.analysis.interp import DummyRead

CODE = "PAD003"
#: Text a file must hold for this rule to find anything in it: a row copied, swapped, removed or
#: admitted.
_NEEDLE = re.compile(r"\]\s*=\s*\(?\s*self\.|\]\s*\.copy_\(\s*self\.|\]\s*,\s*self\."
                     r"|\b(\w+)\[[^\]\n]*\]\s*=\s*\(?\s*\1\["  # also through a local (`bt[t] = bt[s]`)
                     r"|self\.\w+\[\w+\]\s*=\s*None\b|\bdel\s+self\.\w+\["  # a row's request removed
                     r"|\bdef\s+_*(?:add|\w*add_req|\w*admit)")  # a row admitted
_SUFFIXES = ("_cpu_tensor", "_gpu_tensor", "_tensor", "_cpu", "_gpu", "_np")


def lifecycles(facts: Facts) -> dict[str, list[ClassLifecycle]]:
    """Checked path -> row lifecycle facts of its classes (a fact family)."""
    out: dict[str, list[ClassLifecycle]] = {}
    for path, key in facts.keys.items():
        try:
            out[path] = module_lifecycles(facts.project, key, facts.texts.get(path))
        except RecursionError:  # pathologically deep nesting: nothing to say about this file
            out[path] = []
    return out


def _neutral(profile: Profile, attr: str, fill: str | None) -> tuple[str | None, str]:
    """The value a vacated row is reset to, and where it comes from."""
    names = [attr] + [attr[: -len(s)] for s in _SUFFIXES if attr.endswith(s)]
    for name in names:
        spec = profile.field_spec(name)
        if spec is not None and spec.neutral != "flat":
            return spec.neutral, f"the neutral value of `{name}` in the profile"
    if fill is not None:
        return fill, "the value the buffer is allocated with"
    return None, ""


def _condition_words(conditions: tuple[str, ...]) -> str:
    return " and ".join(f"`{c}`" for c in conditions) if conditions else "on some paths"


def _dummy_reads(facts: Facts) -> dict:
    """Every buffer a dummy run of the project reads unwritten into an index field (an engine
    fact: :func:`padlint.analysis.engine.dummy_reads`)."""
    from padlint.analysis.engine import dummy_reads

    return dummy_reads(facts.project, facts.graph, facts.interp, facts.profile)


def _dummy_read(facts: Facts, life: ClassLifecycle, attr: str) -> DummyRead | None:
    """The engine's first dummy-run read of ``attr`` of an object of ``life``'s class (or of a
    subclass, whose rows are the same buffer) into an index field with no write of the run
    reaching its rows (:func:`_dummy_reads`), or None."""
    for (holder, a), reads in sorted(facts.family("dummy_reads", _dummy_reads).items(), key=lambda kv: kv[0]):
        if a == attr and _is_a(facts, holder, life.key):
            return reads[0]
    return None


def _is_a(facts: Facts, cls_key: str, base: str) -> bool:
    """``cls_key`` is ``base`` or a project subclass of it."""
    if cls_key == base:
        return True
    ci = facts.project.class_info(cls_key)
    return ci is not None and any(c.key == base for c in facts.project.mro(ci))


def _holder_dummy_read(facts: Facts, buffers: tuple[tuple[str, str], ...], owner: str) -> tuple[str, DummyRead] | None:
    """The first dummy-run read (:func:`_dummy_read`) of one of ``buffers`` ((class key,
    attribute); an object of a subclass holds the same buffer) through an object of class
    ``owner`` (the class that removes the request: the read is of its holder, not of another
    object of the holder's class), with its attribute; None."""
    for (holder, attr), reads in sorted(facts.family("dummy_reads", _dummy_reads).items(), key=lambda kv: kv[0]):
        if not any(_is_a(facts, holder, k) and attr == a for k, a in buffers):
            continue
        for read in reads:
            if any(_is_a(facts, v, owner) for v in read.via):
                return attr, read
    return None


def _dummy_hands(dummy: DummyRead, what: str) -> str:
    """The dummy run's read in a message: "`_dummy_run` hands rows [0:P] of <what> (`slice`,
    file:line) to the index field `f` with no write of the run reaching them"."""
    return (f"`{dummy.dummy}` hands rows [0:{dummy.padded}] of {what} (`{dummy.slice}`, "
            f"{shown_path(dummy.path)}:{dummy.line}) to the index field `{dummy.field}` with no write of "
            f"the run reaching them")


def _dummy_step(dummy: DummyRead, name: str) -> TraceStep:
    """The trace step at the dummy run's read of buffer ``name``."""
    return TraceStep(shown_path(dummy.path), dummy.line, f"the dummy run `{dummy.dummy}` reads rows "
                                                         f"[0:{dummy.padded}] of `{name}` (`{dummy.slice}`) "
                                                         f"into `{dummy.field}`")


def _own_lines(lines: list[str], line: int, col: int, end_line: int, end_col: int) -> bool:
    """Whether a statement has its lines to itself and a line follows it, so that a statement
    can be inserted after it (not `if c: a[d] = a[s]`, not `a[d] = a[s]; x = 1`, not the file's
    last line)."""
    if not (0 < line <= len(lines) and 0 < end_line < len(lines)):
        return False
    last = lines[end_line - 1]
    tail = last[end_col - 1:] if end_col - 1 <= len(last) else ""
    return not lines[line - 1][: col - 1].strip() and not tail.strip().startswith(";")


def _release_finding(life: ClassLifecycle, rel: RowRelease, facts: Facts,
                     lines: list[str]) -> Finding | None:
    """A request removed from row ``rel.row`` whose row of another object's buffers (a block
    table) is left as it was and read by a dummy run before any admission can write it."""
    if rel.handled:
        return None
    found = _holder_dummy_read(facts, rel.buffers, life.key)
    if found is None:
        return None
    attr, dummy = found
    holder = f"self.{rel.holder}"
    fix = None
    if rel.resetter and _own_lines(lines, rel.line, rel.col, rel.end_line, rel.end_col):
        text = f"{holder}.{rel.resetter}({rel.row})"
        fix = Fix(path=rel.path, line=rel.end_line + 1, indent=rel.indent, text=text, after=True, safe=False,
                  description=f"reset row `{rel.row}` of `{holder}` where `{rel.method}` removes its request")
        hint = f"; add `{text}` after line {rel.end_line}"
    else:
        hint = f"; reset row `{rel.row}` of `{holder}`'s buffers to their neutral value here"
    message = (f"`{rel.method}` removes the request of row `{rel.row}` (line {rel.line}) but leaves its values in "
               f"that row of `{holder}` (buffer `{attr}`): nothing in `{rel.method}` (or the methods it calls) "
               f"touches `{holder}`, and a dummy run reads the row before any admission can overwrite it: "
               f"{_dummy_hands(dummy, f'`{attr}`')} (the dummy forward writes KV or state through such "
               f"indices){hint}")
    trace = (TraceStep(rel.path, rel.line, f"row `{rel.row}` released by `{rel.method}`; `{holder}` keeps its "
                                           f"values there"),
             _dummy_step(dummy, attr))
    return Finding(code=CODE, path=rel.path, line=rel.line, column=rel.col, end_line=rel.end_line,
                   end_column=rel.end_col, message=message, severity="error", sink=f"{life.name}.{rel.method}",
                   field=attr, buffer=holder, padded="", real="", trace=trace, fix=fix,
                   statement=rel.stmt_text, function=f"{life.name}.{rel.method}")


def _move_finding(life: ClassLifecycle, mv: RowMove, profile: Profile, lines: list[str],
                  facts: Facts) -> Finding | None:
    """A vacated row nothing resets: overwritten only conditionally or never by admission, or
    overwritten but read first by a dummy run (:func:`_dummy_read`: it may interpret the
    project's dummy runs).  A dummy run's read is the reason given when there is one: it reads
    the row whatever the next admission writes."""
    if mv.released_at is not None:
        return None
    cov = life.coverage(mv.attr, mv.guards)
    dummy = _dummy_read(facts, life, mv.attr)
    if (cov.overwrites or cov.status == "no_admission") and dummy is None:
        return None
    short = mv.written.removeprefix("self.")
    if dummy is not None:
        why = (f"a dummy run reads the row before any admission can overwrite it: {_dummy_hands(dummy, 'this buffer')}, "
               f"and the rows a shrunken batch left are among them (the dummy forward writes KV or state "
               f"through such indices)")
        cov = replace(cov, line=0)
    elif cov.status == "conditional":
        why = (f"`{cov.method}` writes this buffer's row only when {_condition_words(cov.conditions)} "
               f"(line {cov.line}), so a request admitted into row `{mv.src}` without that inherits them")
    else:
        why = (f"`{cov.method}` never writes this buffer's rows, so the request admitted into row "
               f"`{mv.src}` inherits them")
    buf = life.buffers.get(mv.attr)
    neutral, origin = _neutral(profile, mv.attr, buf.fill if buf else None)
    fix = None
    fix_hint = f"; reset row `{mv.src}` to the field's neutral value right after line {mv.end_line}"
    next_line = mv.end_line + 1
    # the reset goes on its own line after the statement
    if neutral is not None and _own_lines(lines, mv.line, mv.col, mv.end_line, mv.end_col):
        raw = mv.written.rsplit(".", 1)[-1]
        if raw == "np":
            lib = "numpy"
        elif raw in ("cpu", "gpu"):
            lib = "torch"
        else:
            own = life.buffers.get(raw) or buf
            lib = own.lib if own else ""
        text = (f"{mv.written}[{mv.src}].fill_({neutral})" if lib == "torch"
                else f"{mv.written}[{mv.src}] = {neutral}")
        fix = Fix(path=mv.path, line=next_line, indent=mv.indent, text=text, after=True, safe=False,
                  description=f"reset the vacated row `{mv.src}` of `{short}` to {neutral} ({origin})")
        fix_hint = f"; add `{text}` after line {mv.end_line}"
    message = (f"`{mv.method}` copies row `{mv.src}` of `{short}` into row `{mv.dst}` and leaves the old "
               f"request's values in row `{mv.src}`: `{mv.method}` does not reset it, and {why}{fix_hint}")
    trace = (TraceStep(mv.path, mv.line, f"row `{mv.src}` of `{short}` vacated by `{mv.method}`"),)
    if dummy is not None:
        trace += (_dummy_step(dummy, short),)
    if cov.line:
        trace += (TraceStep(mv.path, cov.line, f"`{cov.method}` writes the row only when "
                                               f"{_condition_words(cov.conditions)}"),)
    return Finding(code=CODE, path=mv.path, line=mv.line, column=mv.col, end_line=mv.end_line,
                   end_column=mv.end_col, message=message, severity="error", sink=f"{life.name}.{mv.method}",
                   field=mv.attr, buffer=mv.written, padded="", real="", trace=trace, fix=fix,
                   statement=mv.stmt_text, function=f"{life.name}.{mv.method}")


def _gap_finding(life: ClassLifecycle, gap: AdmissionGap, profile: Profile) -> Finding | None:
    """A row that admission writes on some paths only, that nothing else writes: a request
    admitted on another path keeps the value the row's previous request left."""
    if profile.is_exempt(gap.attr):
        return None  # the profile names the consumer that ignores the row on those paths
    short = gap.written.removeprefix("self.")
    buf = life.buffers.get(gap.attr)
    neutral, origin = _neutral(profile, gap.attr, buf.fill if buf else None)
    fix = None
    if neutral is not None and gap.fix_line:
        text = f"{gap.written}[{gap.row}] = {neutral}"
        fix = Fix(path=gap.path, line=gap.fix_line, indent=gap.fix_indent, text=text, safe=False,
                  description=f"write row `{gap.row}` of `{short}` ({neutral}: {origin}) on every admission")
        hint = f"; add `{text}` before line {gap.fix_line}, or write the row on the other paths"
    else:
        hint = (f"; write row `{gap.row}` of `{short}` on every path of `{gap.method}` (with the value a "
                f"request without {_condition_words(gap.conditions)} must see)")
    message = (f"`{gap.method}` writes row `{gap.row}` of `{short}` only when {_condition_words(gap.conditions)}, "
               f"and no other method of `{life.name}` writes that row: a request admitted otherwise keeps the "
               f"value the row's previous request left, which `{gap.reader}` reads (line {gap.reader_line}){hint}")
    trace = (TraceStep(gap.path, gap.line, f"`{gap.method}` writes row `{gap.row}` of `{short}` only when "
                                           f"{_condition_words(gap.conditions)}"),
             TraceStep(gap.path, gap.reader_line, f"`{gap.reader}` reads `{gap.attr}`, the rows of earlier "
                                                  f"requests included"))
    return Finding(code=CODE, path=gap.path, line=gap.line, column=gap.col, end_line=gap.end_line,
                   end_column=gap.end_col, message=message, severity="error", sink=f"{life.name}.{gap.reader}",
                   field=gap.attr, buffer=gap.written, padded="", real="", trace=trace, fix=fix,
                   statement=gap.stmt_text, function=f"{life.name}.{gap.method}")


def _swap_finding(life: ClassLifecycle, sw: ViewSwap) -> Finding:
    w, a, b = sw.written, sw.left, sw.right
    replacement = f"{w}[[{a}, {b}]] = {w}[[{b}, {a}]]"
    kind = "tensor" if sw.lib == "torch" else "array"
    message = (f"tuple swap of two row views of `{w.removeprefix('self.')}` in `{sw.method}`: the right side "
               f"holds views of the {kind}, so after the first store both rows hold row `{b}`'s data and row "
               f"`{a}`'s is lost; swap with fancy indexing (it copies): `{replacement}`")
    return Finding(code=CODE, path=sw.path, line=sw.line, column=sw.col, end_line=sw.end_line,
                   end_column=sw.end_col, message=message, severity="error", sink=f"{life.name}.{sw.method}",
                   field=sw.attr, buffer=w, padded="", real="",
                   trace=(TraceStep(sw.path, sw.line, f"rows `{a}` and `{b}` of `{w}` swapped as views"),),
                   fix=None, statement=sw.stmt_text, function=f"{life.name}.{sw.method}")


class VacatedRowKeepsData(Rule):
    code = CODE
    name = "vacated-row-keeps-data"

    def wants(self, text: str, profile=None) -> bool:
        return _NEEDLE.search(text) is not None

    def check(self, facts: Facts) -> list[Finding]:
        out: list[Finding] = []
        for path, lives in facts.family("lifecycle", lifecycles).items():
            text = facts.texts.get(path)
            if text is None:
                continue
            lines = split_lines(text)
            for life in lives:
                for mv in life.moves:
                    f = _move_finding(life, mv, facts.profile, lines, facts)
                    if f is not None:
                        out.append(_reported_at(f, path))
                for sw in life.swaps:
                    out.append(_reported_at(_swap_finding(life, sw), path))
                for gap in life.gaps:
                    f = _gap_finding(life, gap, facts.profile)
                    if f is not None:
                        out.append(_reported_at(f, path))
                for rel in life.releases:
                    f = _release_finding(life, rel, facts, lines)
                    if f is not None:
                        out.append(_reported_at(f, path))
        out.sort(key=Finding.sort_key)
        return out


def _reported_at(f: Finding, path: str) -> Finding:
    """The finding (and its fix and trace steps in its file) under the checked file's path as
    reported; steps in other files keep theirs."""
    fix = replace(f.fix, path=path) if f.fix else None
    trace = tuple(replace(t, path=path) if t.path == f.path else t for t in f.trace)
    return replace(f, path=path, fix=fix, trace=trace)
