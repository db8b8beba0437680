"""--select / --ignore: comma lists, prefix match, ruff precedence, config then command line."""

from __future__ import annotations

import json

import pytest

from padlint.config import RuleSelection


def test_default_enables_everything():
    sel = RuleSelection(((None, ()), (None, ())))
    assert sel.enabled("PAD001") and sel.enabled("PAD100")


@pytest.mark.parametrize(("select", "ignore", "code", "enabled"), [
    (("PAD",), (), "PAD001", True),
    (("PAD0",), (), "PAD001", True),
    (("PAD0",), (), "PAD100", False),
    (("PAD001",), (), "PAD100", False),
    (("PAD",), ("PAD1",), "PAD100", False),
    (("PAD",), ("PAD1",), "PAD001", True),
    (("PAD001",), ("PAD",), "PAD001", True),   # the more specific select wins
    (("PAD",), ("PAD",), "PAD001", False),     # same length: ignore wins
    (None, ("PAD100",), "PAD100", False),
    (None, ("PAD100",), "PAD101", True),
])
def test_one_layer(select, ignore, code, enabled):
    assert RuleSelection(((select, ignore),)).enabled(code) is enabled


def test_command_line_select_replaces_config_select():
    config = (("PAD001",), ())
    assert not RuleSelection((config, (None, ()))).enabled("PAD100")
    assert RuleSelection((config, (("PAD",), ()))).enabled("PAD100")
    # a command-line ignore applies on top of the config's select
    assert not RuleSelection((config, (None, ("PAD0",)))).enabled("PAD001")


def _codes(project, *args):
    r = project.run("check", "--format", "json", *args)
    assert r.rc in (0, 1), r.err
    return sorted(f["code"] for f in json.loads(r.out)["findings"])


@pytest.fixture
def two_codes(project, fake_analysis):
    # one PAD001 and one PAD100 (the unused suppression on line 2)
    project.write("a.py", 'm = Meta(x=stale("self.a[:num_reqs_padded]"))\ny = 1  # padlint: ignore[PAD001]\n')
    return project


def test_cli_select_ignore(two_codes):
    p = two_codes
    assert _codes(p) == ["PAD001", "PAD100"]
    assert _codes(p, "--select", "PAD0") == ["PAD001"]
    assert _codes(p, "--select", "PAD1") == ["PAD100"]
    assert _codes(p, "--select", "PAD001,PAD100") == ["PAD001", "PAD100"]
    assert _codes(p, "--select", "PAD001", "--select", "PAD100") == ["PAD001", "PAD100"]
    assert _codes(p, "--ignore", "PAD100") == ["PAD001"]
    assert _codes(p, "--ignore", "PAD") == []
    assert _codes(p, "--select", "PAD001", "--ignore", "PAD") == ["PAD001"]


def test_cli_ignore_gives_exit_0(two_codes):
    assert two_codes.run("check", "--ignore", "PAD").rc == 0


def test_config_select_then_cli(two_codes):
    two_codes.write("padlint.toml", 'select = ["PAD0"]\n')
    assert _codes(two_codes) == ["PAD001"]
    assert _codes(two_codes, "--select", "PAD") == ["PAD001", "PAD100"]


def test_invalid_selector_on_command_line(project):
    r = project.run("check", "--select", "PAD001,E501")
    assert r.rc == 2
    assert r.err.startswith("padlint: error: --select: invalid rule selector 'E501'")


def test_deselected_code_still_uses_its_suppression(project, fake_analysis):
    # PAD001 is suppressed by the comment; with PAD001 deselected the comment
    # still counts as used (no PAD100)
    project.write("a.py", 'm = Meta(x=stale("self.a[:num_reqs_padded]"))  # noqa: PAD001\n')
    assert _codes(project, "--select", "PAD1") == []


def _error_line(r) -> str:
    assert (r.rc, r.out) == (2, "")
    lines = r.err.splitlines()
    assert len(lines) == 1, r.err
    return lines[0]


@pytest.mark.parametrize(("argv", "message"), [
    (["--select", "PAD999"], "--select: unknown rule selector 'PAD999': no rule code starts with it "
                             "(known codes: PAD001, PAD002, PAD003, PAD004, PAD005, PAD100, PAD101)"),
    (["--select", "PAD2"], "--select: unknown rule selector 'PAD2'"),
    (["--ignore", "PAD001", "--ignore", "PAD102"], "--ignore: unknown rule selector 'PAD102'"),
    (["--select", ""], "--select: empty rule selector list ''"),
    (["--select", " , "], "--select: empty rule selector list ' , '"),
    (["--select", "PAD001,"], "--select: empty rule selector in 'PAD001,'"),
    (["--ignore", ""], "--ignore: empty rule selector list ''"),
])
def test_unknown_or_empty_selector_on_command_line(two_codes, argv, message):
    assert _error_line(two_codes.run("check", *argv)).startswith(f"padlint: error: {message}")


@pytest.mark.parametrize(("toml", "message"), [
    ('select = ["PAD999"]\n', "padlint.toml: select: unknown rule selector 'PAD999': no rule code starts with it"),
    ('ignore = ["PAD0", "PAD2"]\n', "padlint.toml: ignore: unknown rule selector 'PAD2'"),
    ('select = [""]\n', "padlint.toml: select: empty rule selector"),
    ('[per-file-ignores]\n"tests/*" = ["PAD999"]\n',
     "padlint.toml: per-file-ignores.'tests/*': unknown rule selector 'PAD999'"),
    ('[per-file-ignores]\n"tests/*" = [" "]\n', "padlint.toml: per-file-ignores.'tests/*': empty rule selector"),
])
def test_unknown_or_empty_selector_in_config(two_codes, toml, message):
    two_codes.write("padlint.toml", toml)
    line = _error_line(two_codes.run("check"))
    assert line.startswith(f"padlint: error: {two_codes.root}/{message}"), line


def test_every_known_code_and_prefix_is_accepted(two_codes):
    for selector in ("PAD", "PAD0", "PAD00", "PAD001", "PAD1", "PAD10", "PAD100", "PAD101"):
        assert two_codes.run("check", "--select", selector).rc in (0, 1), selector
