"""Nested functions stored on an object, for code the analysis does not read to call.

SGLang's prefill graph runner (0.5.23, ``_execute_body_capture``) replays its captured graph in a
nested function it installs as the model's layer forward, then runs the model, which calls it:

    def replay_layer_forward(*args, **layer_kwargs):
        ...
        hs = self.backend.replay(shape_key, static_forward_batch, **kwargs)
    self.layer_model.forward = replay_layer_forward
    try:
        return self.model_runner.model.forward(...)
    finally:
        self.layer_model.forward = original_layer_forward

No call of ``replay_layer_forward`` is in the analysed code: the replay was never judged.  A
nested function stored on an object now runs once where its function ends (its free names read
then, as Python reads them at the call), and what it hands to sinks is judged there.  The runner
below is that shape on the vLLM profile, written from scratch.
"""

from __future__ import annotations

from padlint.analysis import check_source
from padlint.profile import load_profile

RUNNER = '''\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class ModelRunner:
    def __init__(self, max_num_tokens: int) -> None:
        self.positions = torch.zeros(max_num_tokens, dtype=torch.int64)

    def execute_model(self, scheduler_output, model):
        num_tokens = scheduler_output.total_num_scheduled_tokens
        num_tokens_padded = self.cudagraph_dispatcher.pad(num_tokens)
        self.positions[:num_tokens] = torch.as_tensor(scheduler_output.positions)
        {RESET}

        def build_metadata(*args):
            return CommonAttentionMetadata(
                positions=self.positions[:num_tokens_padded],
                num_actual_tokens=num_tokens_padded,
            )

        {INSTALL}
        return model(scheduler_output)
'''

STORE = "model.metadata_hook = build_metadata"
RESET = "self.positions[num_tokens:num_tokens_padded] = 0"
SINK_LINE = RUNNER.splitlines().index("                positions=self.positions[:num_tokens_padded],") + 1


def _found(install: str, reset: str = "pass"):
    src = RUNNER.replace("{INSTALL}", install).replace("{RESET}", reset)
    return check_source(src, "runner.py", load_profile("vllm"))


def test_a_stored_nested_function_is_run_and_its_sink_judged():
    # rows [num_tokens:num_tokens_padded] of `positions` hold an earlier step's positions when
    # the hook the model calls builds the metadata
    (f,) = _found(STORE)
    assert (f.code, f.line, f.field) == ("PAD001", SINK_LINE, "positions")
    assert "rows [num_tokens:num_tokens_padded] may be stale" in f.message
    # the call step is the store, saying who calls it
    store_line = RUNNER.splitlines().index("        {INSTALL}") + 1
    steps = [(t.line, t.note) for t in f.trace]
    assert (store_line, "stores `build_metadata` for code the analysis does not read to call") in steps


def test_the_reset_before_it_counts():
    assert _found(STORE, RESET) == []


def test_a_nested_function_nothing_stores_or_calls_is_not_run():
    # defined and dropped: no code calls it (as before)
    assert _found("pass") == []


def test_a_nested_function_called_here_is_judged_as_before():
    (f,) = _found("build_metadata()")
    assert (f.code, f.line, f.field) == ("PAD001", SINK_LINE, "positions")
    assert not any("stores `build_metadata`" in t.note for t in f.trace)


# A review of the first version (which ran the stored function where its function ended, from
# the joined exit state) found these three wrong: the function runs right after the store, on
# the store's path, with the names it reads as they are there.

def test_it_runs_on_the_path_of_the_store():
    # store and reset under one test: on the store's path the rows are reset
    src = RUNNER.replace("        {INSTALL}\n", "        if self.use_hook:\n            {INSTALL}\n")
    src = src.replace("        {RESET}\n", "        pass\n").replace("{INSTALL}", "self.positions[num_tokens:num_tokens_padded] = 0\n"
                                                               "            " + STORE)
    assert check_source(src, "runner.py", load_profile("vllm")) == []


def test_a_reset_after_the_call_does_not_count():
    # the model calls the hook before the reset that follows it
    src = RUNNER.replace("{INSTALL}", STORE).replace("{RESET}", "pass")
    src = src.replace("        return model(scheduler_output)\n",
                      "        out = model(scheduler_output)\n"
                      "        self.positions[num_tokens:num_tokens_padded] = 0\n"
                      "        return out\n")
    (f,) = check_source(src, "runner.py", load_profile("vllm"))
    assert (f.code, f.line, f.field) == ("PAD001", SINK_LINE, "positions")


def test_names_are_read_as_they_are_at_the_store():
    # the hook reads `positions[:num_tokens]` (the real rows) when the model calls it; the name
    # is rebound to the padded count only after the call
    src = RUNNER.replace("self.positions[:num_tokens_padded]", "self.positions[:num_tokens]")
    src = src.replace("num_actual_tokens=num_tokens_padded", "num_actual_tokens=num_tokens")
    src = src.replace("{INSTALL}", STORE).replace("{RESET}", "pass")
    src = src.replace("        return model(scheduler_output)\n",
                      "        out = model(scheduler_output)\n"
                      "        num_tokens = num_tokens_padded\n"
                      "        return out\n")
    assert check_source(src, "runner.py", load_profile("vllm")) == []
