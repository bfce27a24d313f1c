"""Convert sentence-transformers all-MiniLM-L6-v2 (safetensors) into a GGUF llama.cpp loads.

Why our own converter: llama.cpp's `convert_hf_to_gguf.py` needs torch and
transformers (gigabytes) and is not on PyPI; this model is small and fixed, so
a direct mapping with the `gguf` package is enough. The output reproduces the
layout llama.cpp's converter writes for this model (see
shared/reference/minilm-gguf-layout.txt): same keys and values, tensor names,
order, shapes and types.

The output is deterministic (no timestamps, fixed key and tensor order, numpy
rounding), so the catalog can pin its sha256.

Usage: python -m app.core.models.convert_minilm model.zip out.gguf [f16|q8_0]
"""

from __future__ import annotations

import json
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np

# The source files we need from the sentence-transformers folder / model.zip.
WEIGHTS = "model.safetensors"
TOKENIZER = "tokenizer.json"
CONFIG = "config.json"

# general.* values llama.cpp's converter derives from "nreimers/MiniLM-L6-H384-uncased"
# (the config's _name_or_path) and the parameter count; fixed for this model.
GENERAL_NAME = "MiniLM L6 H384 Uncased"
GENERAL_ORGANIZATION = "Nreimers"
GENERAL_SIZE_LABEL = "23M"

# llama.cpp's name for the BERT-uncased WordPiece pre-tokenizer (same hash as jina-v2-en).
TOKENIZER_PRE = "jina-v2-en"

# gguf token types (llama.cpp's SentencePieceTokenTypes).
TOKEN_NORMAL = 1
TOKEN_CONTROL = 3

# llama.cpp's LlamaFileType values for general.file_type.
FILE_TYPES = {"f16": 1, "q8_0": 7}

POOLING_MEAN = 1

# HF tensor name parts -> llama.cpp BERT tensor names.
_EMBEDDING_NAMES = {
    "embeddings.word_embeddings.weight": "token_embd.weight",
    "embeddings.position_embeddings.weight": "position_embd.weight",
    "embeddings.token_type_embeddings.weight": "token_types.weight",
    "embeddings.LayerNorm.weight": "token_embd_norm.weight",
    "embeddings.LayerNorm.bias": "token_embd_norm.bias",
}
_LAYER_NAMES = {
    "attention.self.query": "attn_q",
    "attention.self.key": "attn_k",
    "attention.self.value": "attn_v",
    "attention.output.dense": "attn_output",
    "attention.output.LayerNorm": "attn_output_norm",
    "intermediate.dense": "ffn_up",
    "output.dense": "ffn_down",
    "output.LayerNorm": "layer_output_norm",
}
# Not used for sentence embeddings (llama.cpp's converter drops them too).
_SKIPPED = {"embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias"}
# Embedding tables llama.cpp keeps in F32 whatever the file type.
_KEEP_F32 = {"position_embd.weight", "token_types.weight"}


def gguf_tensor_name(hf_name: str) -> str | None:
    """Map a HF BERT tensor name to llama.cpp's; None for tensors we drop."""
    name = hf_name.removeprefix("bert.")
    if name in _SKIPPED:
        return None
    if name in _EMBEDDING_NAMES:
        return _EMBEDDING_NAMES[name]
    parts = name.split(".")  # encoder.layer.N.<module...>.(weight|bias)
    if parts[:2] == ["encoder", "layer"] and len(parts) >= 5:
        module = ".".join(parts[3:-1])
        if module in _LAYER_NAMES:
            return f"blk.{int(parts[2])}.{_LAYER_NAMES[module]}.{parts[-1]}"
    raise ValueError(f"unexpected tensor in MiniLM weights: {hf_name}")


def _read_sources(source: Path | IO[bytes]) -> tuple[dict[str, Any], dict[str, Any], bytes]:
    """Return (config, tokenizer, safetensors bytes) from model.zip or a model folder."""
    if isinstance(source, Path) and source.is_dir():
        read = lambda name: (source / name).read_bytes()  # noqa: E731
        return _parse(read)
    with zipfile.ZipFile(source) as zf:
        return _parse(zf.read)


def _parse(read) -> tuple[dict[str, Any], dict[str, Any], bytes]:
    config = json.loads(read(CONFIG))
    tokenizer = json.loads(read(TOKENIZER))
    return config, tokenizer, read(WEIGHTS)


def _vocab(tokenizer: dict[str, Any]) -> tuple[list[str], list[int]]:
    """WordPiece vocab in llama.cpp's "phantom space" form, with token types.

    Special added tokens ([PAD], [UNK], [CLS], [SEP], [MASK]) are CONTROL and
    kept as is; "##" continuation pieces lose the prefix; every other piece
    starts a word and gets "▁" (U+2581) in front, as llama.cpp's BERT
    tokenizer expects.
    """
    vocab: dict[str, int] = tokenizer["model"]["vocab"]
    by_id = sorted(vocab.items(), key=lambda kv: kv[1])
    if [i for _, i in by_id] != list(range(len(by_id))):
        raise ValueError("tokenizer vocab ids are not contiguous")
    special = {t["id"] for t in tokenizer.get("added_tokens", []) if t.get("special")}
    tokens: list[str] = []
    types: list[int] = []
    for token, token_id in by_id:
        if token_id in special:
            tokens.append(token)
            types.append(TOKEN_CONTROL)
        else:
            tokens.append(token[2:] if token.startswith("##") else "\u2581" + token)
            types.append(TOKEN_NORMAL)
    return tokens, types


def _special_ids(tokenizer: dict[str, Any]) -> dict[str, int]:
    vocab = tokenizer["model"]["vocab"]
    return {name: vocab[f"[{name}]"] for name in ("PAD", "UNK", "CLS", "SEP", "MASK")}


def _tensors(weights: bytes, qtype: str) -> Iterator[tuple[str, np.ndarray, Any]]:
    """Yield (gguf name, data, raw dtype or None) in the safetensors' sorted order."""
    from gguf import GGMLQuantizationType
    from gguf.quants import quantize
    from safetensors.numpy import load

    hf = load(weights)
    for hf_name in sorted(hf):
        name = gguf_tensor_name(hf_name)
        if name is None:
            continue
        data = hf[hf_name].astype(np.float32)
        if data.ndim == 1 or name in _KEEP_F32:
            yield name, data, None  # norms, biases and small tables stay F32
        elif qtype == "q8_0":
            yield name, quantize(data, GGMLQuantizationType.Q8_0), GGMLQuantizationType.Q8_0
        else:
            yield name, data.astype(np.float16), None


def convert(source: Path | IO[bytes], dest: Path, qtype: str = "f16") -> Path:
    """Write a GGUF for all-MiniLM-L6-v2 to `dest` (overwritten).

    `source` is the sentence-transformers model.zip (path or open binary file)
    or an extracted model folder. `qtype` is "f16" (the reference layout) or
    "q8_0" (matrices quantized with gguf's quants, about half the size).
    """
    import gguf

    if qtype not in FILE_TYPES:
        raise ValueError(f"qtype must be one of {sorted(FILE_TYPES)}, not {qtype!r}")
    config, tokenizer, weights = _read_sources(source)
    tokens, token_types = _vocab(tokenizer)
    ids = _special_ids(tokenizer)
    lowercase = bool((tokenizer.get("normalizer") or {}).get("lowercase", True))

    writer = gguf.GGUFWriter(str(dest), "bert")  # writes general.architecture first
    # Keys in the same order as llama.cpp's converter writes them.
    writer.add_string("general.type", "model")
    writer.add_string("general.name", GENERAL_NAME)
    writer.add_string("general.organization", GENERAL_ORGANIZATION)
    writer.add_string("general.size_label", GENERAL_SIZE_LABEL)
    writer.add_uint32("bert.block_count", config["num_hidden_layers"])
    writer.add_uint32("bert.context_length", config["max_position_embeddings"])
    writer.add_uint32("bert.embedding_length", config["hidden_size"])
    writer.add_uint32("bert.feed_forward_length", config["intermediate_size"])
    writer.add_uint32("bert.attention.head_count", config["num_attention_heads"])
    writer.add_float32("bert.attention.layer_norm_epsilon", config["layer_norm_eps"])
    writer.add_uint32("general.file_type", FILE_TYPES[qtype])
    writer.add_bool("bert.attention.causal", False)
    writer.add_uint32("bert.pooling_type", POOLING_MEAN)
    writer.add_uint32("general.quantization_version", gguf.GGML_QUANT_VERSION)
    writer.add_uint32("tokenizer.ggml.token_type_count", config.get("type_vocab_size", 1))
    writer.add_string("tokenizer.ggml.model", "bert")
    writer.add_string("tokenizer.ggml.pre", TOKENIZER_PRE)
    writer.add_array("tokenizer.ggml.tokens", tokens)
    writer.add_array("tokenizer.ggml.token_type", token_types)
    writer.add_uint32("tokenizer.ggml.bos_token_id", ids["CLS"])
    writer.add_uint32("tokenizer.ggml.eos_token_id", ids["SEP"])
    writer.add_uint32("tokenizer.ggml.unknown_token_id", ids["UNK"])
    writer.add_uint32("tokenizer.ggml.seperator_token_id", ids["SEP"])  # sic: llama.cpp's key
    writer.add_uint32("tokenizer.ggml.padding_token_id", ids["PAD"])
    writer.add_uint32("tokenizer.ggml.mask_token_id", ids["MASK"])
    # The post-processor wraps every input as [CLS] ... [SEP].
    writer.add_bool("tokenizer.ggml.add_bos_token", True)
    writer.add_bool("tokenizer.ggml.add_eos_token", True)
    writer.add_bool("tokenizer.ggml.add_sep_token", False)
    writer.add_bool("tokenizer.ggml.normalizer.lowercase", lowercase)

    for name, data, raw_dtype in _tensors(weights, qtype):
        writer.add_tensor(name, data, raw_dtype=raw_dtype)

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return dest


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (2, 3):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    out = convert(Path(args[0]), Path(args[1]), args[2] if len(args) == 3 else "f16")
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
