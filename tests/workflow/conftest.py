"""Shared fixtures for the workflow tests (reporters, baseline, autofix, rule pages, hooks)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from padlint.model import Finding, Fix, TraceStep

DATA = Path(__file__).parent / "data"
#: tests/workflow -> tests -> repository root
REPO_ROOT = Path(__file__).resolve().parents[2]

#: Marks the skip reason of the SARIF schema tests, so that the terminal summary can count them.
SCHEMA_SKIP = "no SARIF schema"


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Say in the summary that the SARIF schema tests did not run (a fresh clone without ../shared/data):
    `-q` lists no skip reasons, and "N skipped" alone does not say which tests."""
    skipped = [r for r in terminalreporter.stats.get("skipped", [])
               if SCHEMA_SKIP in str(getattr(r, "longrepr", ""))]
    if skipped:
        terminalreporter.write_line(
            f"padlint: {len(skipped)} SARIF schema test{'s' if len(skipped) != 1 else ''} skipped: "
            f"sarif-schema-2.1.0.json not found in ../shared/data beside the repository "
            f"(set PADLINT_SARIF_SCHEMA to its path to run them)", yellow=True, bold=True)


#: data/runner_buggy.py, line by line: the sink statement `meta = CommonAttentionMetadata(` is
#: line 12 (after the comment on line 11), the `is_prefilling=is_prefilling,` argument line 14,
#: columns 13..40 (1-based, end exclusive: the 27 characters of `is_prefilling=is_prefilling`).
BUGGY_PATH = "tests/workflow/data/runner_buggy.py"


def canonical_finding(**changes) -> Finding:
    """A hand-built PAD001 finding for data/runner_buggy.py, as the analysis is specified to report it."""
    f = Finding(
        code="PAD001",
        path=BUGGY_PATH,
        line=14,
        column=13,
        end_line=14,
        end_column=40,
        message="`is_prefilling` passed to `CommonAttentionMetadata(is_prefilling=...)` may hold stale "
                "padding rows [num_reqs:num_reqs_padded]",
        severity="error",
        sink="CommonAttentionMetadata",
        field="is_prefilling",
        buffer="self.input_batch.num_computed_tokens_cpu_tensor[:num_reqs_padded]",
        padded="num_reqs_padded",
        real="num_reqs",
        trace=(
            TraceStep(BUGGY_PATH, 8, "padded slice of `self.input_batch.num_computed_tokens_cpu_tensor` "
                                     "(rows [num_reqs:num_reqs_padded] may be stale)"),
            TraceStep(BUGGY_PATH, 10, "`is_prefilling` derived from the padded slices"),
            TraceStep(BUGGY_PATH, 14, "passed to `CommonAttentionMetadata(is_prefilling=...)`"),
        ),
        fix=Fix(path=BUGGY_PATH, line=12, indent="        ", text="is_prefilling[num_reqs:] = False",
                description="Reset the padding rows of `is_prefilling` to False"),
        statement="meta = CommonAttentionMetadata( num_reqs=num_reqs_padded, is_prefilling=is_prefilling, )",
        function="GPUModelRunner._build_attention_metadata",
    )
    return replace(f, **changes)


@pytest.fixture
def finding() -> Finding:
    return canonical_finding()
