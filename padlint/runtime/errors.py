"""Violations of the padding invariant and the exception that carries them (no torch)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

#: How many offending rows a message lists.
MAX_ROWS_SHOWN = 8


@dataclass(frozen=True)
class Violation:
    """One field whose padding rows do not all hold the neutral value.

    ``real``/``padded`` are the counts of the field's axis (for "reqs+1"
    the request counts; the padding region of the tensor is then
    ``[start:stop) = [real + 1:padded + 1)``).  ``rows`` are the first
    offending row indices (at most :data:`MAX_ROWS_SHOWN`), ``values`` the
    value found in each (for a 2-D field, its first non-neutral entry),
    ``num_bad`` how many padding rows are wrong in all.  ``constructed_at``
    is "file:line in function"; ``provider_stack`` the formatted call stack
    of the provider call (empty without one); ``when`` says which hook saw it
    ("construction", "attribute store", "provider return", "explicit check",
    "deferred device check").
    """

    owner: str
    field: str
    axis: str
    real: int
    padded: int
    start: int
    stop: int
    dtype: str
    device: str
    shape: tuple[int, ...]
    expected: str
    why: str
    rows: tuple[int, ...]
    values: tuple[Any, ...]
    num_bad: int
    fix: str = ""
    constructed_at: str = ""
    provider_stack: str = ""
    when: str = ""
    counts_from: str = ""
    test: str = ""
    #: not a stale-row finding but a CUDA-graph replay one ("storage changed since capture ..."):
    #: the head line says it, ``rows``/``values`` are empty
    detail: str = ""

    def format(self, stack: bool = True) -> str:
        """Multi-line, self-contained description: what, where, why, how to fix
        (and the provider call stack unless ``stack`` is False)."""
        shown = ", ".join(f"row {r}: {v!r}" for r, v in zip(self.rows, self.values))
        more = f" (+{self.num_bad - len(self.rows)} more)" if self.num_bad > len(self.rows) else ""
        if self.detail:
            lines = [f"{self.owner}.{self.field}: {self.detail}",
                     f"  tensor: dtype={self.dtype} device={self.device} shape={list(self.shape)}"]
        else:
            lines = [
                (f"{self.owner}.{self.field}: {self.num_bad} stale padding row(s) in [{self.start}:{self.stop}) "
                 f"on axis {self.axis!r} (real {self.real}, padded {self.padded})"),
                f"  tensor: dtype={self.dtype} device={self.device} shape={list(self.shape)}",
                f"  expected: {self.expected}" + (f" -- {self.why}" if self.why else ""),
                f"  found: {shown}{more}",
            ]
        if self.counts_from:
            lines.append(f"  counts from: {self.counts_from}")
        if self.when:
            lines.append(f"  seen at: {self.when}")
        if self.constructed_at:  # an explicit check knows where it was called, not where the object was built
            where = "checked at" if self.when == "explicit check" else "constructed at"
            lines.append(f"  {where}: {self.constructed_at}")
        if self.test:
            lines.append(f"  test: {self.test}")
        if self.fix:
            lines.append(f"  fix: {self.fix}" if self.detail else
                         f"  fix: reset the padding rows before the metadata is built: {self.fix}")
        if stack and self.provider_stack:
            lines.extend(_stack_lines(self.provider_stack, "  "))
        return "\n".join(lines)


def _stack_lines(stack: str, indent: str) -> list[str]:
    return [f"{indent}provider call stack (most recent call last):",
            *(f"{indent}  " + s for s in stack.rstrip().splitlines())]


def format_violations(violations: tuple[Violation, ...] | list[Violation]) -> str:
    """The text of a :class:`StalePaddingError`: the line "padlint runtime: N field(s) with
    stale padding rows", then each :meth:`Violation.format` (several lines each), in order.

    ``violations``: the offending fields of one metadata object (usually);
    an empty sequence gives the head line alone (N = 0, then a newline).
    When every violation has the same provider call stack (one object, one
    provider call) it is printed once, at the end.  Raises nothing.
    """
    head = f"padlint runtime: {len(violations)} field(s) with stale padding rows"
    stacks = {v.provider_stack for v in violations}
    if len(violations) > 1 and len(stacks) == 1 and "" not in stacks:  # one object, one provider call: once
        return "\n".join([head, *(v.format(stack=False) for v in violations), *_stack_lines(stacks.pop(), "")])
    return head + "\n" + "\n".join(v.format() for v in violations)


def warn(text: str, category: type[Warning], *, quiet: bool, stacklevel: int = 2) -> None:
    """``warnings.warn(text, category)``; with ``quiet``, a warning filter that turns it into
    an error does not make this raise (padlint's hooks run inside the user's calls and steps,
    which nothing of padlint may break).  ``stacklevel`` counts from the caller of this."""
    try:
        warnings.warn(text, category, stacklevel=stacklevel + 1)
    except Exception:
        if not quiet:
            raise


class StalePaddingError(AssertionError):
    """Padding rows of a metadata field do not hold the neutral value (strict mode).

    A subclass of :class:`AssertionError` so test runners report it as a
    failed check.  ``violations`` holds every offending field of the object
    (one exception per metadata object, not per field).
    """

    def __init__(self, violations: tuple[Violation, ...] | list[Violation]):
        self.violations = tuple(violations)
        super().__init__(format_violations(self.violations))
