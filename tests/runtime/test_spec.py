"""runtime_spec: a malformed [runtime] table raises a one-line ProfileError naming the key."""

from __future__ import annotations

import dataclasses

import pytest

from padlint.profile import ProfileError, load_profile
from padlint.runtime.spec import PoisonSpec, ProviderSpec, runtime_spec

PROVIDER = {"target": "m:R.build", "reqs": ["n", "n_pad"], "tokens": ["t", "t_pad"]}


def _profile(**runtime):
    return dataclasses.replace(load_profile("vllm"), runtime=runtime, source="bad.toml")


def _error(profile, **kw) -> str:
    with pytest.raises(ProfileError) as info:
        runtime_spec(profile, **kw)
    text = str(info.value)
    assert "\n" not in text
    return text


def test_valid_tables_are_read():
    spec = runtime_spec(_profile(provider=PROVIDER, step={"target": "m:R.step"},
                                 poison={"a.b": {"axis": "tokens", "sentinel": 7}},
                                 classes=[{"target": "m:Meta", "infer_from": "qsl"}]))
    assert spec.provider == ProviderSpec("m:R.build", ("n", "n_pad"), ("t", "t_pad"))
    assert spec.step == "m:R.step"
    assert spec.poison == (PoisonSpec("a.b", "tokens", 7),)
    assert spec.classes[0].infer_from == ("qsl",)  # one name as a string


def test_provider_counts_must_be_two_names():
    assert "bad.toml: runtime.provider.reqs: " in _error(_profile(provider={**PROVIDER, "reqs": "abc"}))
    assert "runtime.provider.tokens: " in _error(_profile(provider={**PROVIDER, "tokens": ["t"]}))


def test_provider_given_as_a_string_still_validates_the_profile_counts():
    # the override replaces only the target; the counts come from the profile and must be
    # [real, padded], not a string split into characters ("abc" -> ('a', 'b', 'c'))
    profile = _profile(provider={**PROVIDER, "reqs": "abc"})
    assert "runtime.provider.reqs: " in _error(profile, provider="m:R.other")
    ok = runtime_spec(_profile(provider=PROVIDER), provider="m:R.other")
    assert ok.provider == ProviderSpec("m:R.other", ("n", "n_pad"), ("t", "t_pad"))
    assert runtime_spec(_profile(), provider="m:R.other").provider.reqs == ("num_reqs", "num_reqs_padded")


def test_poison_entry_must_be_a_table_with_known_keys():
    assert "bad.toml: runtime.poison.seq_lens: " in _error(_profile(poison={"seq_lens": 5}))
    assert "runtime.poison.seq_lens: unknown key 'axs'" in _error(_profile(poison={"seq_lens": {"axs": "reqs"}}))
    assert "runtime.poison.seq_lens.axis: " in _error(_profile(poison={"seq_lens": {"axis": "rows"}}))
    assert "runtime.poison.seq_lens.sentinel: " in _error(_profile(poison={"seq_lens": {"sentinel": "x"}}))
    assert "runtime.poison: " in _error(_profile(poison=["seq_lens"]))


def test_poison_override_axis_is_checked():
    with pytest.raises(ValueError, match=r"^poison\[0\] \('seq_lens'\)\.axis: expected one of reqs, reqs\+1, tokens"):
        runtime_spec(_profile(), poison=[("seq_lens", "rows", None)])


def test_step_must_be_a_table_with_a_target():
    assert "bad.toml: runtime.step: " in _error(_profile(step="m:R.step"))
    assert "runtime.step.target: " in _error(_profile(step={"target": 3}))


def test_class_infer_from_must_be_names():
    text = _error(_profile(classes=[{"target": "m:Meta", "infer_from": ["qsl", 3]}]))
    assert "runtime.classes[0].infer_from: " in text
    assert "runtime.classes[0]: " in _error(_profile(classes=["m:Meta"]), classes=["m:Other"])
