"""Cost of padlint's runtime checker on CPU: one metadata build, checks off and on.

Run:  .venv/bin/python benchmarks/runtime_bench.py [--reps N] [--json PATH]

A provider builds a metadata dataclass with 15 tensor fields (the vLLM
profile's field names; 14 int32, one of them 2-D, and one bool mask; 12
request-axis and 3 token-axis fields) sliced from persistent CPU buffers, for batches of 256,
1024 and 8192 rows (3/4 of them real, the rest padding rows).  Variants,
measured round-robin in the same process:

  plain       the same classes without padlint installed
  off         hooks installed, mode "off"
  strict      hooks installed, mode "strict", padding rows present (all clean)
  no-padding  strict, real count == padded count (nothing to examine)

Reported: median time per build (microseconds), overhead over "plain" per
build, and per checked field ((strict - no-padding) / fields examined per
build: the marginal cost of examining one field's padding rows).
Prints a table and exits 0 (benchmarks/run.py calls it with subprocess).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass

import torch


def _make_classes():
    @dataclass
    class Meta:
        query_start_loc: torch.Tensor
        query_start_loc_cpu: torch.Tensor
        seq_lens: torch.Tensor
        num_reqs: int
        num_actual_tokens: int
        block_table_tensor: torch.Tensor
        slot_mapping: torch.Tensor
        positions: torch.Tensor
        is_prefilling: torch.Tensor
        _seq_lens_cpu: torch.Tensor
        seq_lens_cpu_upper_bound: torch.Tensor
        dcp_local_seq_lens: torch.Tensor
        dcp_local_seq_lens_cpu: torch.Tensor
        _num_computed_tokens_cpu: torch.Tensor
        num_accepted_tokens: torch.Tensor
        num_decode_draft_tokens_cpu: torch.Tensor
        logits_indices_padded: torch.Tensor
        causal: bool = True

    class Runner:
        """Persistent buffers sized for ``rows`` requests and tokens, padding rows neutral."""

        def __init__(self, rows: int, device: str = "cpu") -> None:
            def buf(fill=0, extra=0):
                return torch.full((rows + extra,), fill, dtype=torch.int32, device=device)

            self.seq_lens = buf()
            self.query_start_loc = buf(extra=1)
            self.block_table = torch.zeros(rows, 16, dtype=torch.int32, device=device)
            self.slot_mapping = buf(-1)
            self.positions = buf()
            self.is_prefilling = torch.zeros(rows, dtype=torch.bool, device=device)
            self.num_accepted = buf(1)
            self.num_draft = buf(-1)
            self.logits_indices = buf()
            self.others = [buf() for _ in range(5)]

        def _build_attention_metadata(self, num_reqs, num_reqs_padded, num_tokens, num_tokens_padded):
            o = self.others
            return Meta(
                query_start_loc=self.query_start_loc[: num_reqs_padded + 1],
                query_start_loc_cpu=self.query_start_loc[: num_reqs_padded + 1],
                seq_lens=self.seq_lens[:num_reqs_padded],
                num_reqs=num_reqs_padded,
                num_actual_tokens=num_tokens_padded,
                block_table_tensor=self.block_table[:num_reqs_padded],
                slot_mapping=self.slot_mapping[:num_tokens_padded],
                positions=self.positions[:num_tokens_padded],
                is_prefilling=self.is_prefilling[:num_reqs_padded],
                _seq_lens_cpu=o[0][:num_reqs_padded],
                seq_lens_cpu_upper_bound=o[1][:num_reqs_padded],
                dcp_local_seq_lens=o[2][:num_reqs_padded],
                dcp_local_seq_lens_cpu=o[3][:num_reqs_padded],
                _num_computed_tokens_cpu=o[4][:num_reqs_padded],
                num_accepted_tokens=self.num_accepted[:num_reqs_padded],
                num_decode_draft_tokens_cpu=self.num_draft[:num_reqs_padded],
                logits_indices_padded=self.logits_indices[:num_tokens_padded],
            )

    return Meta, Runner


PlainMeta, PlainRunner = _make_classes()
HookedMeta, HookedRunner = _make_classes()
N_TENSOR_FIELDS = 15  # every tensor field of Meta is a profile field


def _median_us(fn, args, n):
    times = []
    for _ in range(n):
        t0 = time.perf_counter_ns()
        fn(*args)
        times.append(time.perf_counter_ns() - t0)
    return times


def bench(rows: int, reps: int, blocks: int, device: str = "cpu") -> dict:
    import padlint.runtime as pr

    real = rows * 3 // 4
    plain = PlainRunner(rows, device)
    hooked = HookedRunner(rows, device)
    chk = pr.current_checker()
    pad_args = (real, rows, real, rows)
    nopad_args = (rows, rows, rows, rows)
    samples = {"plain": [], "off": [], "strict": [], "no-padding": []}
    fields_before = chk.stats.fields_checked
    strict_builds = 0
    for _ in range(blocks):
        samples["plain"] += _median_us(plain._build_attention_metadata, pad_args, reps)
        chk.mode = "off"
        samples["off"] += _median_us(hooked._build_attention_metadata, pad_args, reps)
        chk.mode = "strict"
        before = chk.stats.fields_checked
        samples["strict"] += _median_us(hooked._build_attention_metadata, pad_args, reps)
        strict_builds += reps
        fields_per_build = (chk.stats.fields_checked - before) / reps
        samples["no-padding"] += _median_us(hooked._build_attention_metadata, nopad_args, reps)
        if device != "cpu":
            chk.flush()  # deferred device results: between blocks, not inside the timed builds
    med = {k: statistics.median(v) / 1000 for k, v in samples.items()}
    assert not chk.stats.violations, "benchmark buffers must be clean"
    del fields_before, strict_builds
    overhead = med["strict"] - med["plain"]
    return {
        "rows": rows, "real": real, "fields_checked_per_build": fields_per_build,
        "plain_us": med["plain"], "off_us": med["off"], "strict_us": med["strict"],
        "no_padding_us": med["no-padding"],
        "overhead_per_build_us": overhead,
        # marginal cost of examining one field: same hooks and provider call, with and without padding rows
        "per_field_us": (med["strict"] - med["no-padding"]) / fields_per_build if fields_per_build else float("nan"),
        "off_overhead_us": med["off"] - med["plain"],
        "no_padding_overhead_us": med["no-padding"] - med["plain"],
    }


def bench_device_path_on_cpu(rows: int, reps: int) -> float:
    """Median microseconds per field of the device path's build-time work (the byte gather of
    the padding rows) run on CPU tensors: its torch dispatch cost; on CUDA add the launch
    latency of one cat and one copy per object, and the host-side comparison when the result
    is read (not measured here)."""
    from padlint.runtime import checks

    real = rows * 3 // 4
    t = torch.zeros(rows, dtype=torch.int32)
    items = [(t, real, rows, 0)] * N_TENSOR_FIELDS
    times = _median_us(checks.pack_device_rows, (items,), reps)
    return statistics.median(times) / 1000 / N_TENSOR_FIELDS


def count_device_ops(rows: int = 1024) -> tuple[int, dict[str, int]]:
    """ATen operations the checker dispatches to check one metadata object of the benchmark's
    shape through the device code path (``Checker.force_device_path`` on CPU tensors, deferred
    policy; the same code as on CUDA except the final copy to pinned host memory, one more
    launch there).  Views launch no kernel; on CUDA every other op is one launch (``cat`` of up
    to 128 inputs is one batched kernel).  Returns (total, count per op name)."""
    from collections import Counter

    from torch.utils._python_dispatch import TorchDispatchMode

    import padlint.runtime as pr
    from padlint.runtime.checker import Checker
    from padlint.runtime.context import StepCounts

    runner = HookedRunner(rows)
    real = rows * 3 // 4
    spec = pr.runtime_spec("vllm", provider=None, classes=[], step=None)
    chk = Checker(spec, mode="record", cuda_policy="deferred")
    chk.force_device_path = True
    chk.register_class(HookedMeta)
    meta = HookedRunner._build_attention_metadata.__wrapped__(runner, real, rows, real, rows) \
        if hasattr(HookedRunner._build_attention_metadata, "__wrapped__") \
        else HookedRunner._build_attention_metadata(runner, real, rows, real, rows)
    ops: Counter = Counter()

    class Count(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            ops[str(func.overloadpacket.__name__)] += 1
            return func(*args, **(kwargs or {}))

    with Count():
        chk.check_object(meta, StepCounts(real, rows, real, rows, provider="bench"))
    chk.flush()
    return sum(ops.values()), dict(ops)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=400, help="builds per variant per block")
    ap.add_argument("--blocks", type=int, default=5, help="round-robin blocks")
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--cuda", action="store_true",
                    help="buffers on the GPU; checks with the given --cuda-policy; reports host syncs")
    ap.add_argument("--cuda-policy", default="deferred", choices=("deferred", "sync"))
    args = ap.parse_args(argv)

    import padlint.runtime as pr

    device = "cuda" if args.cuda else "cpu"
    if pr.installed() is not None:
        pr.uninstall()
    chk = pr.install("vllm", mode="strict", provider=f"{__name__}:HookedRunner._build_attention_metadata",
                     classes=[f"{__name__}:HookedMeta"], step=None,
                     cuda_policy=args.cuda_policy if args.cuda else "deferred")
    try:
        results = [bench(rows, args.reps, args.blocks, device) for rows in (256, 1024, 8192)]
        device_cpu = bench_device_path_on_cpu(1024, args.reps)
        syncs = chk.stats.host_syncs
    finally:
        pr.uninstall()

    where = f"CUDA {torch.cuda.get_device_name()}, cuda_policy={args.cuda_policy}" if args.cuda else "CPU"
    print(f"padlint runtime benchmark ({where}; torch {torch.__version__}, {torch.get_num_threads()} threads; "
          f"median of {args.reps * args.blocks} builds; 15 tensor fields, 3/4 of the rows real)")
    if args.cuda:
        print(f"host synchronisations caused by the checker: {syncs} "
              f"(deferred: only the end-of-block flushes, {3 * args.blocks}, may wait)")
    head = ("rows", "fields", "plain us", "off us", "strict us", "no-pad us", "+build us", "per field")
    print("  ".join(f"{h:>10}" for h in head))
    for r in results:
        row = (r["rows"], f"{r['fields_checked_per_build']:.0f}", f"{r['plain_us']:.2f}", f"{r['off_us']:.2f}",
               f"{r['strict_us']:.2f}", f"{r['no_padding_us']:.2f}", f"{r['overhead_per_build_us']:.2f}",
               f"{r['per_field_us']:.2f}")
        print("  ".join(f"{c:>10}" for c in row))
    print("+build: strict - plain (hooks, provider bookkeeping and all checks of one build); "
          "per field: (strict - no-pad) / fields, the cost of examining one field's padding rows; "
          "off: hooks installed in mode off (PADLINT_RUNTIME=off installs nothing, i.e. plain)")
    print(f"device path's byte gather run on CPU tensors (dispatch cost only): {device_cpu:.2f} us per field")
    total, per_op = count_device_ops()
    views = sum(n for op, n in per_op.items() if op in ("slice", "narrow", "view", "reshape", "_reshape_alias",
                                                            "expand", "alias", "movedim", "permute", "select",
                                                            "as_strided", "unsqueeze", "detach"))
    print(f"device path, one metadata object of {N_TENSOR_FIELDS} device fields: {total} ATen ops, {views} of "
          f"them views (no kernel), {total - views} launching ({', '.join(f'{k} x{v}' for k, v in sorted(per_op.items()))}); "
          f"on CUDA add the one copy to pinned host memory (target: at most 5 launches per object)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"results": results, "device_path_on_cpu_us_per_field": device_cpu,
                       "device_path_ops_per_object": per_op}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
