"""Configuration: discovery, --config, keys, errors (one line naming file and key, exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from padlint.config import (
    Config,
    ConfigError,
    config_from_dict,
    find_config,
    load_config,
)
from padlint.prefilter import build_prefilter
from padlint.profile import load_profile

from .conftest import CANONICAL


def _check(project, *args):
    r = project.run("check", "--format", "json", *args)
    assert "Traceback" not in r.err
    return r, (json.loads(r.out) if r.rc != 2 else None)


def _one_line_error(r) -> str:
    assert r.rc == 2
    assert r.out == ""
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r.err
    assert lines[0].startswith("padlint: error: ")
    return lines[0]


def test_pyproject_table_is_read(project):
    project.write("pyproject.toml", '[project]\nname = "x"\n\n[tool.padlint]\nignore = ["PAD001"]\n')
    project.write("bug.py", CANONICAL)
    r, doc = _check(project)
    assert r.rc == 0
    assert doc["findings"] == []


def test_padlint_toml_top_level_keys(project):
    project.write("padlint.toml", 'ignore = ["PAD0"]\n')
    project.write("bug.py", CANONICAL)
    _r, doc = _check(project)
    assert doc["findings"] == []


def test_nearest_config_wins(project):
    project.write("pyproject.toml", '[tool.padlint]\nignore = ["PAD001"]\n')
    project.write("sub/padlint.toml", "select = [\"PAD\"]\n")
    project.write("sub/bug.py", CANONICAL)
    # from the root the root config (ignore PAD001) applies ...
    r, doc = _check(project, "sub/bug.py", "--config", "pyproject.toml")
    assert doc["findings"] == []
    # ... checking sub/, the nearer sub/padlint.toml applies (which does not ignore PAD001)
    _r, doc = _check(project, "sub")
    assert [f["path"] for f in doc["findings"]] == ["sub/bug.py"]


def test_walks_up_from_checked_path(project, monkeypatch):
    project.write("padlint.toml", 'ignore = ["PAD001"]\n')
    project.write("a/b/bug.py", CANONICAL)
    monkeypatch.chdir(project.root / "a")
    _r, doc = _check(project, "b")
    assert doc["findings"] == []


def test_pyproject_without_table_is_skipped(project):
    project.write("padlint.toml", 'ignore = ["PAD001"]\n')
    project.write("sub/pyproject.toml", '[project]\nname = "sub"\n')
    project.write("sub/bug.py", CANONICAL)
    assert find_config(["sub"], project.root) == project.root / "padlint.toml"
    _r, doc = _check(project, "sub")
    assert doc["findings"] == []


def test_padlint_toml_beats_pyproject_in_same_dir(project):
    project.write("padlint.toml", 'ignore = ["PAD001"]\n')
    project.write("pyproject.toml", '[tool.padlint]\nselect = ["PAD"]\n')
    assert find_config(["."], project.root) == project.root / "padlint.toml"


def test_config_option_overrides_discovery(project):
    project.write("padlint.toml", 'ignore = ["PAD001"]\n')
    project.write("other.toml", 'select = ["PAD"]\n')
    project.write("bug.py", CANONICAL)
    _r, doc = _check(project, "--config", "other.toml")
    assert len(doc["findings"]) == 1


def test_unknown_key_suggests_closest(project):
    project.write("pyproject.toml", '[tool.padlint]\nselct = ["PAD"]\n')
    project.write("bug.py", CANONICAL)
    line = _one_line_error(project.run("check"))
    assert str(project.root / "pyproject.toml") in line
    assert "[tool.padlint]: unknown key 'selct' (did you mean 'select'?)" in line


def test_unknown_key_without_close_match_lists_keys(project):
    project.write("padlint.toml", "zzzz = 1\n")
    line = _one_line_error(project.run("check"))
    assert "padlint.toml: unknown key 'zzzz'; known keys: select, ignore" in line


def test_bad_glob(project):
    project.write("padlint.toml", 'exclude = ["gen/[abc.py"]\n')
    line = _one_line_error(project.run("check"))
    assert "padlint.toml: exclude: bad glob 'gen/[abc.py': unclosed '['" in line


def test_bad_glob_on_command_line(project):
    line = _one_line_error(project.run("check", "--exclude", "a[b"))
    assert line == "padlint: error: --exclude: bad glob 'a[b': unclosed '['"


def test_bad_value_type(project):
    project.write("padlint.toml", "select = 3\n")
    line = _one_line_error(project.run("check"))
    assert "padlint.toml: select: expected a list of strings, got 3" in line


def test_bad_selector_in_config(project):
    project.write("padlint.toml", 'ignore = ["E501"]\n')
    line = _one_line_error(project.run("check"))
    assert "padlint.toml: ignore: invalid rule selector 'E501'" in line


def test_invalid_toml(project):
    project.write("padlint.toml", "select = [\n")
    line = _one_line_error(project.run("check"))
    assert "padlint.toml: invalid TOML:" in line


def test_config_file_not_found(project):
    line = _one_line_error(project.run("check", "--config", "nope.toml"))
    assert line.endswith("nope.toml: configuration file not found")


def test_unknown_profile_in_config(project):
    project.write("padlint.toml", 'profile = "sglang-nope"\n')
    line = _one_line_error(project.run("check"))
    assert "unknown profile 'sglang-nope'" in line


def test_bad_profile_extension(project):
    project.write("padlint.toml", '[[counts]]\nreal = "n"\n')
    line = _one_line_error(project.run("check"))
    assert "padlint.toml: counts[0]: missing key padded" in line


def test_bad_reset_helpers(project):
    project.write("padlint.toml", '[reset-helpers]\nclear_padding = "first"\n')
    line = _one_line_error(project.run("check"))
    assert "reset-helpers.clear_padding: expected a buffer argument index (an integer >= 0), got 'first'" in line


def test_exclude_and_extend_exclude(project):
    project.write("padlint.toml", 'extend-exclude = ["generated"]\n')
    project.write("generated/bug.py", CANONICAL)
    project.write("build/bug.py", CANONICAL)
    project.write("src/bug.py", CANONICAL)
    r, doc = _check(project)
    assert [f["path"] for f in doc["findings"]] == ["src/bug.py"]
    # `exclude` replaces the defaults: build/ is checked now, generated/ is not
    project.write("padlint.toml", 'exclude = ["generated"]\n')
    _r, doc = _check(project)
    assert [f["path"] for f in doc["findings"]] == ["build/bug.py", "src/bug.py"]


def test_exclude_anchored_at_config_dir(project, monkeypatch):
    project.write("padlint.toml", 'extend-exclude = ["pkg/gen/*"]\n')
    project.write("pkg/gen/bug.py", CANONICAL)
    project.write("pkg/bug.py", CANONICAL)
    monkeypatch.chdir(project.root / "pkg")
    _r, doc = _check(project, ".")
    assert [f["path"] for f in doc["findings"]] == ["bug.py"]


def test_per_file_ignores(project):
    project.write("padlint.toml", '[per-file-ignores]\n"tests/*" = ["PAD001"]\n"legacy_*.py" = ["PAD"]\n')
    project.write("tests/test_x.py", CANONICAL)
    project.write("pkg/legacy_runner.py", CANONICAL)
    project.write("pkg/runner.py", CANONICAL)
    _r, doc = _check(project)
    assert [f["path"] for f in doc["findings"]] == ["pkg/runner.py"]


def test_per_file_ignores_bad_code(project):
    project.write("padlint.toml", '[per-file-ignores]\n"tests/*" = ["X1"]\n')
    line = _one_line_error(project.run("check"))
    assert "per-file-ignores.'tests/*': invalid rule selector 'X1'" in line


def test_sinks_extension_end_to_end(project):
    # MyBatchInfo matches neither CommonAttentionMetadata nor *AttentionMetadata
    src = CANONICAL.replace("CommonAttentionMetadata", "MyBatchInfo")
    project.write("bug.py", src)
    r, doc = _check(project)
    assert doc["findings"] == []
    project.write("padlint.toml", 'sinks = ["MyBatchInfo"]\n')
    _r, doc = _check(project)
    assert [(f["sink"], f["line"]) for f in doc["findings"]] == [("MyBatchInfo", 7)]


def test_counts_extension_reaches_profile_and_prefilter(tmp_path: Path):
    (tmp_path / "padlint.toml").write_text(
        'ignore-args = ["CommonAttentionMetadata.seq_lens"]\nsink-calls = ["my_kernel"]\n'
        '[[counts]]\naxis = "reqs"\nreal = "n_live"\npadded = "n_graph"\n'
        '[reset-helpers]\nclear_padding = 0\n[neutral]\nmy_mask = false\n')
    cfg = load_config(tmp_path / "padlint.toml")
    profile = cfg.build_profile()
    assert profile.is_real_for("n_live", "n_graph")
    assert ("clear_padding", 0) in profile.reset_helpers
    assert profile.neutral_for("my_mask") == "False"
    assert profile.is_arg_ignored("CommonAttentionMetadata", "seq_lens")
    assert "my_kernel" in profile.sink_calls
    # a sink and the extension's padded count in one file: worth parsing
    assert build_prefilter(profile).may_matter("m = CommonAttentionMetadata(x=buf[:n_graph])")
    assert build_prefilter(profile).may_matter("my_kernel(buf[:n_graph])")
    assert not build_prefilter(load_profile("vllm")).may_matter("my_kernel(buf[:n_graph])")


def test_profile_option_beats_config(project, tmp_path):
    project.write("padlint.toml", 'profile = "nope"\n')
    project.write("bug.py", CANONICAL)
    r, _doc = _check(project, "--profile", "vllm")
    assert r.rc == 1


def test_config_from_dict_unit():
    cfg = config_from_dict({"select": ["PAD0"], "per-file-ignores": {"a/*": ["PAD001"]}}, "x.toml", None, Path("/r"))
    assert cfg.select == ("PAD0",)
    assert cfg.per_file_ignores == (("a/*", ("PAD001",)),)
    with pytest.raises(ConfigError, match=r"^x.toml: profile: expected"):
        config_from_dict({"profile": ""}, "x.toml", None, Path("/r"))
    assert Config().profile == "vllm"


def test_profile_path_relative_to_config(project):
    from padlint.profile import rules_dir

    project.write("sub/engine.toml", (rules_dir() / "vllm.toml").read_text().replace('name = "vllm"', 'name = "eng"'))
    project.write("sub/padlint.toml", 'profile = "engine.toml"\n')
    project.write("sub/bug.py", CANONICAL)
    r, doc = _check(project, "sub")
    assert [f["path"] for f in doc["findings"]] == ["sub/bug.py"]
    project.write("sub/padlint.toml", 'profile = "missing.toml"\n')
    line = _one_line_error(project.run("check", "sub"))
    # a path is a file to read, not a shipped profile's name: say so, with the key it came from
    assert "padlint.toml: profile: " in line and line.endswith("missing.toml: profile file not found")


NEUTRAL_EXPECTED = ("neutral.seq_lens: expected a literal (false, 0, -1), a constant of the profile's [constants] "
                    "(NULL_BLOCK_ID, PAD_SLOT_ID) or \"flat\", ")


@pytest.mark.parametrize(("toml", "message"), [
    ('counts = [{ axis = "reqs", real = "n", padded = "n_p", extra = 1 }]\n',
     "counts[0]: unknown key 'extra' (expected axis, real, padded)"),
    ('counts = [{ axis = "bogus", real = "n", padded = "n_p" }]\n',
     "counts[0].axis: expected reqs, reqs+1 or tokens, got 'bogus'"),
    ('counts = [{ axis = "reqs", real = "", padded = "n_p" }]\n',
     "counts[0].real: expected a list of non-empty strings, got ['']"),
    ('sinks = [""]\n', "sinks: expected a list of non-empty strings, got ['']"),
    ('sinks = ["MyMeta", " "]\n', "sinks: expected a list of non-empty strings, got ['MyMeta', ' ']"),
    ('sink-calls = [""]\n', "sink-calls: expected a list of non-empty strings, got ['']"),
    ('sinks = "Foo"\n', "sinks: expected a list of non-empty strings, got 'Foo'"),
    ('reset-helpers = { clear_padding = -1 }\n',
     "reset-helpers.clear_padding: expected a buffer argument index (an integer >= 0), got -1"),
    ('reset-helpers = { clear_padding = true }\n',
     "reset-helpers.clear_padding: expected a buffer argument index (an integer >= 0), got True"),
    ('neutral = { seq_lens = "not a literal(" }\n', NEUTRAL_EXPECTED + "got 'not a literal('"),
    ('neutral = { seq_lens = "" }\n', NEUTRAL_EXPECTED + "got ''"),
    # issue 11: a name must be a constant of the profile, a number must be finite
    ('neutral = { seq_lens = "nope" }\n', NEUTRAL_EXPECTED + "got 'nope'"),
    ('neutral = { seq_lens = "consts.PAD_SLOT_ID" }\n', NEUTRAL_EXPECTED + "got 'consts.PAD_SLOT_ID'"),
    ('neutral = { seq_lens = inf }\n', NEUTRAL_EXPECTED + "got inf (not a finite number)"),
    ('neutral = { seq_lens = nan }\n', NEUTRAL_EXPECTED + "got nan (not a finite number)"),
    ('neutral = { seq_lens = "inf" }\n', NEUTRAL_EXPECTED + "got 'inf'"),
    ('neutral = { seq_lens = "1e999" }\n', NEUTRAL_EXPECTED + "got '1e999'"),
    ('neutral = { seq_lens = "\'text\'" }\n', NEUTRAL_EXPECTED + "got \"'text'\""),
    ('ignore-args = ["seq_lens"]\n',
     "ignore-args: expected `Sink.field` (e.g. 'CommonAttentionMetadata.seq_lens'), got 'seq_lens'"),
    ('ignore-args = ["CommonAttentionMetadata."]\n', "ignore-args: expected `Sink.field`"),
    ('select = "PAD100"\n', "select: expected a list of strings, got 'PAD100'"),
    ('ignore = "PAD100"\n', "ignore: expected a list of strings, got 'PAD100'"),
    ('extend-exclude = "build"\n', "extend-exclude: expected a list of strings, got 'build'"),
    ('[per-file-ignores]\n"tests/*" = "PAD001"\n', "per-file-ignores.'tests/*': expected a list of strings"),
])
def test_config_value_validation(project, toml, message):
    project.write("padlint.toml", toml)
    project.write("bug.py", CANONICAL)
    line = _one_line_error(project.run("check"))
    assert line == f"padlint: error: {project.root / 'padlint.toml'}: {message}" or \
        line.startswith(f"padlint: error: {project.root / 'padlint.toml'}: {message}"), line


@pytest.mark.parametrize("value, text", [
    ("false", "False"), ("-1", "-1"), ('"-1"', "-1"), ('"NULL_BLOCK_ID"', "NULL_BLOCK_ID"),
    ('"PAD_SLOT_ID"', "PAD_SLOT_ID"), ('"flat"', "flat"), ('"(0, 1)"', "(0, 1)"),
    ("0.5", "0.5"),
])
def test_valid_neutral_values(tmp_path: Path, value, text):
    (tmp_path / "padlint.toml").write_text(f"neutral = {{ my_mask = {value} }}\n"
                                           'counts = [{ axis = "reqs+1", real = "n", padded = "n_p" }]\n'
                                           'ignore-args = ["MyMeta.0", "pkg.MyMeta.seq_lens"]\n')
    profile = load_config(tmp_path / "padlint.toml").build_profile()
    assert profile.neutral_for("my_mask") == text
    assert profile.is_arg_ignored("MyMeta", "0") and profile.is_arg_ignored("pkg.MyMeta", "seq_lens")
