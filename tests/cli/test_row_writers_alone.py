"""A file checked alone that mentions no sink and no padded count, but writes rows of a buffer
that reaches a sink through another module, is analysed (pre-commit passes only the changed
file; vLLM 0.34.0's `AdaptiveVerificationManager.reallocate_drafts` resets the tail of the query
offsets the runner hands to the attention metadata two calls up).  Written from scratch."""

from __future__ import annotations

import json

STATE = """\
import torch


class QueryState:
    def __init__(self):
        self.query_start_loc = torch.zeros(257, dtype=torch.int32)

    def refresh(self, lens, num_reqs, total):
        self.query_start_loc[:1] = 0
        torch.cumsum(lens, dim=0, out=self.query_start_loc[1:num_reqs + 1])
        RESET
"""

RUNNER = """\
from pkg.state import QueryState


class ModelRunner:
    def __init__(self):
        self.qs = QueryState()

    def _prepare(self, lens, num_reqs, total):
        self.qs.refresh(lens, num_reqs, total)
        return num_reqs

    def execute_model(self, lens, num_reqs, num_reqs_padded, total):
        self._prepare(lens, num_reqs, total)
        return CommonAttentionMetadata(query_start_loc=self.qs.query_start_loc[:num_reqs_padded + 1])
"""


def _check(project, reset: str):
    project.write("pkg/__init__.py")
    project.write("pkg/runner.py", RUNNER)
    project.write("pkg/state.py", STATE.replace("RESET", reset))
    r = project.run("check", "pkg/state.py", "--no-cache", "--format", "json")
    assert r.rc in (0, 1), r.err
    return json.loads(r.out)["findings"]


def test_a_file_that_only_writes_rows_is_analysed_when_checked_alone(project):
    # the reset of rows [num_reqs + 1:] deleted: the runner's slice to num_reqs_padded + 1 reaches
    # the metadata with those rows stale, on the path execute_model -> _prepare -> refresh (the
    # caller two levels up reaches the sink); reported in state.py at a write of the buffer
    # (the first one seen: `query_start_loc[:1] = 0`, line 9)
    [f] = _check(project, "pass")
    assert f["path"] == "pkg/state.py" and f["line"] == 9 and f["field"] == "query_start_loc"
    assert "pkg/runner.py:14" in f["message"]


def test_with_the_reset_it_is_quiet(project):
    assert _check(project, "self.query_start_loc[num_reqs + 1:] = total") == []
