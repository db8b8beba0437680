"""A runner that shares a padding runner's count names but never pads.

vLLM 0.34.0's CPU runner (`vllm/v1/worker/cpu/`) keeps the step in an `InputBatch` dataclass with
the fields of Model Runner V2's (`num_tokens`, `num_tokens_after_padding`), and builds every one
with the same value in both (`InputBatch(num_tokens=n, num_tokens_after_padding=n)`, also in its
`make_dummy` classmethod as `cls(...)`).  A slice `buf[:batch.num_tokens_after_padding]` of such
an object has no padding rows: judged by the profile's pair, it reported the rows past
`num_tokens` stale (docs/triage-vllm-0.34.0.md, #6).  When one construction binds the padded
field otherwise, or some code may change it (`dataclasses.replace(b, num_tokens_after_padding=
...)`), the names decide again.  Written from scratch.
"""

from __future__ import annotations

from .project_files import check_files

BATCH = '''\
from dataclasses import dataclass


@dataclass
class InputBatch:
    num_tokens: int
    num_tokens_after_padding: int

    @classmethod
    def make_dummy(cls, num_tokens: int) -> "InputBatch":
        return cls(num_tokens=num_tokens, num_tokens_after_padding={DUMMY})
'''

RUNNER = '''\
import torch

from pkg.batch import InputBatch


class Runner:
    def __init__(self, max_num_tokens: int) -> None:
        self.input_ids = torch.zeros(max_num_tokens, dtype=torch.int64)

    def prepare(self, ids) -> InputBatch:
        num_tokens = ids.shape[0]
        self.input_ids[:num_tokens].copy_(ids)
        return InputBatch(num_tokens=num_tokens, num_tokens_after_padding=num_tokens)

    def execute_model(self, ids):
        batch = self.prepare(ids)
        {OTHER}
        return self.forward(batch)

    def forward(self, batch: InputBatch):
        return self.model(input_ids=self.input_ids[:batch.num_tokens_after_padding])

    def warm_up(self, num_tokens: int):
        return self.forward(InputBatch.make_dummy(num_tokens))
'''


TYPED_ONLY = '''\
import torch

from pkg.batch import InputBatch


class ModelState:
    def __init__(self, max_num_tokens: int) -> None:
        self.input_ids = torch.zeros(max_num_tokens, dtype=torch.int64)

    def load(self, ids) -> None:
        self.input_ids[:ids.shape[0]].copy_(ids)

    def forward(self, batch: InputBatch):
        return self.model(input_ids=self.input_ids[:batch.num_tokens_after_padding])
'''


def _found(tmp_path, dummy: str = "num_tokens", other: str = "pass") -> list[tuple[int, str]]:
    files = {"pkg/__init__.py": "", "pkg/batch.py": BATCH, "pkg/runner.py": RUNNER}
    got = check_files(tmp_path, files, ["pkg/runner.py"], {"DUMMY": dummy, "OTHER": other})
    return [(f.line, f.field) for f in got if f.code == "PAD001"]


def _typed_only(tmp_path, dummy: str) -> list[tuple[int, str]]:
    # `forward` has no caller here: an entry point whose `batch` is any `InputBatch` the project
    # builds (the runner's and `make_dummy`'s)
    files = {"pkg/__init__.py": "", "pkg/batch.py": BATCH, "pkg/runner.py": RUNNER, "pkg/state.py": TYPED_ONLY}
    got = check_files(tmp_path, files, ["pkg/state.py"], {"DUMMY": dummy, "OTHER": "pass"})
    return [(f.line, f.field) for f in got if f.code == "PAD001"]


def test_a_padded_field_every_construction_binds_to_the_real_one_has_no_padding(tmp_path):
    # both constructions (`prepare`, and `make_dummy` through `cls(...)`, which `warm_up` hands to
    # `forward`) bind the two fields alike
    assert _found(tmp_path) == []
    assert _typed_only(tmp_path, "num_tokens") == []


def test_one_construction_that_pads_makes_the_names_decide(tmp_path):
    # `make_dummy` pads: a `forward` handed any `InputBatch` may get such a batch, and rows
    # [num_tokens:num_tokens_after_padding] of the persistent buffer are stale at the model call
    assert _typed_only(tmp_path, "num_tokens + 8") == [(14, "input_ids")]


def test_a_replace_of_the_padded_field_makes_the_names_decide(tmp_path):
    # the step's own object is replaced with a padded count
    other = ("num_tokens_padded = self.pad(batch.num_tokens)\n        "
             "batch = dataclasses.replace(batch, num_tokens_after_padding=num_tokens_padded)")
    assert _found(tmp_path, other=other) == [(22, "input_ids")]
