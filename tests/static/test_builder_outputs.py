"""Metadata builders' outputs as sinks, and the engine rules the indexer shape needs.

The shape is vLLM 0.33.0's sparse-attention indexer builder (``fixtures/project/builder_output_*``,
written from scratch): its metadata classes are not named ``*AttentionMetadata``; they are sinks
because the builder derives from a ``[sinks] builders`` base and its ``build`` is annotated to
return them.  The tests below also pin the engine rules the shape needs, each on a module of a
few lines whose expected finding is reasoned in the test:

* a comparison of two counts orders them on each branch (``if a < b:``: on the false branch the
  written prefix ``[:a]`` covers ``[:b]``);
* a field its class declares Optional may be None, so ``if x is not None:`` has two paths;
* a whole write of a view of unknown extent (``v = buf[:n * k]; v[:] = x``) does not clean the
  buffer;
* a view returned on one of several paths keeps the write extents of its own path.
"""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

from padlint.analysis.callgraph import CallGraph
from padlint.analysis.engine import Source, check_project
from padlint.analysis.project import Project
from padlint.profile import load_profile

ROOT = Path(__file__).resolve().parents[2]
BUGGY = ROOT / "fixtures" / "project" / "builder_output_buggy"


def _sources(fixture: Path) -> list[Source]:
    return [Source(str(p), p.read_text(encoding="utf-8")) for p in sorted(fixture.rglob("*.py"))]


def _findings(sources: list[Source], profile) -> list:
    res = check_project(sources, profile)
    return sorted(((Path(f.path).name, f.line, f.field) for fs in res.values() if isinstance(fs, list)
                   for f in fs))


def _module(tmp_path: Path, text: str, name: str = "mod.py") -> list[Source]:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return [Source(str(p), p.read_text(encoding="utf-8"))]


def test_builder_outputs_are_the_annotated_returns_and_their_fields():
    project = Project()
    keys = {Path(s.path).name: project.add_source(s.path, s.text) for s in _sources(BUGGY)}
    graph = CallGraph(project, load_profile("vllm"))
    outs = graph.builder_outputs(f"{keys['indexer.py']}:IndexerBuilder")
    # `build -> IndexerMetadata`, and its field `decode: IndexerDecodeMetadata | None`
    assert sorted(c.name for c in outs.values()) == ["IndexerDecodeMetadata", "IndexerMetadata"]
    # a class that is no builder has no outputs, nor has a metadata class itself
    assert graph.builder_outputs(f"{keys['indexer.py']}:IndexerMetadata") == {}
    assert graph.builder_outputs(f"{keys['backend.py']}:CommonAttentionMetadata") == {}


def test_the_builder_fixture_reports_the_unreset_tail_only():
    # seq_lens rows [actual:num_decode_tokens] are never reset on the path without DCP
    assert _findings(_sources(BUGGY), load_profile("vllm")) == [("indexer.py", 81, "seq_lens")]


def test_without_a_builders_entry_the_metadata_classes_are_not_sinks():
    profile = dataclasses.replace(load_profile("vllm"), sink_builders=())
    assert _findings(_sources(BUGGY), profile) == []


_ORDERED = '''\
import torch
from dataclasses import dataclass


@dataclass
class CommonAttentionMetadata:
    block_table: torch.Tensor


class Builder:
    def __init__(self, n, k):
        self.block_table = torch.zeros((n, k), dtype=torch.int32)

    def build(self, block_table, actual, n_pad):
        self.block_table[:actual] = block_table
        if actual < n_pad:
            self.block_table[actual:n_pad] = 0
        return CommonAttentionMetadata(block_table=self.block_table[:n_pad])
'''


def test_a_comparison_orders_the_counts_on_each_branch(tmp_path):
    # when `actual < n_pad` is false the prefix [:actual] covers [:n_pad]: quiet
    assert _findings(_module(tmp_path, _ORDERED), load_profile("vllm")) == []
    # `actual != n_pad` false: equal counts, the same rows
    assert _findings(_module(tmp_path, _ORDERED.replace("actual < n_pad", "actual != n_pad")),
                     load_profile("vllm")) == []
    # `n_pad > actual` is the same test written the other way round
    assert _findings(_module(tmp_path, _ORDERED.replace("actual < n_pad", "n_pad > actual")),
                     load_profile("vllm")) == []
    # `actual > n_pad` says nothing about the rows [actual:n_pad] on its false branch:
    # there `actual <= n_pad`, and the reset under the test did not run
    assert _findings(_module(tmp_path, _ORDERED.replace("actual < n_pad", "actual > n_pad")),
                     load_profile("vllm")) == [("mod.py", 18, "block_table")]


_OPTIONAL = '''\
import torch
from dataclasses import dataclass


@dataclass
class CommonAttentionMetadata:
    seq_lens: torch.Tensor
    local_seq_lens: {ANN}


class Builder:
    def __init__(self, n):
        self.seq_lens = torch.zeros(n, dtype=torch.int32)

    def build(self, common: CommonAttentionMetadata, n_real, n_pad):
        self.seq_lens[:n_real] = common.seq_lens
        local = common.local_seq_lens
        if local is not None:
            self.seq_lens[n_real:n_pad] = 0
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:n_pad], local_seq_lens=local)
'''


def test_an_optional_field_may_be_none(tmp_path):
    # declared Optional: the path where it is None skips the reset, rows [n_real:n_pad] stale
    optional = _OPTIONAL.replace("{ANN}", "torch.Tensor | None = None")
    assert _findings(_module(tmp_path, optional), load_profile("vllm")) == [("mod.py", 20, "seq_lens")]
    assert _findings(_module(tmp_path, _OPTIONAL.replace("{ANN}", "Optional[torch.Tensor]")
                             .replace("import torch\n", "import torch\nfrom typing import Optional\n")),
                     load_profile("vllm")) == [("mod.py", 21, "seq_lens")]
    # declared a tensor: it is never None, the reset always runs
    assert _findings(_module(tmp_path, _OPTIONAL.replace("{ANN}", "torch.Tensor")), load_profile("vllm")) == []


_UNKNOWN_EXTENT = '''\
import torch
from dataclasses import dataclass


@dataclass
class CommonAttentionMetadata:
    seq_lens: torch.Tensor


class Builder:
    def __init__(self, n):
        self.seq_lens = torch.zeros(n, dtype=torch.int32)

    def build(self, lens, n_real, n_pad, width):
        self.seq_lens[:n_real] = lens
        view = self.seq_lens[: n_real * width].view(n_real, width)
        view[:] = 1
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:n_pad])
'''


def test_a_whole_write_of_a_view_of_unknown_extent_cleans_nothing(tmp_path):
    # `view` covers rows [:n_real * width], a bound the analysis does not know: the rows
    # [n_real:n_pad] of the buffer are not known to be written (they were taken as clean)
    assert _findings(_module(tmp_path, _UNKNOWN_EXTENT), load_profile("vllm")) == [("mod.py", 18, "seq_lens")]


_TWO_RETURNS = '''\
import torch
from dataclasses import dataclass


@dataclass
class CommonAttentionMetadata:
    seq_lens: torch.Tensor


class Builder:
    def __init__(self, n):
        self.seq_lens = torch.zeros(n, dtype=torch.int32)

    def _prepare(self, lens, n_real, n_pad, uniform):
        if uniform:
            self.seq_lens[:n_pad] = 1
            return self.seq_lens[:n_pad]
        self.seq_lens[:n_real] = lens
        return self.seq_lens[:n_pad]

    def build(self, lens, n_real, n_pad, uniform):
        return CommonAttentionMetadata(seq_lens=self._prepare(lens, n_real, n_pad, uniform))
'''


def test_a_view_returned_on_one_path_keeps_that_paths_extents(tmp_path):
    # the second return wrote [:n_real] only: rows [n_real:n_pad] of its view are stale
    # (the state after the call joins both paths and knows no prefix; the view keeps its own)
    assert _findings(_module(tmp_path, _TWO_RETURNS), load_profile("vllm")) == [("mod.py", 22, "seq_lens")]


_GUARDED_PREFIX = '''\
import torch
from dataclasses import dataclass


@dataclass
class CommonAttentionMetadata:
    seq_lens: torch.Tensor


class Builder:
    def __init__(self, n):
        self.seq_lens = torch.zeros(n, dtype=torch.int32)

    def build(self, lens, lens_cpu, n_pad):
        n_real = int(lens_cpu.sum().item())
        if {TEST}:
            self.seq_lens[:n_real] = lens
{RESET}        return CommonAttentionMetadata(seq_lens=self.seq_lens[:n_pad])
'''


def test_a_prefix_written_under_a_nonempty_test_is_known_on_both_paths(tmp_path):
    # `if n_real > 0:` skips the write only when [:n_real] is empty, so both paths wrote [:n_real]:
    # rows [n_real:n_pad] are unwritten on both, and stale without the reset
    for test in ("n_real > 0", "n_real >= 1", "0 < n_real", "n_real != 0", "n_real"):
        buggy = _GUARDED_PREFIX.replace("{TEST}", test).replace("{RESET}", "")
        line = buggy.splitlines().index("        return CommonAttentionMetadata(seq_lens=self.seq_lens[:n_pad])") + 1
        assert _findings(_module(tmp_path, buggy), load_profile("vllm")) == [("mod.py", line, "seq_lens")], test
        fixed = _GUARDED_PREFIX.replace("{TEST}", test).replace("{RESET}", "        self.seq_lens[n_real:n_pad] = 0\n")
        assert _findings(_module(tmp_path, fixed), load_profile("vllm")) == [], test
    # another test: on its false path nothing of this step reached the buffer, every row holds
    # an earlier step's values, rows [n_real:n_pad] among them; on the true path those rows are
    # unwritten too: stale on both, reported (before the prefix of one path was dropped at the
    # join, and nothing was).  Rows [0:n_real] are unwritten on the false path too (`n_real` may
    # be 1 to 4 there): a second finding, which the padding reset does not fix
    other = _GUARDED_PREFIX.replace("{TEST}", "n_real > 4").replace("{RESET}", "")
    line = other.splitlines().index("        return CommonAttentionMetadata(seq_lens=self.seq_lens[:n_pad])") + 1
    assert _findings(_module(tmp_path, other), load_profile("vllm")) == [("mod.py", line, "seq_lens")] * 2
    fixed = _GUARDED_PREFIX.replace("{TEST}", "n_real > 4").replace("{RESET}", "        self.seq_lens[n_real:n_pad] = 0\n")
    res = check_project(_module(tmp_path, fixed), load_profile("vllm"))
    (f,) = [f for fs in res.values() if isinstance(fs, list) for f in fs]
    assert "rows [0:n_real]" in f.message and "not written where `n_real > 4` fails" in f.message


_REPLACE_PARAM = '''\
import dataclasses

import torch
from dataclasses import dataclass


@dataclass
class GDNAttentionMetadata:
    state_indices: torch.Tensor
    num_decodes: int


class Builder:
    def __init__(self, n):
        self.state_indices = torch.zeros(n, dtype=torch.int32)

    def update_block_table(self, m: GDNAttentionMetadata, blk, n_real, n_pad) -> GDNAttentionMetadata:
        self.state_indices[:n_real].copy_(blk)
        return dataclasses.replace(m, state_indices=self.state_indices[:n_pad])
'''


def test_replace_of_a_parameter_typed_as_metadata_is_a_sink(tmp_path):
    # `m` is a parameter whose class is a sink constructor of the profile (`*AttentionMetadata`):
    # the replaced field reaches the same consumer; rows [n_real:n_pad] were not written
    assert _findings(_module(tmp_path, _REPLACE_PARAM), load_profile("vllm")) == [("mod.py", 19, "state_indices")]
    # a class that is no metadata class: `replace` makes a plain object, no sink
    plain = _REPLACE_PARAM.replace("GDNAttentionMetadata", "GDNState")
    assert _findings(_module(tmp_path, plain), load_profile("vllm")) == []


def test_an_int_field_of_a_typed_parameter_is_a_count(tmp_path):
    # `m.num_decodes` (declared `num_decodes: int`) bounds the copy: rows [:m.num_decodes] written,
    # rows [m.num_decodes:n_pad] of the slice handed out are not (without the count the copy's
    # extent was unknown and nothing was inferred)
    text = _REPLACE_PARAM.replace("self.state_indices[:n_real].copy_(blk)",
                                  "self.state_indices[:m.num_decodes].copy_(blk)")
    assert _findings(_module(tmp_path, text), load_profile("vllm")) == [("mod.py", 19, "state_indices")]
    fixed = text.replace("        return dataclasses.replace",
                         "        self.state_indices[m.num_decodes:n_pad] = 0\n        return dataclasses.replace")
    assert _findings(_module(tmp_path, fixed), load_profile("vllm")) == []


_WHOLE_READER = '''\
import torch
from dataclasses import dataclass


class AttentionMetadataBuilder:
    pass


@dataclass
class FaDecodeMetadata:
    scheduler_metadata: torch.Tensor


class FaBuilder(AttentionMetadataBuilder):
    def __init__(self, n):
        self.scheduler_metadata = torch.zeros(n, dtype=torch.int32)

    def build(self, schedule, n_pad) -> FaDecodeMetadata:
        n = schedule.shape[0]
        self.scheduler_metadata[:n] = schedule
{RESET}        return FaDecodeMetadata(scheduler_metadata={ARG})
'''


def _whole(tmp_path, reset: str, arg: str = "self.scheduler_metadata[:n]") -> list:
    text = _WHOLE_READER.replace("{RESET}", reset).replace("{ARG}", arg)
    p = tmp_path / "fa.py"
    p.write_text(text, encoding="utf-8")
    res = check_project([Source(str(p), text)], load_profile("vllm"))
    return [(f.field, f.message) for fs in res.values() if isinstance(fs, list) for f in fs]


def test_a_whole_buffer_reader_needs_the_rows_to_the_end_reset(tmp_path):
    # `scheduler_metadata` has `reads = "buffer"` in the vLLM profile: its consumer reads every row
    assert [f for f, _ in _whole(tmp_path, "")] == ["scheduler_metadata"]
    assert _whole(tmp_path, "        self.scheduler_metadata[n:] = 0\n") == []
    # a reset that stops at a padded count leaves the rows past it: not enough for this consumer
    assert [f for f, _ in _whole(tmp_path, "        self.scheduler_metadata[n:n_pad] = 0\n")] == ["scheduler_metadata"]
    assert [f for f, _ in _whole(tmp_path, "        self.scheduler_metadata[n:n_pad].fill_(0)\n")] == ["scheduler_metadata"]
    assert _whole(tmp_path, "        self.scheduler_metadata[n:].fill_(0)\n") == []
    # a reset through a view bounded at the padded count stops there too
    assert [f for f, _ in _whole(tmp_path, "        v = self.scheduler_metadata[:n_pad]\n        v[n:] = 0\n")] \
        == ["scheduler_metadata"]
    # the whole buffer handed over: rows past what this step wrote ([:n]) are read too
    assert [f for f, _ in _whole(tmp_path, "", arg="self.scheduler_metadata")] == ["scheduler_metadata"]
    assert _whole(tmp_path, "        self.scheduler_metadata[n:] = 0\n", arg="self.scheduler_metadata") == []


def test_a_whole_buffer_reader_message_names_the_rows_to_the_end(tmp_path):
    ((_, message),) = _whole(tmp_path, "", arg="self.scheduler_metadata[:n + 1]")
    assert "rows [n + 1:] may be stale" in message and "shape[0] + 1" not in message
