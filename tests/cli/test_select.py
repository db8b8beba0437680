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
