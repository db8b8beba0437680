"""PAD002 (pad value differs from the consumer's contract): engine facts, messages, fixes.

Each source is a minimal runner written for the case; the expected findings
are reasoned in the comment next to it.  `run` returns the findings of one
file analysed with a profile (vLLM unless said).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from padlint.analysis import check_source
from padlint.fix import FixError, apply_fixes
from padlint.model import Fix
from padlint.profile import load_profile

from .test_project_fixtures import _env, expectations, reported

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "rules" / "PAD002"
VLLM = load_profile("vllm")
SGLANG = load_profile("sglang")


def run(src: str, profile=VLLM, path="r.py"):
    return check_source(textwrap.dedent(src), path, profile)


def only(findings, code="PAD002"):
    found = [f for f in findings if f.code == code]
    assert len(found) == 1, [f"{f.code} {f.line} {f.message}" for f in findings]
    return found[0]


def line_of(src: str, text: str) -> int:
    return next(i for i, line in enumerate(textwrap.dedent(src).split("\n"), 1) if text in line)


HEAD = """\
from vllm.v1.attention.backend import CommonAttentionMetadata


class Runner:
"""


# ---------------------------------------------------------------------------
# the split from PAD001


def test_wrong_reset_is_pad002_at_the_reset_and_not_pad001():
    # The fill covers rows [num_reqs:num_reqs_padded]: not stale, so no PAD001; -1 is not the
    # block table's neutral value NULL_BLOCK_ID (0): PAD002 on the fill's value, once.
    src = HEAD + """\
    def build(self, num_reqs, num_reqs_padded):
        blk = self.block_table.get_device_tensor(num_reqs_padded)
        blk[num_reqs:num_reqs_padded].fill_(-1)
        return CommonAttentionMetadata(block_table_tensor=blk)
"""
    findings = run(src)
    assert [f.code for f in findings] == ["PAD002"]
    f = findings[0]
    assert (f.line, f.field, f.sink) == (line_of(src, "fill_(-1)"), "block_table_tensor", "CommonAttentionMetadata")
    row = textwrap.dedent(src).split("\n")[f.line - 1]
    assert row[f.column - 1:f.end_column - 1] == "-1"
    assert "writes -1 into the padding rows [num_reqs:num_reqs_padded]" in f.message
    assert "is NULL_BLOCK_ID (0) (the profile's [fields.block_table_tensor]" in f.message
    # the module does not import NULL_BLOCK_ID: the fix writes its value
    assert f.fix is not None and (f.fix.old, f.fix.text, f.fix.safe) == ("-1", "0", False)
    assert [s.note for s in f.trace][-1] == "reaches sink CommonAttentionMetadata as `block_table_tensor`"


def test_one_finding_per_reset_and_field_for_two_sinks():
    # One reset reaches two sinks as the same field: one finding (at the reset).
    src = HEAD + """\
    def build(self, num_reqs, num_reqs_padded):
        self.seq_lens[num_reqs:num_reqs_padded] = 3
        a = CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded])
        b = CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded])
        return a, b
"""
    f = only(run(src))
    assert f.line == line_of(src, "= 3")


def test_stale_rows_stay_pad001():
    # No write covers the padding rows: PAD001 as before, nothing for PAD002.
    src = HEAD + """\
    def build(self, num_reqs, num_reqs_padded):
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded])
"""
    assert [f.code for f in run(src)] == ["PAD001"]


def test_neutral_on_one_path_wrong_on_the_other():
    # The rows hold -1 on the `if` path, 0 on the other: the -1 write is reported, the 0 is not.
    src = HEAD + """\
    def build(self, num_reqs, num_reqs_padded, mamba):
        blk = self.block_table.get_device_tensor(num_reqs_padded)
        if mamba:
            blk[num_reqs:].fill_(-1)
        else:
            blk[num_reqs:].fill_(0)
        return CommonAttentionMetadata(block_table_tensor=blk)
"""
    findings = run(src)
    assert [(f.code, f.line) for f in findings] == [("PAD002", line_of(src, "fill_(-1)"))]
    assert findings[0].fix is not None  # one write per finding: its own value is replaced


def test_computed_value_is_trusted():
    src = HEAD + """\
    def build(self, num_reqs, num_reqs_padded):
        self.seq_lens[num_reqs:num_reqs_padded] = self.fill_value
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded])
"""
    assert run(src) == []


def test_zero_reset_of_slot_mapping_gets_a_fill_fix():
    # zero_() writes 0 where slot mappings pad with -1 (a live slot otherwise); the fix rewrites
    # the call; slot_mapping's consumer note (wraps_negative) is not said for a value >= 0.
    src = HEAD + """\
    def build(self, num_tokens, num_tokens_padded):
        sm = self.slot_mapping[:num_tokens_padded]
        sm[num_tokens:].zero_()
        return CommonAttentionMetadata(slot_mapping=sm)
"""
    f = only(run(src))
    assert f.fix is not None and f.fix.old == "sm[num_tokens:].zero_()" and f.fix.text == "sm[num_tokens:].fill_(-1)"
    assert "wraps" not in f.message
    fixed = apply_fixes(textwrap.dedent(src), [f.fix])
    assert "sm[num_tokens:].fill_(-1)\n" in fixed and run(fixed) == []


HELPER = HEAD + """\
    def build(self, num_tokens, num_tokens_padded):
        self._pad(self.slot_mapping, num_tokens, num_tokens_padded, {VALUE})
        return CommonAttentionMetadata(slot_mapping=self.slot_mapping[:num_tokens_padded])

    def _pad(self, buf, n, p, v):
        self._pad_rows(buf, n, p, v)

    def _pad_rows(self, buf, n, p, value):
        buf[n:p] = value
"""


def test_a_literal_handed_to_a_reset_helper_is_the_value_it_writes():
    # (2026-12-06) `_pad_rows` writes its parameter `value`, which both calls were given as the
    # literal 0: 0 is not slot_mapping's neutral -1.  The finding is at the literal of the first
    # call (the helpers write what each call passes), not at `buf[n:p] = value`; `_pad` hands the
    # value on, so the argument is not known to be its one use: no fix
    src = HELPER.replace("{VALUE}", "0")
    f = only(run(src))
    assert f.line == line_of(src, "self._pad(self.slot_mapping") and "writes 0" in f.message
    assert f.fix is None


def test_a_literal_a_helper_writes_once_gets_a_fix_at_the_call():
    # one helper writing its parameter once: the call's argument is the place to edit
    src = HELPER.replace("{VALUE}", "0").replace("self._pad(self.slot_mapping", "self._pad_rows(self.slot_mapping")
    f = only(run(src))
    assert f.line == line_of(src, "self._pad_rows(self.slot_mapping") and "writes 0" in f.message
    assert f.fix is not None and f.fix.old == "0" and f.fix.text == "-1"
    fixed = apply_fixes(textwrap.dedent(src), [f.fix])
    assert "num_tokens_padded, -1)" in fixed and run(fixed) == []


@pytest.mark.parametrize("value", [
    "-1",                 # the neutral value, through two helpers
    "self.pad_value",     # not a literal: accepted on trust, as a write of it in place is
])
def test_a_helper_given_the_neutral_or_a_computed_value_is_clean(value):
    assert run(HELPER.replace("{VALUE}", value)) == []


def test_a_helper_that_rebinds_its_parameter_writes_what_it_computed():
    # `value` is rebound before the write: the literal the call passed is not what is written
    src = HELPER.replace("{VALUE}", "0").replace(
        "        buf[n:p] = value", "        value = self.sentinel(value)\n        buf[n:p] = value")
    assert run(src) == []


def test_a_helper_that_rebinds_its_parameter_by_unpacking_or_with_writes_what_it_computed():
    for rebind in ("value, _ = self.sentinel(value), None", "with self.ctx(value) as value:\n            pass"):
        src = HELPER.replace("{VALUE}", "0").replace(
            "        buf[n:p] = value", f"        {rebind}\n        buf[n:p] = value")
        assert run(src) == [], rebind


def test_a_literal_written_into_two_fields_is_reported_without_a_fix():
    # 0 is right for seq_lens and wrong for slot_mapping: no one edit of the argument fits both
    src = HEAD + """\
    def build(self, num_tokens, num_tokens_padded):
        self._two(num_tokens, num_tokens_padded, 0)
        return CommonAttentionMetadata(slot_mapping=self.slot_mapping[:num_tokens_padded],
                                       seq_lens=self.seq_lens[:num_tokens_padded])

    def _two(self, n, p, value):
        self.slot_mapping[n:p] = value
        self.seq_lens[n:p] = value
"""
    f = only(run(src))
    assert f.field == "slot_mapping" and "writes 0" in f.message and f.fix is None


def test_a_true_handed_to_a_helper_that_writes_it_is_judged():
    # `is_prefilling` pads with False; the helper writes the True its call passed
    src = HEAD + """\
    def build(self, num_reqs, num_reqs_padded):
        self._pad(self.is_prefilling, num_reqs, num_reqs_padded, True)
        return CommonAttentionMetadata(is_prefilling=self.is_prefilling[:num_reqs_padded])

    def _pad(self, buf, n, p, v):
        buf[n:p] = v
"""
    f = only(run(src))
    assert f.field == "is_prefilling" and "writes True" in f.message


def test_mul_by_zero_is_a_zero_reset_with_no_value_to_edit():
    # `sm[n:].mul_(0)` leaves 0 in the padding rows, not slot_mapping's -1: PAD002, no fix (the
    # factor is no fill value; only `zero_()` is rewritten)
    src = HEAD + """\
    def build(self, num_tokens, num_tokens_padded):
        sm = self.slot_mapping[:num_tokens_padded]
        sm[num_tokens:].mul_(0)
        return CommonAttentionMetadata(slot_mapping=sm)
"""
    f = only(run(src))
    assert "writes 0" in f.message and f.fix is None


def test_named_constant_used_where_imported():
    src = """\
from vllm.v1.attention.backend import CommonAttentionMetadata
from vllm.v1.core.kv_cache_utils import NULL_BLOCK_ID
from vllm.v1.attention.backends.utils import PAD_SLOT_ID


class Runner:
    def build(self, num_reqs, num_reqs_padded):
        blk = self.block_table.get_device_tensor(num_reqs_padded)
        blk[num_reqs:] = PAD_SLOT_ID
        return CommonAttentionMetadata(block_table_tensor=blk)
"""
    f = only(run(src))
    assert "writes `PAD_SLOT_ID` (-1)" in f.message
    assert (f.fix.old, f.fix.text) == ("PAD_SLOT_ID", "NULL_BLOCK_ID")


# ---------------------------------------------------------------------------
# allocation fills


def test_allocation_fill_is_the_pad_value():
    # torch.full(..., -1) sized to the padded count; only [:num_reqs] written after: the padding
    # rows carry -1 to the sink.  Reported at the allocation, its fill argument replaced.
    src = HEAD.replace("from vllm", "import torch\nfrom vllm") + """\
    def build(self, num_reqs, num_reqs_padded, real):
        blk = torch.full((num_reqs_padded, 8), -1, dtype=torch.int32)
        blk[:num_reqs] = real
        return CommonAttentionMetadata(block_table_tensor=blk[:num_reqs_padded])
"""
    f = only(run(src))
    assert f.line == line_of(src, "torch.full") and "the allocation at line" in f.message
    assert (f.fix.old, f.fix.text) == ("-1", "0")


def test_allocation_fill_sized_to_the_real_count_has_no_padding_rows():
    # torch.full((num_reqs,), -1): a slice [:num_reqs_padded] of it has only num_reqs rows.
    src = HEAD.replace("from vllm", "import torch\nfrom vllm") + """\
    def build(self, num_reqs, num_reqs_padded):
        blk = torch.full((num_reqs, 8), -1)
        return CommonAttentionMetadata(block_table_tensor=blk[:num_reqs_padded])
"""
    assert run(src) == []


def test_persistent_buffer_reallocated_in_the_step_keeps_its_fill():
    # `self.blk = torch.ones(...)` in the step: the persistent location holds the fill (1), the
    # block table's neutral value is 0.
    src = HEAD.replace("from vllm", "import torch\nfrom vllm") + """\
    def build(self, num_reqs, num_reqs_padded):
        self.blk = torch.ones((num_reqs_padded, 8), dtype=torch.int32)
        return CommonAttentionMetadata(block_table_tensor=self.blk[:num_reqs_padded])
"""
    f = only(run(src))
    assert f.line == line_of(src, "torch.ones") and f.fix is None  # no literal argument to replace


# ---------------------------------------------------------------------------
# SGLang: per-backend values, index contracts, wrapping sentinels

SG_HEAD = """\
from types import SimpleNamespace


class Runner:
"""


def test_sglang_backend_cannot_be_told_says_what_it_assumes():
    # seq_lens pads with the backend's fill value: 1 on the CUDA backends (assumed), 0 on Ascend.
    src = SG_HEAD + """\
    def replay(self, raw_bs, bs):
        self.seq_lens[raw_bs:bs].fill_(0)
        return SimpleNamespace(seq_lens=self.seq_lens[:bs])
"""
    f = only(run(src, SGLANG))
    assert "this assumes the CUDA/ROCm/XPU attention backends" in f.message
    assert "(0 is the neutral value only under ascend, prefill_full_graph)" in f.message
    assert f.fix.text == "1"  # SEQ_LEN_FILL_VALUE is not a name of the module: its value


def test_sglang_backend_told_by_module(tmp_path):
    # The same reset in a module under hardware_backend/npu runs with the Ascend backend, whose
    # neutral value is 0: no finding; 1 there is reported as wrong under backend ascend.
    pkg = tmp_path / "sglang" / "srt" / "hardware_backend" / "npu"
    pkg.mkdir(parents=True)
    for d in (tmp_path / "sglang", tmp_path / "sglang" / "srt", tmp_path / "sglang" / "srt" / "hardware_backend", pkg):
        (d / "__init__.py").write_text("")
    good = SG_HEAD + """\
    def replay(self, raw_bs, bs):
        self.seq_lens[raw_bs:bs].fill_(0)
        return SimpleNamespace(seq_lens=self.seq_lens[:bs])
"""
    (pkg / "runner.py").write_text(good)
    assert check_source(good, str(pkg / "runner.py"), SGLANG) == []
    bad = good.replace("fill_(0)", "fill_(1)")
    (pkg / "runner.py").write_text(bad)
    f = only(check_source(bad, str(pkg / "runner.py"), SGLANG))
    assert "under backend ascend (module `sglang.srt.hardware_backend.npu.runner`)" in f.message
    assert "(1 is the neutral value only under default)" not in f.message


def test_negative_sentinel_in_a_wrapping_index_field_says_so():
    # out_cache_loc pads with slot 0; -1 written there is used as a torch index by set_kv_buffer
    # (wraps_negative in the profile): the message says it wraps to the last row.
    src = SG_HEAD + """\
    def replay(self, raw_num_token, num_tokens):
        self.out_cache_loc[raw_num_token:num_tokens].fill_(-1)
        return SimpleNamespace(out_cache_loc=self.out_cache_loc[:num_tokens])
"""
    f = only(run(src, SGLANG))
    assert "uses `out_cache_loc` as an index (mem_cache/memory_pool.py set_kv_buffer" in f.message
    assert "-1 wraps to the last row" in f.message


def test_index_field_without_contract_is_reported_once_as_unknown():
    # `kv_indices` matches the profile's index_fields and has no [fields] entry: its value cannot
    # be judged; reported once (two resets, two sinks), as a warning, without a fix.
    src = SG_HEAD + """\
    def replay(self, raw_bs, bs):
        self.kv_indices[raw_bs:bs].fill_(-1)
        a = SimpleNamespace(kv_indices=self.kv_indices[:bs])
        self.kv_indices[raw_bs:bs].fill_(7)
        b = SimpleNamespace(kv_indices=self.kv_indices[:bs])
        return a, b
"""
    f = only(run(src, SGLANG))
    assert f.severity == "warning" and f.fix is None and f.field == "kv_indices"
    assert "holds indices (the profile's index_fields: `*_indices`) but the profile gives it no neutral value" \
        in f.message


# ---------------------------------------------------------------------------
# the vLLM 0.19.1 shapes (fixtures/rules/PAD002), through the CLI


def fixture_dirs() -> list[Path]:
    return sorted(p for p in FIXTURES.iterdir() if p.is_dir() and p.name.endswith(("_buggy", "_fixed")))


def cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "padlint", *args], cwd=cwd, env=_env(), capture_output=True,
                          text=True, timeout=300)


@pytest.mark.parametrize("fixture", fixture_dirs(), ids=lambda p: p.name)
def test_pad002_fixture(fixture: Path):
    # buggy: block-table fill (1 finding), Mamba fill (1), GDN fills (2: one per field);
    # fixed: NULL_BLOCK_ID everywhere, nothing (see each module's docstring)
    expected = expectations(fixture)
    assert bool(expected) == fixture.name.endswith("_buggy")
    proc = cli(["check", ".", "--format", "json", "--no-cache"], fixture)
    assert proc.returncode in (0, 1), proc.stderr
    import json

    doc = json.loads(proc.stdout)
    assert doc["errors"] == []
    assert reported(doc) == expected


def test_fixtures_cover_the_three_shapes():
    names = {p.name for p in fixture_dirs()}
    assert names == {f"{s}_{v}" for s in ("block_table_runner", "mamba_builder", "gdn_builder")
                     for v in ("buggy", "fixed")}
    counts = Counter(code for d in fixture_dirs() for (_p, _l, code, _f) in expectations(d).elements())
    assert counts == Counter({"PAD002": 4})


def test_fix_diff_and_unsafe_fixes_on_a_copy(tmp_path: Path):
    work = tmp_path / "gdn"
    shutil.copytree(FIXTURES / "gdn_builder_buggy", work)
    module = work / "pkg" / "gdn_attn.py"
    before = module.read_text()
    # --fix without --unsafe-fixes: the fixes are unsafe, nothing is written
    proc = cli(["check", ".", "--fix", "--no-cache"], work)
    assert proc.returncode == 1 and module.read_text() == before
    # --diff shows both replacements and writes nothing
    proc = cli(["check", ".", "--diff", "--unsafe-fixes", "--no-cache"], work)
    assert module.read_text() == before
    assert proc.stdout.count("-            ") == 2 and proc.stdout.count(".fill_(0)") == 2
    # --fix --unsafe-fixes rewrites the two values, nothing else, and the rerun is clean
    proc = cli(["check", ".", "--fix", "--unsafe-fixes", "--no-cache"], work)
    after = module.read_text()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert after == before.replace("].fill_(PAD_SLOT_ID)", "].fill_(0)")
    assert cli(["check", ".", "--no-cache"], work).returncode == 0


# ---------------------------------------------------------------------------
# replacement fixes: never corrupt a file


def _rfix(line, col, end_col, old, text, path="f.py"):
    return Fix(path=path, line=line, indent="", text=text, description="", safe=False, column=col,
               end_line=line, end_column=end_col, old=old)


def test_replacement_checks_the_old_text():
    src = "x[n:].fill_(-1)\n"
    assert apply_fixes(src, [_rfix(1, 13, 15, "-1", "0")]) == "x[n:].fill_(0)\n"
    with pytest.raises(FixError, match="expected '-2' to replace, found '-1'"):
        apply_fixes(src, [_rfix(1, 13, 15, "-2", "0")])
    with pytest.raises(FixError, match="outside line"):
        apply_fixes(src, [_rfix(1, 13, 40, "-1", "0")])


def test_replacement_applied_twice_changes_nothing():
    src = "x[n:].fill_(-1)\n"
    fix = _rfix(1, 13, 15, "-1", "0")
    once = apply_fixes(src, [fix, fix])
    assert once == "x[n:].fill_(0)\n"
    # the span now reads the replacement (same width): applied already, nothing changes
    assert apply_fixes(once, [_rfix(1, 13, 14, "-1", "0")]) == once


def test_replacement_must_be_one_expression_and_result_must_parse():
    src = "x[n:].fill_(-1)\n"
    with pytest.raises(FixError, match="not an expression"):
        apply_fixes(src, [_rfix(1, 13, 15, "-1", "0)")])
    with pytest.raises(FixError, match="one expression on one line"):
        apply_fixes(src, [_rfix(1, 13, 15, "-1", "0\n1")])
    # an expression that is valid alone but breaks the statement around it
    with pytest.raises(FixError, match="does not parse"):
        apply_fixes("y = a.b\n", [_rfix(1, 5, 7, "a.", "1")])  # `y = 1b`


def test_overlapping_replacements_are_refused():
    src = "y = foo(-1)\n"
    with pytest.raises(FixError, match="overlap|differently"):
        apply_fixes(src, [_rfix(1, 5, 12, "foo(-1)", "bar"), _rfix(1, 9, 11, "-1", "0")])
    with pytest.raises(FixError, match="differently"):
        apply_fixes(src, [_rfix(1, 9, 11, "-1", "0"), _rfix(1, 9, 11, "-1", "1")])


def test_replacement_and_insertion_in_one_file_keep_crlf():
    src = "def f(x, n):\r\n    x[n:].fill_(-1)\r\n    return M(seq_lens=x)\r\n"
    insert = Fix(path="f.py", line=3, indent="    ", text="x[n:] = 0", description="")
    out = apply_fixes(src, [insert, _rfix(2, 17, 19, "-1", "0")])
    assert out == "def f(x, n):\r\n    x[n:].fill_(0)\r\n    x[n:] = 0\r\n    return M(seq_lens=x)\r\n"


def test_sarif_and_text_reporters_show_a_replacement():
    from padlint.reporters.sarif import _fix

    fix = _rfix(4, 13, 15, "-1", "0")
    region = _fix(fix)["artifactChanges"][0]["replacements"][0]
    assert region["deletedRegion"] == {"startLine": 4, "startColumn": 13, "endLine": 4, "endColumn": 15}
    assert region["insertedContent"] == {"text": "0"}


# ---------------------------------------------------------------------------
# the profile keys of the contract are validated strictly

from padlint.profile import ProfileError, profile_from_dict  # noqa: E402


def _profile(field: dict, **top):
    return profile_from_dict({"sinks": {"constructors": ["M"]}, "constants": {"NULL_BLOCK_ID": 0},
                              "fields": {"f": field}, **top}, "p.toml")


def test_profile_contract_keys_are_read():
    p = _profile({"neutral": 1, "kind": "index", "wraps_negative": True, "consumer": "k[loc]",
                  "assumed_backend": "cuda", "backends": {"npu": {"neutral": 0, "modules": ["pkg.npu.*"]}}},
                 index_fields=["*_loc"])
    spec = p.field_spec("f")
    assert (spec.kind, spec.wraps_negative, spec.consumer, spec.assumed_backend) == ("index", True, "k[loc]", "cuda")
    assert spec.neutral_in("pkg.npu.runner") == ("0", spec.backends[0])
    assert spec.neutral_in("pkg.cuda.runner") == ("1", None)
    assert p.is_index_field("f") and p.is_index_field("out_loc") and not p.is_index_field("seq_lens")


@pytest.mark.parametrize("field, top, message", [
    ({"neutral": 0, "kind": "indices"}, {}, "fields.f.kind: expected one of value, index, got 'indices'"),
    ({"neutral": 0, "wraps_negative": "yes"}, {}, "fields.f.wraps_negative: expected true or false"),
    ({"neutral": 0, "wraps_negative": True}, {}, "fields.f.wraps_negative: only an index field"),
    ({"neutral": 0, "backends": {"npu": {"modules": ["x"]}}}, {}, "fields.f.backends.npu: expected a table with neutral"),
    ({"neutral": 0, "backends": {"npu": {"neutral": "nope"}}, "assumed_backend": "c"}, {},
     "fields.f.backends.npu.neutral: expected a literal"),
    ({"neutral": 0, "backends": {"npu": {"neutral": 0, "modules": "pkg.*"}}, "assumed_backend": "c"}, {},
     "fields.f.backends.npu.modules: expected a list of non-empty strings"),
    ({"neutral": 0, "backends": {"npu": {"neutral": 0}}}, {}, "fields.f.assumed_backend: a field with per-backend"),
    ({"neutral": 0, "backends": {"npu": {"neutral": 0, "module": []}}, "assumed_backend": "c"}, {},
     "unknown key 'fields.f.backends.npu.module' (did you mean 'modules'?)"),
    ({"neutral": 0, "consumer": 3}, {}, "fields.f.consumer: expected a string"),
    ({"neutral": 0}, {"index_fields": "*_loc"}, "index_fields: expected a list of non-empty strings"),
])
def test_profile_contract_keys_are_validated(field, top, message):
    with pytest.raises(ProfileError) as info:
        _profile(field, **top)
    assert str(info.value).startswith("p.toml: ") and message in str(info.value), str(info.value)


def test_shipped_profiles_carry_the_contracts():
    # the real example: block tables and Mamba/GDN state indices pad with the null block
    for name in ("block_table_tensor", "state_indices_tensor", "state_indices_tensor_d",
                 "spec_state_indices_tensor", "non_spec_state_indices_tensor"):
        spec = VLLM.field_spec(name)
        assert (spec.neutral, spec.kind) == ("NULL_BLOCK_ID", "index"), name
    assert VLLM.field_spec("slot_mapping").wraps_negative
    # SGLang seq_lens: 1 assumed (CUDA backends), 0 under the Ascend modules
    spec = SGLANG.field_spec("seq_lens")
    assert spec.neutral_in("sglang.srt.model_executor.runner.decode_cuda_graph_runner") == ("SEQ_LEN_FILL_VALUE", None)
    assert spec.neutral_in("sglang.srt.hardware_backend.npu.graph_runner.npu_graph_runner")[0] == "0"
    assert SGLANG.field_spec("out_cache_loc").wraps_negative


def test_derived_mask_reset_with_the_wrong_value():
    # The canonical mask reset with True instead of False: every padding row is "prefilling";
    # reported at the reset, naming the variable the sink receives.
    src = HEAD + """\
    def build(self, num_reqs, num_reqs_padded):
        computed = self.input_batch.num_computed_tokens_cpu_tensor[:num_reqs_padded]
        prompt = self.input_batch.num_prompt_tokens_cpu_tensor[:num_reqs_padded]
        is_prefilling = computed < prompt
        is_prefilling[num_reqs:] = True
        return CommonAttentionMetadata(is_prefilling=is_prefilling)
"""
    f = only(run(src))
    assert f.line == line_of(src, "= True") and "of `is_prefilling`, passed as `is_prefilling=`" in f.message
    assert (f.fix.old, f.fix.text) == ("True", "False")


def test_kernel_tail_store_of_a_wrong_value(tmp_path: Path):
    # The kernel_tail_reset fixture (fixed) with its tail store writing 5 instead of 0 into
    # seq_lens: the rows are reset (no PAD001) with a wrong value: PAD002 at the launch.
    work = tmp_path / "k"
    shutil.copytree(ROOT / "fixtures" / "project" / "kernel_tail_reset_fixed", work)
    kernels = work / "pkg" / "kernels.py"
    text = kernels.read_text()
    assert text.count("tl.store(seq_lens_ptr + block, 0,") == 1
    kernels.write_text(text.replace("tl.store(seq_lens_ptr + block, 0,", "tl.store(seq_lens_ptr + block, 5,"))
    import json

    proc = cli(["check", ".", "--format", "json", "--no-cache"], work)
    doc = json.loads(proc.stdout)
    found = [(f["code"], f["field"]) for f in doc["findings"]]
    assert found == [("PAD002", "seq_lens")], found
    assert "stores 5 into the padding rows" in doc["findings"][0]["message"]
