"""Cheap text test run before parsing: can this file produce a PAD001 finding?

A finding needs a sink call (a metadata constructor, forward call or
configured sink call) and a padded slice in the same file, and a padded
slice needs a padded count name (a ``counts[].padded`` name of the profile,
or any ``X_padded`` identifier) or a padded getter (``get_device_tensor``).
Stage 1 here: plain substring tests for the padded names (C speed).
Stage 2, on the few files that pass: the analysis's own regex test
(:func:`padlint.analysis.index.may_matter`, sink and padded count).  A file
that fails either is not parsed: parsing is the expensive step, and most
files of an engine checkout are skipped this way.

A second pair of tests says whether a file holds comments that can matter
(``noqa``/``padlint:``), so that unused suppressions are reported in
skipped files too, and files without such comments are not tokenized.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from padlint.profile import Profile


@dataclass(frozen=True)
class Prefilter:
    """Substring tests for one profile; build with :func:`build_prefilter`."""

    needles: tuple[str, ...]
    profile: Profile | None = None

    def may_matter(self, text: str) -> bool:
        """True when ``text`` mentions a sink call or a padded count name or getter.

        The analysis is whole-program: a file with either may start an entry-point search.
        Substring tests (``"_padded" in text`` covers every ``X_padded``
        name), then the analysis's own substring test of a sink call and a
        padded count (:func:`padlint.analysis.may_matter`) on the files that pass.
        """
        if not any(n in text for n in self.needles):
            return False
        if self.profile is None:
            return True
        from padlint.analysis.index import may_matter

        return may_matter(text, self.profile)


#: At most this many checked files (pre-commit, a file checked alone) count as "a few": a file
#: among them that only writes rows (:func:`writes_rows`) is analysed, and its functions'
#: callers are searched for a sink (:func:`padlint.analysis.engine.check_project`).
FEW_FILES = 64

#: a statement that writes rows of a tensor in place: a store into a slice (`x[n:] = 0`,
#: `x[a:b, :k] = v`) or an in-place fill of one (`x[n:].fill_(v)`, `x.zero_()`, `x.np.fill(v)`)
#: (no `[` inside the brackets: each scan from a `[` ends at the next bracket, so the test is
#: linear in a line's length)
_ROW_WRITE = re.compile(r"\[[^\]\[\n]*:[^\]\[\n]*\]\s*=(?!=)|\.(?:fill_|zero_|fill|masked_fill_|index_fill_)\(")


def writes_rows(text: str) -> bool:
    """Whether ``text`` may write rows of a tensor in place (:data:`_ROW_WRITE`): a file that
    mentions no sink and no padded count but resets or fills a buffer that reaches one through
    another module (checked alone by pre-commit, such a file is analysed for the sinks its
    writes reach: :func:`padlint.pipeline.run`)."""
    return _ROW_WRITE.search(text) is not None


_DIRECTIVE = re.compile(r"#[^\n]*?(?:padlint\s*:|noqa)", re.IGNORECASE)
_OWN_DIRECTIVE = re.compile(r"#[^\n]*?(?:padlint\s*:|noqa\s*:[^\n]*?PAD)", re.IGNORECASE)


def build_prefilter(profile: Profile) -> Prefilter:
    """A :class:`Prefilter` for ``profile``'s count names and getters."""
    names = {n for pair in profile.counts for n in pair.padded} | set(profile.padded_getters)
    names = {n for n in names if "_padded" not in n}
    from padlint.analysis.index import _class_literals, _literals

    sink_lits, _pad = _literals(profile)
    # with metadata builders named, a module that constructs what it is annotated to return may
    # be one (`-> FlashMLADecodeMetadata`): stage 2 decides
    builders = ("Builder",) if profile.sink_builders else ()
    return Prefilter(("_padded", *sorted(names), *sorted(set(sink_lits) | set(_class_literals(profile))), *builders),
                     profile)


def has_directives(text: str) -> bool:
    """True when ``text`` may hold a ``# noqa`` or ``# padlint:`` comment (anything that can suppress)."""
    return _DIRECTIVE.search(text) is not None


def has_own_directives(text: str) -> bool:
    """True when ``text`` may hold a comment that padlint reports on without any finding.

    That is a ``# padlint:`` comment or a ``noqa`` listing a ``PAD`` code
    (unused: PAD100; invalid: PAD101; pad=keep: statistics).  A bare
    ``# noqa`` or ``# noqa: E501`` cannot, and those are common.
    """
    low = text.lower()  # one C pass; the regex runs only where it can match
    if "padlint" not in low and not ("noqa" in low and "pad" in low):
        return False
    return _OWN_DIRECTIVE.search(text) is not None
