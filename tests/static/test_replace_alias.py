"""`dataclasses.replace` of a metadata parameter through a local alias is a sink.

vLLM 0.34.0's GDN builder re-gathers a Mamba group's state indices in
``update_block_table(self, metadata: GDNAttentionMetadata, ...)``: ``m = metadata``, the
persistent ``self.spec_state_indices_tensor[:m.num_spec_decodes]`` is refreshed, the view
``[:batch_size]`` (``batch_size = m.spec_state_indices_tensor.shape[0]``, the padded width) gets
its tail ``[m.num_spec_decodes:]`` filled with ``NULL_BLOCK_ID``, and ``replace(m,
spec_state_indices_tensor=...)`` hands it to the metadata's consumer.  The function stores on no
metadata object by the parameter's own name, so it was not taken as reaching a sink: deleting
the tail fill went unnoticed.  Written from scratch; expected findings from reading the source:
without the fill, rows ``[m.num_decodes:batch_size]`` of the view are stale at the
``replace`` (one PAD001 ``state_indices`` at line 28); with it, none.
"""

from __future__ import annotations

from .project_files import check_files

BUILDER = '''\
from dataclasses import dataclass, replace

import torch


@dataclass
class MambaAttentionMetadata:
    num_decodes: int
    state_indices: torch.Tensor


class MambaMetadataBuilder:
    def __init__(self, max_num_reqs: int) -> None:
        self.state_indices = torch.zeros(max_num_reqs, dtype=torch.int32)

    def update_block_table(
        self,
        metadata: MambaAttentionMetadata,
        blk_table: torch.Tensor,
    ) -> MambaAttentionMetadata:
        m = metadata
        batch_size = m.state_indices.shape[0]
        self.state_indices[: m.num_decodes].copy_(blk_table[: m.num_decodes, 0])
        indices = self.state_indices[:batch_size]
        {RESET}
        return replace(
            m,
            state_indices=indices,
        )
'''


def _found(tmp_path, reset: str):
    files = {"pkg/__init__.py": "", "pkg/builder.py": BUILDER}
    return sorted((f.line, f.field) for f in check_files(tmp_path, files, ["pkg/builder.py"], {"RESET": reset})
                  if f.code == "PAD001")


def test_replace_of_an_aliased_metadata_parameter_is_a_sink(tmp_path):
    assert _found(tmp_path, "pass") == [(28, "state_indices")]


def test_the_tail_fill_covers_it(tmp_path):
    assert _found(tmp_path, "indices[m.num_decodes :].fill_(0)") == []
