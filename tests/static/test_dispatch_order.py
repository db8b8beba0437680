"""A finding's text does not depend on the interpreter's string hashes.

A dispatch on an attribute declared by its base class (MRV2's ``self.model_state:
ModelState``) interprets every project implementation and joins their effects; the finding at
the shared sink names one example path, the first of the shortest.  The implementations were
taken in the order of a frozenset of class keys, so the example path (and the message) changed
with ``PYTHONHASHSEED`` (seen on vLLM 0.21.0: ``attn_utils.py:342`` named ``whisper.py`` in one
run, ``mamba_hybrid.py`` in another).  Baselines were stable (their fingerprint leaves the
message out), the text a user reads was not.

Written from scratch.  ``Runner.execute`` writes ``block_table[:num_reqs]`` of a persistent
buffer and dispatches ``self.model_state.prepare_attn(self.block_table, num_reqs,
num_reqs_padded)`` on ``self.model_state``, which ``__init__`` sets to one of eight
``ModelState`` implementations by a chain of tests (one object of eight possible classes, as
MRV2's model-state factory gives), each implementation in its own module, each
handing ``block_table[:num_reqs_padded]`` (stale rows ``[num_reqs:num_reqs_padded]``) to the
module builder ``build(...)``, whose ``CommonAttentionMetadata(block_table_tensor=...)`` is the
sink.  Every path has the same length, so the example is decided by the dispatch order alone.
Expected: one PAD001 at the builder's sink, and the same JSON report, byte for byte, under five
hash seeds; its example path goes through the implementation whose class key sorts first
(``states/a_state.py``: class keys begin with the module).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

NAMES = ["zeta", "alpha", "mamba", "whisper", "encdec", "default", "lora", "pooling"]

BASE = '''\
class ModelState:
    def prepare_attn(self, block_table, num_reqs: int, num_reqs_padded: int):
        raise NotImplementedError
'''

STATE = '''\
from pkg.worker.base_state import ModelState
from pkg.worker.builder import build


class {cls}(ModelState):
    def prepare_attn(self, block_table, num_reqs: int, num_reqs_padded: int):
        return build(block_table[:num_reqs_padded], num_reqs)
'''

BUILDER = '''\
from pkg.attention import CommonAttentionMetadata


def build(block_table, num_reqs: int):
    return CommonAttentionMetadata(block_table_tensor=block_table, num_reqs=num_reqs)
'''

ATTENTION = '''\
class CommonAttentionMetadata:
    def __init__(self, block_table_tensor, num_reqs):
        self.block_table_tensor = block_table_tensor
        self.num_reqs = num_reqs
'''

RUNNER = '''\
import torch

{imports}


class Runner:
    def __init__(self, max_num_reqs: int, kind: str):
        self.block_table = torch.zeros((max_num_reqs, 16), dtype=torch.int32)
{branches}

    def execute(self, rows, num_reqs: int, num_reqs_padded: int):
        self.block_table[:num_reqs].copy_(rows)
        return self.model_state.prepare_attn(self.block_table, num_reqs, num_reqs_padded)
'''


def _runner() -> str:
    imports = "\n".join(f"from pkg.worker.states.{'abcdefgh'[i]}_state import {n.capitalize()}State"
                        for i, n in enumerate(NAMES))
    branches = "\n".join(f"        {'if' if i == 0 else 'elif'} kind == {n!r}:\n"
                         f"            self.model_state = {n.capitalize()}State()" for i, n in enumerate(NAMES))
    return RUNNER.format(imports=imports, branches=branches)


def _write(root: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/attention.py": ATTENTION,
        "pkg/worker/__init__.py": "",
        "pkg/worker/base_state.py": BASE,
        "pkg/worker/builder.py": BUILDER,
        "pkg/worker/runner.py": _runner(),
        "pkg/worker/states/__init__.py": "",
    }
    for i, name in enumerate(NAMES):
        # a class key is `module:Class`: `a_state.py` holds the first
        files[f"pkg/worker/states/{'abcdefgh'[i]}_state.py"] = STATE.format(cls=name.capitalize() + "State")
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def _run(root: Path, seed: int) -> str:
    env = dict(os.environ, PYTHONHASHSEED=str(seed), PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    out = subprocess.run([sys.executable, "-m", "padlint", "check", "pkg", "--no-cache", "--format", "json",
                          "--exit-zero"], cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_report_is_the_same_under_every_hash_seed(tmp_path):
    _write(tmp_path)
    reports = {seed: _run(tmp_path, seed) for seed in (0, 1, 2, 3, 4)}
    assert len(set(reports.values())) == 1, "the report changed with PYTHONHASHSEED"
    findings = json.loads(reports[0])["findings"]
    assert [(f["code"], f["path"], f["field"]) for f in findings] == [
        ("PAD001", "pkg/worker/builder.py", "block_table_tensor")]
    trace_paths = [step["path"] for step in findings[0]["trace"]]
    assert "pkg/worker/states/a_state.py" in trace_paths  # ZetaState: the first class key
