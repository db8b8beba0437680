"""Profile files: required sinks and value types (one-line ProfileError naming the file; exit 2 via the CLI)."""

from __future__ import annotations

import pytest

from padlint.profile import ProfileError, profile_from_dict

from .conftest import CANONICAL

SINKS = {"sinks": {"constructors": ["CommonAttentionMetadata"]}}


def test_profile_without_sinks_is_an_error():
    with pytest.raises(ProfileError) as info:
        profile_from_dict({"name": "x"}, "my.toml")
    assert str(info.value) == ("my.toml: sinks: the profile has no sinks (set at least one of sinks.constructors, "
                               "sinks.forward_calls, sinks.calls)")
    with pytest.raises(ProfileError, match="^my.toml: sinks: the profile has no sinks"):
        profile_from_dict({"name": "x", "sinks": {"constructors": [], "forward_calls": [], "calls": []}}, "my.toml")


@pytest.mark.parametrize("sinks", [{"constructors": ["Meta"]}, {"forward_calls": ["self.model"]},
                                   {"calls": ["my_kernel"]}])
def test_any_one_kind_of_sink_is_enough(sinks):
    p = profile_from_dict({"name": "x", "sinks": sinks}, "my.toml")
    assert (*p.sink_constructors, *p.forward_calls, *p.sink_calls) == tuple(next(iter(sinks.values())))


@pytest.mark.parametrize("data, message", [
    ({"sinks": {"constructors": "Meta"}}, "my.toml: sinks.constructors: expected a list of non-empty strings, got 'Meta'"),
    ({"sinks": {"constructors": [""]}}, "my.toml: sinks.constructors: expected a list of non-empty strings, got ['']"),
    ({"sinks": {"constructors": ["Meta", 3]}}, "my.toml: sinks.constructors: expected a list of non-empty strings"),
    ({**SINKS, "sinks": {**SINKS["sinks"], "calls": [" "]}}, "my.toml: sinks.calls: expected a list of non-empty"),
    ({**SINKS, "buffers": {"shared_views": ["cpu", ""]}}, "my.toml: buffers.shared_views: expected a list of non-empty"),
    ({**SINKS, "buffers": {"padded_getters": "get_device_tensor"}}, "my.toml: buffers.padded_getters: expected a list"),
    ({**SINKS, "buffers": {"device_view": ""}}, "my.toml: buffers.device_view: expected a non-empty string"),
    ({**SINKS, "resets": {"fill_methods": [""]}}, "my.toml: resets.fill_methods: expected a list of non-empty"),
    ({**SINKS, "buffers": []}, "my.toml: buffers: expected a table"),
    ({"sinks": {**SINKS["sinks"], "forward_exempt": {"input_ids": 1}}},
     "my.toml: sinks.forward_exempt: expected a table of field = reason (strings)"),
    ({"sinks": {**SINKS["sinks"], "forward_exempt": ["input_ids"]}},
     "my.toml: sinks.forward_exempt: expected a table of field = reason (strings)"),
    ({**SINKS, "exempt": {"num_reqs": []}}, "my.toml: exempt: expected a table of field = reason (strings)"),
    ({**SINKS, "constants": {"NULL_BLOCK_ID": "0"}}, "my.toml: constants.NULL_BLOCK_ID: expected an integer, got '0'"),
    ({**SINKS, "constants": {"PAD_SLOT_ID": -1.0}}, "my.toml: constants.PAD_SLOT_ID: expected an integer, got -1.0"),
    ({**SINKS, "constants": {"FLAG": True}}, "my.toml: constants.FLAG: expected an integer, got True"),
    ({**SINKS, "constants": [1]}, "my.toml: constants: expected a table of NAME = integer"),
    ({**SINKS, "resets": {"helpers": {"clear": -1}}},
     "my.toml: resets.helpers.clear: expected a buffer argument index (an integer >= 0), got -1"),
    ({**SINKS, "resets": {"helpers": {"clear": "0"}}}, "my.toml: resets.helpers.clear: expected a buffer argument"),
    ({**SINKS, "name": 3}, "my.toml: name: expected a non-empty string, got 3"),
    ({**SINKS, "buffers": {"wrapper_allocators": ["CpuGpuBuffer"]}},
     "my.toml: buffers.wrapper_allocators: expected a table of name = initial value"),
    ({**SINKS, "buffers": {"wrapper_allocators": {"Buf": "flat"}}},
     "my.toml: buffers.wrapper_allocators.Buf: expected a literal, a constant or \"empty\", got 'flat'"),
    ({**SINKS, "buffers": {"wrapper_allocators": {"Buf": "garbage"}}}, "my.toml: buffers.wrapper_allocators.Buf: "),
    # read_when: a Python expression, and only with the consumer code that tests it named
    ({**SINKS, "fields": {"m": {"neutral": "True", "consumer": "moe", "read_when": "envs.X and"}}},
     "my.toml: fields.m.read_when: expected a Python expression, got 'envs.X and'"),
    ({**SINKS, "fields": {"m": {"neutral": "True", "read_when": "envs.X"}}},
     "my.toml: fields.m.read_when: name the consumer code that tests it in consumer"),
    ({**SINKS, "fields": {"m": {"neutral": "True", "consumer": "moe", "read_when": 1}}},
     "my.toml: fields.m.read_when: expected"),
    # reads: "buffer" only, and only with the consumer that reads past the view named
    ({**SINKS, "fields": {"m": {"neutral": "0", "consumer": "fa3", "reads": "all"}}},
     "my.toml: fields.m.reads: expected \"buffer\""),
    ({**SINKS, "fields": {"m": {"neutral": "0", "reads": "buffer"}}},
     "my.toml: fields.m.reads: name the consumer code that reads past the view"),
    ({**SINKS, "sinks": {**SINKS["sinks"], "builders": "AttentionMetadataBuilder"}},
     "my.toml: sinks.builders: expected a list of non-empty strings"),
    ({**SINKS, "dummy_runs": {"functions": "_dummy_run"}},
     "my.toml: dummy_runs.functions: expected a list of non-empty strings"),
    ({**SINKS, "dummy_runs": ["_dummy_run"]}, "my.toml: dummy_runs: expected a table"),
    ({**SINKS, "dummy_runs": {"function": ["_dummy_run"]}}, "my.toml: unknown key 'dummy_runs.function' (did you mean 'functions'?)"),
    ({**SINKS, "setup": {"functions": "load_model"}},
     "my.toml: setup.functions: expected a list of non-empty strings"),
    ({**SINKS, "setup": {"methods": ["load_model"]}}, "my.toml: unknown key 'setup.methods'"),
])

def test_bad_value_types(data, message):
    with pytest.raises(ProfileError) as info:
        profile_from_dict(data, "my.toml")
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_wrapper_allocators_values():
    """A literal keeps its text, a profile constant becomes its value, "empty" marks uninitialised rows."""
    p = profile_from_dict({**SINKS, "constants": {"PAD_SLOT_ID": -1},
                           "buffers": {"wrapper_allocators": {"A": 0, "B": False, "C": "PAD_SLOT_ID", "D": "empty"}}},
                          "my.toml")
    assert p.wrapper_allocators == (("A", "0"), ("B", "False"), ("C", "-1"), ("D", "empty"))


def test_dummy_run_patterns():
    """``[dummy_runs] functions`` are fnmatch patterns on a function's name; none by default."""
    p = profile_from_dict({**SINKS, "dummy_runs": {"functions": ["_dummy_run", "get_dummy_*"]}}, "my.toml")
    assert p.is_dummy_run("_dummy_run") and p.is_dummy_run("get_dummy_block_tables")
    assert not p.is_dummy_run("dummy_run") and not p.is_dummy_run("execute_model")
    assert not profile_from_dict(SINKS, "my.toml").is_dummy_run("_dummy_run")


def test_setup_patterns():
    """``[setup] functions`` are fnmatch patterns on a method's name; none by default."""
    p = profile_from_dict({**SINKS, "setup": {"functions": ["load_model", "init_*_graphs"]}}, "my.toml")
    assert p.is_setup("load_model") and p.is_setup("init_cuda_graphs")
    assert not p.is_setup("execute_model") and not p.is_setup("init_forward_metadata")
    assert not profile_from_dict(SINKS, "my.toml").is_setup("load_model")


def test_valid_values_are_kept():
    p = profile_from_dict({**SINKS, "constants": {"NULL_BLOCK_ID": 0, "PAD_SLOT_ID": -1},
                           "resets": {"helpers": {"clear_padding": 0}},
                           "exempt": {"num_reqs": "scalar"}}, "my.toml")
    assert p.constants == (("NULL_BLOCK_ID", 0), ("PAD_SLOT_ID", -1))
    assert p.reset_helpers == (("clear_padding", 0),)
    assert p.exempt == (("num_reqs", "scalar"),)


def test_cli_profile_without_sinks_is_exit_2_naming_the_file(project):
    project.write("bug.py", CANONICAL)
    project.write("my.toml", 'name = "x"\n')
    for argv in (["--profile", "my.toml"], []):
        if not argv:
            project.write("padlint.toml", 'profile = "my.toml"\n')
        r = project.run("check", *argv)
        assert (r.rc, r.out) == (2, "")
        assert r.err == (f"padlint: error: {project.root / 'my.toml' if not argv else 'my.toml'}: sinks: the profile "
                         f"has no sinks (set at least one of sinks.constructors, sinks.forward_calls, sinks.calls)\n")
