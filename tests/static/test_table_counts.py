"""Counts the profile does not name: a padded size looked up in a table the object keeps.

``padded = self.graph_sizes[n]`` (a dict or list of captured sizes indexed by the real count)
is a number from a container, not a tensor view: used as a slice bound it is a count of its
own, named by the local.  The step's own prefix write then says which rows are real
(``self.seq_lens[:n] = ...`` then ``self.seq_lens[:padded]``): rows ``[n:padded]`` hold what an
earlier step left.  Written from scratch; expected findings from reading each variant: without
a reset, one PAD001 ``seq_lens`` whose real count is the written prefix's; with
``self.seq_lens[n:padded] = 0``, none; a table lookup with no prefix write of another count
(every row written up to ``padded``) has no stale rows.
"""

from __future__ import annotations

import pytest


from .project_files import check_text

RUNNER = '''\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class ModelRunner:
    def __init__(self, n: int) -> None:
        self.seq_lens = torch.zeros(n, dtype=torch.int32)
        self.graph_sizes = {}

    def execute_model(self, reqs):
        {COUNTS}
        self.seq_lens[:{W}] = torch.as_tensor([r.len for r in reqs])
        {RESET}
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:{P}], num_reqs={P})
'''


def _check(tmp_path, counts: str, written: str, padded: str, reset: str = "pass"):
    text = (RUNNER.replace("{COUNTS}", counts).replace("{W}", written).replace("{P}", padded)
            .replace("{RESET}", reset))
    out = check_text(tmp_path, text, "runner.py", "vllm")
    return [(f.code, f.field, f.real, f.padded) for f in out]


@pytest.mark.parametrize("counts, real, padded", [
    ("n = len(reqs)\n        padded = self.graph_sizes[n]", "n", "padded"),
    # a profile real count looked up: the lookup's result is not a name the profile pairs
    ("num_reqs = len(reqs)\n        bucket = self.graph_sizes[num_reqs]", "num_reqs", "bucket"),
])
def test_a_size_from_a_table_is_a_padded_count_of_the_written_prefix(tmp_path, counts, real, padded):
    assert _check(tmp_path, counts, real, padded) == [("PAD001", "seq_lens", real, padded)]
    assert _check(tmp_path, counts, real, padded, f"self.seq_lens[{real}:{padded}] = 0") == []


def test_a_size_from_a_table_written_whole_has_no_stale_rows(tmp_path):
    # the step writes every row it hands out: nothing to report
    assert _check(tmp_path, "n = len(reqs)\n        padded = self.graph_sizes[n]", "padded", "padded") == []
