"""Write extents: the real count of a slice, inferred from what the step wrote.

A metadata builder often pads its own persistent buffers with counts no profile names
(vLLM 0.33.0 `GDNAttentionMetadataBuilder.build`: `self.spec_state_indices_tensor[:num_spec_decodes]
.copy_(...)`, then `self.spec_state_indices_tensor[:batch_size]` with `batch_size = m.num_reqs`,
then `[num_spec_decodes:].fill_(NULL_BLOCK_ID)`).  The code says which rows are real by
writing `k` rows and handing out `n`: rows `[k:n]` hold whatever an earlier step left unless
reset.  Each case below is a small package written from scratch; the expected findings are
argued in each test.
"""

from __future__ import annotations

import textwrap

from padlint.analysis.engine import Source, check_project
from padlint.profile import load_profile


def _run(tmp_path, text: str):
    p = tmp_path / "pkg" / "builder.py"
    p.parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    res = check_project([Source(str(p), p.read_text(encoding="utf-8"))], load_profile("vllm"))
    return [f for fs in res.values() if isinstance(fs, list) for f in fs]


HEAD = """\
import torch
import triton

NULL_BLOCK_ID = 0


class GDNAttentionMetadata:
    def __init__(self, state_indices_tensor):
        self.state_indices_tensor = state_indices_tensor


@triton.jit
def _pad_kernel(out_ptr, n):
    pass


class Builder:
    def __init__(self, max_bs):
        self.state_indices_tensor = torch.empty(max_bs, dtype=torch.int32)
"""


def test_prefix_write_then_wider_slice_is_reported_with_the_written_count(tmp_path):
    # rows [:num_decodes] written, [:batch_size] handed out, nothing resets [num_decodes:]
    found = _run(tmp_path, HEAD + """
    def build(self, m, src):
        num_decodes = src.shape[0]
        batch_size = m.num_reqs
        self.state_indices_tensor[:num_decodes].copy_(src)
        view = self.state_indices_tensor[:batch_size]
        return GDNAttentionMetadata(state_indices_tensor=view)
""")
    assert [(f.code, f.field, f.real, f.padded) for f in found] == [
        ("PAD001", "state_indices_tensor", "num_decodes", "batch_size")]
    # the fix resets the rows the step did not write, in the names at the sink
    assert found[0].fix is not None and found[0].fix.text == "view[num_decodes:] = NULL_BLOCK_ID"


def test_reset_of_the_unwritten_rows_makes_it_quiet(tmp_path):
    found = _run(tmp_path, HEAD + """
    def build(self, m, src):
        num_decodes = src.shape[0]
        batch_size = m.num_reqs
        self.state_indices_tensor[:num_decodes].copy_(src)
        view = self.state_indices_tensor[:batch_size]
        view[num_decodes:].fill_(NULL_BLOCK_ID)
        return GDNAttentionMetadata(state_indices_tensor=view)
""")
    assert found == []


def test_reset_on_one_branch_only_is_reported(tmp_path):
    # the `else` path hands out rows [num_decodes:batch_size] without a reset
    found = _run(tmp_path, HEAD + """
    def build(self, m, src, spec):
        num_decodes = src.shape[0]
        batch_size = m.num_reqs
        self.state_indices_tensor[:num_decodes].copy_(src)
        view = self.state_indices_tensor[:batch_size]
        if spec:
            view[num_decodes:].fill_(NULL_BLOCK_ID)
        return GDNAttentionMetadata(state_indices_tensor=view)
""")
    assert [f.field for f in found] == ["state_indices_tensor"]


def test_second_write_up_to_the_slice_makes_it_quiet(tmp_path):
    # [:num_decodes] then [num_decodes:batch_size]: every row of [:batch_size] written this step
    found = _run(tmp_path, HEAD + """
    def build(self, m, src):
        num_decodes = src.shape[0]
        batch_size = m.num_reqs
        self.state_indices_tensor[:num_decodes].copy_(src)
        self.state_indices_tensor[num_decodes:batch_size] = 7
        return GDNAttentionMetadata(state_indices_tensor=self.state_indices_tensor[:batch_size])
""")
    assert found == []


def test_slice_to_the_written_count_is_quiet(tmp_path):
    found = _run(tmp_path, HEAD + """
    def build(self, m, src):
        num_decodes = src.shape[0]
        self.state_indices_tensor[:num_decodes].copy_(src)
        return GDNAttentionMetadata(state_indices_tensor=self.state_indices_tensor[:num_decodes])
""")
    assert found == []


def test_counts_on_different_axes_are_not_paired(tmp_path):
    # written with a token count, read with a request count: which is larger is not known
    # (that is PAD004's axis question), so no rows are claimed stale
    found = _run(tmp_path, HEAD + """
    def build(self, m, src):
        num_decode_tokens = src.shape[0]
        num_decodes = m.num_decodes
        self.state_indices_tensor[:num_decode_tokens].copy_(src)
        return GDNAttentionMetadata(state_indices_tensor=self.state_indices_tensor[:num_decodes])
""")
    assert found == []


def test_kernel_given_the_buffer_makes_the_extent_unknown(tmp_path):
    # the kernel may write any row of the buffer it is handed: what the step wrote is not known
    found = _run(tmp_path, HEAD + """
    def build(self, m, src):
        num_decodes = src.shape[0]
        batch_size = m.num_reqs
        self.state_indices_tensor[:num_decodes].copy_(src)
        _pad_kernel[(1,)](self.state_indices_tensor, batch_size)
        return GDNAttentionMetadata(state_indices_tensor=self.state_indices_tensor[:batch_size])
""")
    assert found == []


def test_library_out_argument_makes_the_extent_unknown(tmp_path):
    found = _run(tmp_path, HEAD + """
    def build(self, m, src):
        num_decodes = src.shape[0]
        batch_size = m.num_reqs
        self.state_indices_tensor[:num_decodes].copy_(src)
        torch.cumsum(src, 0, out=self.state_indices_tensor)
        return GDNAttentionMetadata(state_indices_tensor=self.state_indices_tensor[:batch_size])
""")
    assert found == []


def test_write_in_a_callee_counts_in_the_callers_terms(tmp_path):
    # the callee writes [:n] with n bound to the caller's num_decodes
    found = _run(tmp_path, HEAD + """
    def _stage(self, src, n):
        self.state_indices_tensor[:n].copy_(src)

    def build(self, m, src):
        num_decodes = src.shape[0]
        batch_size = m.num_reqs
        self._stage(src, num_decodes)
        return GDNAttentionMetadata(state_indices_tensor=self.state_indices_tensor[:batch_size])
""")
    assert [(f.field, f.real, f.padded) for f in found] == [("state_indices_tensor", "num_decodes", "batch_size")]


def test_prefix_written_on_the_branch_that_took_the_view_counts_after_the_join(tmp_path):
    # vLLM's GDN builder stages, slices and resets under `if self._stage_spec_decode(...)`, the
    # other path hands out None: after the join the view still knows what its own path wrote
    found = _run(tmp_path, HEAD + """
    def build(self, m, src, stage):
        num_decodes = src.shape[0]
        batch_size = m.num_reqs
        view = None
        if stage:
            self.state_indices_tensor[:num_decodes].copy_(src)
            view = self.state_indices_tensor[:batch_size]
        return GDNAttentionMetadata(state_indices_tensor=view)
""")
    assert [(f.field, f.real) for f in found] == [("state_indices_tensor", "num_decodes")]


def test_the_reset_of_rows_the_step_did_not_write_is_judged_against_the_contract(tmp_path):
    # vLLM 0.19.1 padded GDN/Mamba state indices with PAD_SLOT_ID (-1), a slot sentinel, where
    # the kernels take block ids (the null block is 0): the reset covers the rows (PAD001 quiet)
    # but writes a value the field's consumer does not treat as padding (PAD002)
    found = _run(tmp_path, HEAD + """
    def build(self, m, src):
        num_decodes = src.shape[0]
        batch_size = m.num_reqs
        self.state_indices_tensor[:num_decodes].copy_(src)
        view = self.state_indices_tensor[:batch_size]
        view[num_decodes:].fill_(-1)
        return GDNAttentionMetadata(state_indices_tensor=view)
""")
    assert [(f.code, f.field) for f in found] == [("PAD002", "state_indices_tensor")]
