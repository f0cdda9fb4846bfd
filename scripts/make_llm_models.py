"""Make small decoder LLMs the two ways people export them, from random weights (no download).

    python scripts/make_llm_models.py OUT            # the tiny ones (seconds each)
    python scripts/make_llm_models.py OUT --big      # and a 2.3 GB dynamo Llama

Needs torch (CPU build), transformers, onnxscript and onnxruntime-genai, which the project
itself does not depend on: tests that use these models skip when they are absent.

- ``genai-<family>-<precision>/``: onnxruntime-genai's model builder on a ``save_pretrained``
  checkpoint of a tiny config (2 layers, hidden 64, vocabulary 1000): GroupQueryAttention,
  MatMulNBits (int4), SkipSimplifiedLayerNormalization, RotaryEmbedding, genai_config.json.
- ``dynamo-llama/``: ``torch.onnx.export(dynamo=True, external_data=True)`` of a tiny Llama
  with its past key/values as inputs and the present ones as outputs.
- ``dynamo-llama-big/`` (``--big``): the same exporter on a Llama of ~570 M parameters
  (2.3 GB of weights, 10 layers).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

VOCAB = 1000
TINY = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": VOCAB,
        "max_position_embeddings": 256}
BIG = {"hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 10,
       "num_attention_heads": 32, "num_key_value_heads": 4, "vocab_size": 32000,
       "max_position_embeddings": 2048}
GENAI = [("llama", "int4"), ("llama", "fp32"), ("qwen2", "int4"), ("phi3", "int4"),
         ("mistral", "fp32")]


def _config(family: str, sizes: dict[str, int]) -> Any:
    import transformers

    cls = {"llama": transformers.LlamaConfig, "qwen2": transformers.Qwen2Config,
           "phi3": transformers.Phi3Config, "mistral": transformers.MistralConfig}[family]
    config = cls(**sizes, bos_token_id=1, eos_token_id=2, pad_token_id=0,
                 tie_word_embeddings=False)
    if family == "phi3":  # the builder takes a longer context as Phi-3's LongRoPE variant
        config.original_max_position_embeddings = sizes["max_position_embeddings"]
    return config


def _tokenizer(folder: Path) -> None:
    """A word-level tokenizer over VOCAB made-up words: the builder copies one along."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<pad>": 0, "<s>": 1, "</s>": 2, "<unk>": 3}
    vocab.update({f"w{i}": i for i in range(4, VOCAB)})
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=core, bos_token="<s>", eos_token="</s>",
                            unk_token="<unk>", pad_token="<pad>").save_pretrained(folder)


def checkpoint(family: str, folder: Path, sizes: dict[str, int] = TINY) -> Path:
    """A random-weight ``save_pretrained`` checkpoint (seeded) with a tokenizer."""
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(_config(family, sizes))
    model.save_pretrained(folder)
    _tokenizer(folder)
    return folder


def genai(family: str, precision: str, out: Path) -> Path:
    """onnxruntime-genai's builder, as its README runs it, on a tiny checkpoint."""
    target = out / f"genai-{family}-{precision}"
    with tempfile.TemporaryDirectory() as tmp:
        source = checkpoint(family, Path(tmp) / "checkpoint")
        subprocess.run([sys.executable, "-m", "onnxruntime_genai.models.builder",
                        "-i", str(source), "-o", str(target), "-p", precision, "-e", "cpu",
                        "-c", str(Path(tmp) / "cache")], check=True,
                       stdout=subprocess.DEVNULL)
    return target


class _WithCache:
    """Flat past key/values in, logits and flat present key/values out (what the
    exporter sees), around a transformers causal LM and its DynamicCache."""

    @staticmethod
    def module(model: Any, layers: int) -> Any:
        import torch
        from transformers.cache_utils import DynamicCache

        class Wrapper(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.model = model

            def forward(self, input_ids: Any, attention_mask: Any, *past: Any) -> Any:
                cache = DynamicCache(config=self.model.config)
                for i in range(layers):
                    cache.update(past[2 * i], past[2 * i + 1], i)
                out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                                 past_key_values=cache, use_cache=True)
                present = []
                for i in range(layers):
                    layer = out.past_key_values.layers[i]
                    present += [layer.keys, layer.values]
                return (out.logits, *present)

        return Wrapper()


def dynamo(out: Path, name: str = "dynamo-llama", sizes: dict[str, int] = TINY) -> Path:
    """``torch.onnx.export(dynamo=True, external_data=True)`` with past key/values."""
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    config = _config("llama", sizes)
    model = AutoModelForCausalLM.from_config(config).eval()
    layers = sizes["num_hidden_layers"]
    heads = sizes["num_key_value_heads"]
    head = sizes["hidden_size"] // sizes["num_attention_heads"]
    batch, seq, past = 2, 3, 5  # distinct sizes above 1, so none is taken as fixed
    past_values = [torch.zeros(batch, heads, past, head) for _ in range(2 * layers)]
    args = (torch.zeros(batch, seq, dtype=torch.int64),
            torch.ones(batch, past + seq, dtype=torch.int64), *past_values)
    auto = torch.export.Dim.DYNAMIC  # the exporter finds mask = past + sequence itself
    past_names = [f"past_key_values.{i}.{kind}" for i in range(layers)
                  for kind in ("key", "value")]
    dynamic = {"input_ids": {0: auto, 1: auto}, "attention_mask": {0: auto, 1: auto},
               "past": tuple({0: auto, 2: auto} for _ in past_names)}
    wrapper = _WithCache.module(model, layers).eval()
    target = out / name
    target.mkdir(parents=True, exist_ok=True)
    with torch.no_grad():
        torch.onnx.export(
            wrapper, args, str(target / "model.onnx"), dynamo=True, external_data=True,
            input_names=["input_ids", "attention_mask", *past_names],
            output_names=["logits", *(n.replace("past_key_values", "present")
                                      for n in past_names)],
            dynamic_shapes={"input_ids": dynamic["input_ids"],
                            "attention_mask": dynamic["attention_mask"],
                            "past": dynamic["past"]}, optimize=True)
    (target / "config.json").write_text(json.dumps(config.to_dict(), indent=1, default=str))
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder to make the models in")
    parser.add_argument("--big", action="store_true", help="also the > 2 GB dynamo Llama")
    parser.add_argument("--only", default="", help="comma-separated names to make "
                        "(genai-llama-int4, dynamo-llama, dynamo-llama-big, ...)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    wanted = {w for w in args.only.split(",") if w}
    jobs: list[tuple[str, Any]] = [
        (f"genai-{f}-{p}", lambda f=f, p=p: genai(f, p, args.out)) for f, p in GENAI]
    jobs.append(("dynamo-llama", lambda: dynamo(args.out)))
    if args.big or "dynamo-llama-big" in wanted:
        jobs.append(("dynamo-llama-big", lambda: dynamo(args.out, "dynamo-llama-big", BIG)))
    for name, job in jobs:
        if wanted and name not in wanted:
            continue
        start = time.perf_counter()
        folder = job()
        print(f"{name}: {folder} ({time.perf_counter() - start:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
