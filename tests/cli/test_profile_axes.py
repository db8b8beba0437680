"""The ``[axes]`` table of an engine profile (PAD004's vocabulary): strict validation and queries."""

from __future__ import annotations

import pytest

from padlint.profile import ProfileError, load_profile, profile_from_dict

SINKS = {"sinks": {"constructors": ["CommonAttentionMetadata"]}}


@pytest.mark.parametrize("axes, message", [
    ({"req": {"sizes": []}}, "my.toml: unknown table 'axes.req' (did you mean 'reqs'?)"),
    ({"reqs": {"size": ["max_bs"]}}, "my.toml: unknown key 'axes.reqs.size' (did you mean 'sizes'?)"),
    ({"reqs": {"sizes": "max_bs"}}, "my.toml: axes.reqs.sizes: expected a list of non-empty strings, got 'max_bs'"),
    ({"tokens": {"counts": [""]}}, "my.toml: axes.tokens.counts: expected a list of non-empty strings"),
    ({"reqs": []}, "my.toml: axes.reqs: expected a table"),
    ({"allocators": "_make_buffer"}, "my.toml: axes.allocators: expected a list of non-empty strings"),
    ({"counterparts": {"num_tokens": 3}}, "my.toml: axes.counterparts.num_tokens: expected a non-empty string, got 3"),
    ({"counterparts": {"num_tokens": "m.num_reqs"}}, "my.toml: axes.counterparts.num_tokens: expected a name, got 'm.num_reqs'"),
    ({"reqs": {"counts": ["n"]}, "tokens": {"counts": ["n"]}}, "my.toml: axes: 'n' is in both reqs.counts and tokens.counts"),
    ({"reqs": {"sizes": ["max_*"]}, "tokens": {"sizes": ["max_*"]}}, "my.toml: axes: 'max_*' is in both reqs.sizes"),
])
def test_bad_axes_are_one_line_errors_naming_the_key(axes, message):
    with pytest.raises(ProfileError) as info:
        profile_from_dict({**SINKS, "axes": axes}, "my.toml")
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_axes_queries():
    p = profile_from_dict({**SINKS,
                           "counts": [{"axis": "reqs", "real": ["num_reqs"], "padded": ["num_reqs_padded"]},
                                      {"axis": "tokens", "real": ["num_tokens"], "padded": ["num_tokens_padded"]}],
                           "axes": {"allocators": ["_make_buffer"],
                                    "reqs": {"sizes": ["max_num_reqs", "*_max_bs"], "counts": ["num_decodes"]},
                                    "tokens": {"sizes": ["max_num_tokens"], "counts": ["num_actual_tokens"]},
                                    "counterparts": {"num_actual_tokens": "num_reqs"}}}, "my.toml")
    ax = p.axes
    assert ax.size_axis("max_num_reqs") == "reqs" and ax.size_axis("decode_cudagraph_max_bs") == "reqs"
    assert ax.size_axis("max_num_tokens") == "tokens" and ax.size_axis("max_model_len") is None
    # [[counts]] first (real and padded names), then [axes.*].counts
    assert p.count_axis("num_reqs_padded") == "reqs" and p.count_axis("num_tokens") == "tokens"
    assert p.count_axis("num_decodes") == "reqs" and p.count_axis("num_actual_tokens") == "tokens"
    assert p.count_axis("batch_size") is None
    assert p.is_padded_count("num_reqs_padded") is True and p.is_padded_count("num_reqs") is False
    assert p.is_padded_count("num_decodes") is None and p.is_padded_count("x_padded") is True
    assert ax.counterpart("num_actual_tokens") == "num_reqs" and ax.counterpart("num_reqs") is None
    assert ax.allocators == ("_make_buffer",)


def test_without_axes_nothing_has_an_axis_but_counts():
    p = profile_from_dict({**SINKS, "counts": [{"axis": "reqs", "real": ["num_reqs"], "padded": ["p"]}]}, "my.toml")
    assert p.axes.size_axis("max_num_reqs") is None and p.count_axis("num_actual_tokens") is None
    assert p.count_axis("num_reqs") == "reqs"


@pytest.mark.parametrize("name", ["vllm", "sglang"])
def test_shipped_profiles_name_both_axes(name):
    p = load_profile(name)
    assert p.axes.size_axis("max_bs") == "reqs"
    assert p.count_axis("num_tokens") == "tokens"
    # every counterpart maps a count of one axis to a count of the other
    for a, b in p.axes.counterparts:
        assert {p.count_axis(a), p.count_axis(b)} == {"reqs", "tokens"}, (a, b)


# ----------------------------------------------------------------- [graphs]

@pytest.mark.parametrize("graphs, message", [
    ({"captures": ["capture_one_shape"]}, "my.toml: unknown key 'graphs.captures' (did you mean 'capture'?)"),
    ({"replay": "*._replay_graph"}, "my.toml: graphs.replay: expected a list of non-empty strings"),
    ({"host": [""]}, "my.toml: graphs.host: expected a list of non-empty strings"),
])
def test_bad_graphs_are_one_line_errors_naming_the_key(graphs, message):
    with pytest.raises(ProfileError) as info:
        profile_from_dict({**SINKS, "graphs": graphs}, "my.toml")
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_graphs_table_is_read():
    p = profile_from_dict({**SINKS, "graphs": {"capture": ["capture_one_shape"], "replay": ["*.backend.replay"],
                                               "host": ["*_cpu"]}}, "my.toml")
    assert p.graph_capture == ("capture_one_shape",) and p.graph_replay == ("*.backend.replay",)
    assert p.graph_host == ("*_cpu",)
    assert profile_from_dict(SINKS, "my.toml").graph_replay == ()
