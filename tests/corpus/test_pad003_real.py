"""PAD003 on real vLLM releases: the `allowed_token_ids_mask` row lifecycle bugs.

vLLM 0.30.0's `InputBatch` (vllm/v1/worker/gpu_input_batch.py):

- `condense` copies the `allowed_token_ids_mask_cpu_tensor` row of `last_req_index` into the
  hole `empty_index` and never clears row `last_req_index`; `add_request` writes that mask row
  only for a request with `sampling_params.allowed_token_ids`, so the next request without them
  admitted into the vacated row inherits the old request's mask.  0.31.0 adds
  `self.allowed_token_ids_mask_cpu_tensor[last_req_index].fill_(False)` right after the copy.
- `swap_states` swaps two rows of that (torch) mask with a tuple of row views, which
  duplicates one row; 0.31.0 swaps with fancy indexing.

So 0.30.0 must report exactly these two PAD003 findings in the file, and 0.31.0 none.  Every
other buffer `condense` moves is written by `add_request` for every request (or every sampling
request, or under the same `if self.use_replayssm:`), which is why exactly two: the precision
criterion on the real file.  The trees are the extracted release wheels
(`tests/corpus_cache.py`); a missing tree skips.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from padlint.analysis.engine import Source, check_project
from padlint.fix import apply_fixes
from padlint.profile import load_profile
from padlint.rules.pad003 import VacatedRowKeepsData
from tests import corpus_cache

pytestmark = pytest.mark.corpus

FILE = "vllm/v1/worker/gpu_input_batch.py"


def _tree(version: str) -> Path:
    try:
        return corpus_cache.ensure("vllm", version)
    except corpus_cache.CorpusError as e:
        pytest.skip(f"vLLM {version} not available: {e}")


def _pad003(version: str):
    path = _tree(version) / FILE
    text = path.read_text(encoding="utf-8")
    res = check_project([Source(str(path), text)], load_profile("vllm"), rules=[VacatedRowKeepsData()])
    return path, text, sorted(res[str(path)], key=lambda f: f.line)


def test_vllm_0_30_0_reports_condense_and_swap_states():
    _path, text, findings = _pad003("0.30.0")
    lines = text.splitlines()
    assert [(f.function, f.field) for f in findings] == [
        ("InputBatch.swap_states", "allowed_token_ids_mask_cpu_tensor"),
        ("InputBatch.condense", "allowed_token_ids_mask_cpu_tensor"),
    ], [(f.line, f.function, f.field) for f in findings]
    swap, move = findings
    # the swap: the tuple of views, reported on its first line `(`, replacement in the message
    assert lines[swap.line - 1].strip() == "("
    assert lines[swap.line].strip() == "self.allowed_token_ids_mask_cpu_tensor[i1],"
    assert ("`self.allowed_token_ids_mask_cpu_tensor[[i1, i2]] = "
            "self.allowed_token_ids_mask_cpu_tensor[[i2, i1]]`") in swap.message
    assert swap.fix is None
    # the move: `...[empty_index] = (...[last_req_index])`; add_request's conditional write named
    assert lines[move.line - 1].strip() == "self.allowed_token_ids_mask_cpu_tensor[empty_index] = ("
    assert "`sampling_params.allowed_token_ids`" in move.message
    assert move.fix is not None and move.fix.after and not move.fix.safe
    assert move.fix.text == "self.allowed_token_ids_mask_cpu_tensor[last_req_index].fill_(False)"


def test_vllm_0_30_0_fix_is_the_line_0_31_0_added():
    _path, text, findings = _pad003("0.30.0")
    move = [f for f in findings if f.fix is not None]
    fixed = apply_fixes(text, [f.fix for f in move]).splitlines()
    new = fixed[move[0].end_line]  # the inserted line, right after the move's last line
    later = (_tree("0.31.0") / FILE).read_text(encoding="utf-8").splitlines()
    assert new in later  # same statement, same indentation as vLLM's own fix
    i = later.index(new)
    assert later[i - 3].strip() == "self.allowed_token_ids_mask_cpu_tensor[empty_index] = ("


def test_vllm_0_31_0_reports_nothing():
    _path, text, findings = _pad003("0.31.0")
    assert "self.allowed_token_ids_mask_cpu_tensor[last_req_index].fill_(False)" in text
    assert findings == [], [(f.line, f.function, f.field) for f in findings]


# vLLM 0.26.0 -> 0.27.0 (docs/historical-bugs.md, B5): `BlockTable.move_row` copies the source
# row's block ids into the target row and leaves them in the source row; `add_row` rewrites a row
# at admission, but `_dummy_run` (gpu_model_runner.py) hands rows [0:num_reqs_padded] of the
# block table to the attention metadata first, with nothing of the run writing them, so the rows
# condense vacated (the last rows) are read as the dummy requests' block ids.  0.27.0 clears the
# source row (`block_table_np[src, :num_blocks] = 0`).  Checked as pre-commit would, the file
# alone: the runner is found as the caller through `MultiGroupBlockTable.__getitem__`.
BLOCK_TABLE = "vllm/v1/worker/block_table.py"


def _block_table_pad003(version: str):
    path = _tree(version) / BLOCK_TABLE
    res = check_project([Source(str(path), path.read_text(encoding="utf-8"))], load_profile("vllm"),
                        rules=[VacatedRowKeepsData()])
    return sorted(res[str(path)], key=lambda f: f.line)


def test_vllm_0_26_0_move_row_is_read_by_the_dummy_run():
    (f,) = _block_table_pad003("0.26.0")
    assert (f.line, f.function, f.field) == (145, "BlockTable.move_row", "block_table")
    assert "`_dummy_run` hands rows [0:num_reqs_padded]" in f.message
    assert "`block_table_tensor`" in f.message


def test_vllm_0_27_0_clears_the_source_row():
    assert _block_table_pad003("0.27.0") == []


# vLLM 0.18.1 -> 0.19.0 (docs/historical-bugs.md, B2): `InputBatch.remove_request` frees the row
# (`self._req_ids[req_index] = None`) and leaves the removed request's block ids in that row of
# `self.block_table`, which `add_request` hands every admitted row (`add_row`); a DP dummy run
# reads rows [0:num_reqs_padded] of the block table first.  0.19.0 adds
# `self.block_table.clear_row(req_index)`.  The file alone: the dummy run is found by name.
def _input_batch_releases(version: str):
    path = _tree(version) / FILE
    res = check_project([Source(str(path), path.read_text(encoding="utf-8"))], load_profile("vllm"),
                        rules=[VacatedRowKeepsData()])
    return [f for f in res[str(path)] if f.function == "InputBatch.remove_request"]


def test_vllm_0_18_1_remove_request_leaves_the_block_table_row():
    (f,) = _input_batch_releases("0.18.1")
    assert (f.line, f.field, f.buffer) == (490, "block_table", "self.block_table")
    assert "`_dummy_run` hands rows [0:num_reqs_padded] of `block_table`" in f.message
    assert f.fix is None  # 0.18.1's block table has no row reset to call


def test_vllm_0_19_0_clears_the_row():
    assert _input_batch_releases("0.19.0") == []
