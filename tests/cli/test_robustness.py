"""Property tests: the per-file stages never raise on arbitrary input, config errors are ConfigError."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from padlint.config import ConfigError, config_from_dict
from padlint.model import FileError
from padlint.parse import SourceFile, decode_source
from padlint.pipeline import analyse
from padlint.profile import load_profile

from .test_bad_input import LIVE

PROFILE = load_profile("vllm")
from padlint.suppress import apply, scan

# Python-ish fragments, so that the text often tokenizes and parses
FRAGMENTS = st.sampled_from([
    "x = 1", "(", ")", "[", "]", "{", "}", ":", "\n", "\r\n", "\r", "    ", "\t", "#", " # noqa", "# noqa: PAD001",
    "# padlint: ignore[PAD0", "# padlint: pad=keep(", "# padlint: pad=fill(-1)", "self.a", " = ", "'", '"""',
    "num_reqs_padded", "def f():", "\\", "\x0c", "é", "\ufeff", "if x:", "pass", "=", ".",
])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(FRAGMENTS, max_size=40).map("".join))
def test_scan_and_apply_never_raise(text):
    directives = scan(text, "a.py")
    outcome = apply([], directives, frozenset({"gpu"}))
    for f in outcome.findings:
        assert f.code in ("PAD100", "PAD101")
        assert f.line >= 1 and f.column >= 1


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.binary(max_size=200), st.lists(FRAGMENTS, max_size=40).map(lambda xs: "".join(xs).encode())))
def test_decode_and_parse_never_raise(raw):
    source = decode_source("a.py", raw)
    if isinstance(source, FileError):
        assert source.message
        return
    # the whole file behind a class with a sink and a padded count, so it is parsed
    text = LIVE + source.text
    result = analyse(SourceFile("a.py", text, source.encoding, raw), PROFILE)
    if isinstance(result, FileError):
        assert result.message
        assert "\n" not in result.message
        assert not result.message.startswith("internal error"), result.message


VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8), st.sampled_from(["PAD", "PAD001", "a[b"])),
    lambda children: st.one_of(st.lists(children, max_size=3), st.dictionaries(st.text(max_size=6), children, max_size=3)),
    max_leaves=8,
)
KEYS = st.sampled_from(["select", "ignore", "exclude", "extend-exclude", "per-file-ignores", "profile", "counts",
                        "sinks", "sink-calls", "reset-helpers", "neutral", "ignore-args", "selct"])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(KEYS, VALUES.filter(lambda v: v is not None), max_size=4))
def test_config_errors_are_config_errors(table):
    try:
        config_from_dict(table, "padlint.toml", None, Path("/r"))
    except ConfigError as e:
        message = str(e)
        assert message.startswith("padlint.toml")
        assert "\n" not in message
