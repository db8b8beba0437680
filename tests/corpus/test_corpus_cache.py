"""The corpus cache helper, on small hand-made wheels (no network).

A wheel is a zip file; these tests build one holding a few `vllm/` files,
some of them not Python, and check what `tests/corpus_cache.py` extracts,
where, and what it leaves behind.
"""

from __future__ import annotations

import importlib.util
import sys
import zipfile
from pathlib import Path

import pytest

_HELPER = Path(__file__).resolve().parents[1] / "corpus_cache.py"


def _load():
    spec = importlib.util.spec_from_file_location("padlint_tests_corpus_cache_unit", _HELPER)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


cc = _load()

RUNNER_TEXT = "class GPUModelRunner:\n    pass\n"


def make_wheel(path: Path, extra: dict[str, str] | None = None) -> Path:
    """A minimal fake vLLM wheel at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    files = {
        "vllm/__init__.py": "",
        "vllm/v1/worker/gpu_model_runner.py": RUNNER_TEXT,
        "vllm/_C.abi3.so": "binary",
        "vllm/py.typed": "",
        "vllm-0.0.1.dist-info/METADATA": "Name: vllm\n",
        "other/setup.py": "print('not vllm')\n",
    }
    files.update(extra or {})
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return path


def test_cache_root_honours_env(monkeypatch, tmp_path):
    monkeypatch.setenv("PADLINT_CORPUS_DIR", str(tmp_path / "c"))
    assert cc.cache_root() == tmp_path / "c"
    assert cc.tree_dir("1.2.3") == tmp_path / "c" / "vllm-1.2.3"
    monkeypatch.delenv("PADLINT_CORPUS_DIR")
    assert cc.cache_root() == Path.home() / ".cache" / "padlint-corpus"


def test_seed_wheel_extracts_only_vllm_python_and_is_kept(tmp_path):
    seed = tmp_path / "seed"
    wheel = make_wheel(seed / "wheels" / "vllm-0.0.1-cp38-abi3-manylinux_2_28_x86_64.whl")
    root = tmp_path / "cache"
    target = cc.ensure_vllm("0.0.1", root, seed=str(seed))
    assert target == root / "vllm-0.0.1"
    files = sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file())
    assert files == [".complete", "vllm/__init__.py", "vllm/v1/worker/gpu_model_runner.py"]
    assert (target / cc.RUNNER).read_text() == RUNNER_TEXT
    assert wheel.is_file(), "a seed wheel is never deleted"
    assert sorted(p.name for p in root.iterdir()) == ["vllm-0.0.1"], "no temporary leftovers"


def test_seed_tree_is_copied(tmp_path):
    seed = tmp_path / "seed"
    runner = seed / "vllm-0.0.2" / "vllm" / "v1" / "worker" / "gpu_model_runner.py"
    runner.parent.mkdir(parents=True)
    runner.write_text(RUNNER_TEXT)
    (runner.parent / "notes.txt").write_text("skip me")
    target = cc.ensure_vllm("0.0.2", tmp_path / "cache", seed=str(seed))
    assert (target / cc.RUNNER).read_text() == RUNNER_TEXT
    assert not (target / "vllm" / "v1" / "worker" / "notes.txt").exists()


def test_download_path_deletes_the_wheel_and_is_idempotent(tmp_path, monkeypatch):
    calls = []

    def fake_download(version, dest):
        calls.append(version)
        return make_wheel(dest / f"vllm-{version}-cp38-abi3-manylinux_2_28_x86_64.whl")

    monkeypatch.setattr(cc, "_download", fake_download)
    root = tmp_path / "cache"
    target = cc.ensure_vllm("0.0.3", root, seed="")
    assert calls == ["0.0.3"]
    assert cc.is_extracted("0.0.3", root)
    assert not list(root.rglob("*.whl")), "the downloaded wheel is removed after extraction"
    # Second call: already extracted, nothing fetched.
    assert cc.ensure_vllm("0.0.3", root, seed="") == target
    assert calls == ["0.0.3"]


def test_seed_without_the_version_falls_back_to_download(tmp_path, monkeypatch):
    monkeypatch.setattr(cc, "_download", lambda version, dest: make_wheel(dest / f"vllm-{version}-x.whl"))
    seed = tmp_path / "seed"
    seed.mkdir()
    target = cc.ensure_vllm("0.0.4", tmp_path / "cache", seed=str(seed))
    assert (target / cc.RUNNER).is_file()


def test_incomplete_tree_is_replaced(tmp_path, monkeypatch):
    monkeypatch.setattr(cc, "_download", lambda version, dest: make_wheel(dest / f"vllm-{version}-x.whl"))
    root = tmp_path / "cache"
    stale = root / "vllm-0.0.5" / "vllm" / "half_written.py"
    stale.parent.mkdir(parents=True)
    stale.write_text("")
    target = cc.ensure_vllm("0.0.5", root, seed="")
    assert not stale.exists()
    assert (target / cc.RUNNER).is_file()


def test_unsafe_member_names_are_skipped(tmp_path):
    seed = tmp_path / "seed"
    make_wheel(seed / "vllm-0.0.6-x.whl", {"vllm/../../escape.py": "x = 1\n"})
    root = tmp_path / "cache"
    cc.ensure_vllm("0.0.6", root, seed=str(seed))
    assert not list(tmp_path.rglob("escape.py"))


def test_wheel_without_runner_is_an_error(tmp_path):
    seed = tmp_path / "seed"
    seed.mkdir()
    with zipfile.ZipFile(seed / "vllm-0.0.7-x.whl", "w") as zf:
        zf.writestr("vllm/__init__.py", "")
    with pytest.raises(cc.CorpusError, match="gpu_model_runner.py missing"):
        cc.ensure_vllm("0.0.7", tmp_path / "cache", seed=str(seed))
    assert not cc.is_extracted("0.0.7", tmp_path / "cache")


def test_failed_download_is_an_error(tmp_path, monkeypatch):
    class Proc:
        returncode = 1
        stdout = ""
        stderr = "ERROR: No matching distribution found for vllm==0.0.8"

    monkeypatch.setattr(cc.subprocess, "run", lambda *a, **k: Proc())
    with pytest.raises(cc.CorpusError, match="No matching distribution"):
        cc.ensure_vllm("0.0.8", tmp_path / "cache", seed="")


def make_sglang_wheel(path: Path) -> Path:
    """A minimal fake SGLang wheel (pure Python, like the real ones)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("sglang/__init__.py", "")
        zf.writestr("sglang/srt/model_executor/model_runner.py", RUNNER_TEXT)
        zf.writestr("sglang/srt/README.md", "not python")
        zf.writestr("sglang-0.0.9.dist-info/METADATA", "Name: sglang\n")
    return path


def test_sglang_download_extracts_only_sglang_python(tmp_path, monkeypatch):
    calls = []

    def fake_download(version, dest, package="vllm"):
        calls.append((package, version))
        return make_sglang_wheel(dest / f"sglang-{version}-py3-none-any.whl")

    monkeypatch.setattr(cc, "_download", fake_download)
    root = tmp_path / "cache"
    target = cc.ensure_sglang("0.0.9", root, seed="")
    assert target == root / "sglang-0.0.9"
    assert calls == [("sglang", "0.0.9")]
    files = sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file())
    assert files == [".complete", "sglang/__init__.py", "sglang/srt/model_executor/model_runner.py"]
    assert cc.is_extracted("0.0.9", root, package="sglang")
    assert not cc.is_extracted("0.0.9", root), "the vLLM entry of the same version is another directory"
    assert not list(root.rglob("*.whl"))


def _pip_commands(monkeypatch, wheel_name: str, make) -> list:
    """Record the `pip download` commands `ensure` runs; each "downloads" ``make``'s wheel."""
    seen = []

    class Proc:
        returncode = 0
        stdout = stderr = ""

    def fake_run(cmd, **kwargs):
        seen.append(cmd)
        make(Path(cmd[cmd.index("-d") + 1]) / wheel_name)
        return Proc()

    monkeypatch.setattr(cc.subprocess, "run", fake_run)
    return seen


def test_sglang_pip_command_has_no_platform_tags(tmp_path, monkeypatch):
    seen = _pip_commands(monkeypatch, "sglang-0.1.0-py3-none-any.whl", make_sglang_wheel)
    cc.ensure("sglang", "0.1.0", tmp_path / "cache", seed="")
    (cmd,) = seen
    assert cmd[-1] == "sglang==0.1.0"
    assert "--platform" not in cmd and "--no-deps" in cmd and ":all:" in cmd


def test_vllm_pip_command_takes_the_glibc_2_31_wheels(tmp_path, monkeypatch):
    # vLLM 0.18.1-0.20.x publish only `manylinux_2_31_x86_64` wheels; pip takes a --platform tag
    # with the older glibc tags below it, never a newer one, so 2_31 (or newer) must be named
    seen = _pip_commands(monkeypatch, "vllm-0.0.9-cp38-abi3-manylinux_2_31_x86_64.whl", make_wheel)
    cc.ensure("vllm", "0.0.9", tmp_path / "cache", seed="")
    (cmd,) = seen
    tags = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--platform"]
    newest = max(int(t.split("_")[2]) for t in tags if t.startswith("manylinux_2_"))
    assert newest >= 31 and "manylinux2014_x86_64" in tags
    assert cmd[-1] == "vllm==0.0.9"


def test_parse_spec():
    assert cc.parse_spec("0.21.0") == ("vllm", "0.21.0")
    assert cc.parse_spec("sglang==0.5.23") == ("sglang", "0.5.23")
    assert cc.parse_spec("sglang-0.5.2") == ("sglang", "0.5.2")
    assert cc.parse_spec("vllm==0.33.0") == ("vllm", "0.33.0")
