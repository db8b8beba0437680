"""A nested function handed to another function, which calls it (a callback, a factory).

vLLM Model Runner V2's graph managers capture through a factory the caller defines in place:
``ModelCudaGraphManager.capture`` defines ``create_forward_fn(desc)``, which stages a dummy batch
(``prepare_inputs_to_capture``: attention metadata from the slot mappings) and returns the
forward to capture, and hands it to the base class, ``super().capture(create_forward_fn)``,
which calls it once per captured size.  A base that names no count and no sink (it only calls
what it is given) is followed when it is handed such a function, and the function runs as
where it was defined: the enclosing locals it names (the buffers, the managers) are the ones
it was taken with.  Written from scratch.
"""

from __future__ import annotations

from .project_files import check_files

MANAGER = '''\
class BaseManager:
    def __init__(self, sizes: list[int]) -> None:
        self.sizes = sizes

    def capture(self, create_forward_fn) -> None:
        for size in self.sizes:
            forward_fn = create_forward_fn(size)
            forward_fn()
'''

RUNNER = '''\
import torch

from pkg.manager import BaseManager


class CommonAttentionMetadata:
    def __init__(self, seq_lens, slot_mapping, num_reqs):
        self.seq_lens = seq_lens
        self.slot_mapping = slot_mapping
        self.num_reqs = num_reqs


class GraphManager(BaseManager):
    def capture(self, seq_lens_buf: torch.Tensor, slot_buf: torch.Tensor, model) -> None:
        def create_forward_fn(num_reqs_padded: int):
            {RESET}
            metadata = CommonAttentionMetadata(
                seq_lens=seq_lens_buf[:num_reqs_padded],
                slot_mapping=slot_buf[:num_reqs_padded],
                num_reqs=num_reqs_padded,
            )

            def forward_fn() -> None:
                model(metadata)

            return forward_fn

        super().capture({HANDED})


class Runner:
    def __init__(self, model, max_num_reqs: int) -> None:
        self.model = model
        self.seq_lens = torch.zeros(max_num_reqs, dtype=torch.int32)
        self.slot_mapping = torch.zeros(max_num_reqs, dtype=torch.int64)
        self.manager = GraphManager([8, 16])

    def execute_model(self, batch) -> None:
        num_reqs = batch.num_reqs
        self.seq_lens[:num_reqs].copy_(batch.seq_lens)
        self.slot_mapping[:num_reqs].copy_(batch.slot_mapping)

    def _dummy_run(self, num_reqs: int) -> None:
        self.manager.capture(self.seq_lens, self.slot_mapping, self.model)
'''


def _found(tmp_path, reset: str, handed: str = "create_forward_fn") -> list[tuple[str, int]]:
    files = {"pkg/__init__.py": "", "pkg/manager.py": MANAGER, "pkg/runner.py": RUNNER}
    got = check_files(tmp_path, files, ["pkg/runner.py"], {"RESET": reset, "HANDED": handed})
    return sorted((f.field, f.line) for f in got if f.code == "PAD001")


def test_the_handed_factory_runs_where_it_is_called(tmp_path):
    # the dummy run's capture stages rows [0:num_reqs_padded] of both buffers, which no write of
    # the dummy run reached: an earlier step's values, at the metadata arguments (lines
    # 18-19), reached only through `BaseManager.capture` calling what it was handed
    assert _found(tmp_path, "pass") == [("seq_lens", 18), ("slot_mapping", 19)]


def test_a_reset_inside_the_factory_covers_its_rows(tmp_path):
    assert _found(tmp_path, "seq_lens_buf.zero_(); slot_buf.fill_(-1)") == []


def test_only_what_the_factory_resets_is_covered(tmp_path):
    assert _found(tmp_path, "slot_buf.fill_(-1)") == [("seq_lens", 18)]


def test_a_factory_that_is_not_handed_on_is_not_run(tmp_path):
    # the base is handed something else: the factory never runs, nothing reaches the metadata
    assert _found(tmp_path, "pass", handed="None") == []
