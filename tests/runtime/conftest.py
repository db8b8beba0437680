"""Shared fixtures of the runtime-checker tests.

The toy runner (fixtures/runtime) is imported as top-level modules
``toy_common``, ``toy_runner_buggy``, ``toy_runner_fixed``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOY_DIR = ROOT / "fixtures" / "runtime"
if str(TOY_DIR) not in sys.path:
    sys.path.insert(0, str(TOY_DIR))

META = "toy_common:CommonAttentionMetadata"


def provider_of(variant: str) -> str:
    return f"toy_runner_{variant}:ToyModelRunner._build_attention_metadata"


@pytest.fixture
def install_toy():
    """install_toy(variant, mode, **kw) -> Checker, hooks on the toy runner; always uninstalled."""
    import padlint.runtime as pr

    if pr.installed() is not None:
        pytest.skip("padlint runtime hooks already installed by the environment (PADLINT_RUNTIME)")

    def _install(variant: str = "buggy", mode: str = "strict", **kw):
        kw.setdefault("provider", provider_of(variant))
        kw.setdefault("classes", [META])
        kw.setdefault("step", None)
        return pr.install("vllm", mode=mode, **kw)

    try:
        yield _install
    finally:
        try:
            pr.uninstall()
        except AssertionError:
            pass


def make_runner(variant: str, **kw):
    import importlib

    return importlib.import_module(f"toy_runner_{variant}").ToyModelRunner(**kw)
