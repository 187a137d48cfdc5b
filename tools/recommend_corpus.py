#!/usr/bin/env python3
"""Writes the golden corpus of recommendation requests (tests/golden/recommend_corpus/).

Every workload kind, every objective and a rotation of constraints, so that a change made for
speed that changes any answer shows up as a changed digest in RecommendCorpusTest. The list is
deterministic: rerunning this script rewrites the same file.

  tools/recommend_corpus.py > tests/golden/recommend_corpus/requests.jsonl
"""
import itertools
import json

WORKLOADS = [
    {"kind": "train", "model": "Llama-3.1-8B", "tokens": 1e9},
    {"kind": "train", "model": "Llama-3.1-70B", "tokens": 1e10, "max_nodes": 4},
    {"kind": "train", "model": "Llama-3.1-8B", "steps": 1000, "batch": 64, "seq_len": 4096,
     "zero": 3},
    {"kind": "train", "model": "GPT-2 XL", "tokens": 5e9, "fsdp": True, "recompute": "selective"},
    {"kind": "train", "model": "Mixtral-8x7B", "tokens": 2e9, "max_nodes": 2},
    {"kind": "lora", "model": "Llama-3.1-8B", "seq_len": 2048, "recompute": "full",
     "tokens": 5e7},
    {"kind": "lora", "model": "Mistral-7B-v0.1", "tokens": 2e7, "lora_rank": 64,
     "lora_targets": "all"},
    {"kind": "qlora", "model": "Llama-2-13B", "tokens": 5e7},
    {"kind": "qlora", "model": "Qwen2.5-72B", "tokens": 1e7},
    {"kind": "train", "model": "ResNet-50", "epochs": 10, "dataset_samples": 1281167},
    {"kind": "train", "model": "BERT-base-uncased", "samples": 1e7},
    {"kind": "train", "model": "ViT-B/16", "epochs": 5, "dataset_samples": 1281167,
     "data_type": "image"},
    {"kind": "inference", "model": "Llama-3.1-8B", "tokens": 1e8},
    {"kind": "inference", "model": "Mistral-7B-v0.1", "tokens": 2e8, "precision": "int4"},
    {"kind": "inference", "model": "SDXL", "samples": 10000},
    {"kind": "inference", "model": "Whisper-large-v3", "samples": 50000},
    {"kind": "serve", "model": "Llama-2-13B", "precision": "fp16", "request_rate": 30,
     "ttft_target_ms": 1000},
    {"kind": "serve", "model": "Llama-3.1-8B", "request_rate": 5, "prompt_tokens": 2000,
     "output_tokens": 300, "tpot_target_ms": 50},
    {"kind": "serve", "model": "Llama-3.1-70B", "request_rate": 2, "engine": "tensorrt-llm"},
    {"kind": "render", "frames": 1000, "seconds_per_frame": 60, "reference_gpu": "A100-80GB"},
    {"kind": "realtime", "streams": 10, "session_profile": "esports"},
    {"kind": "cad", "streams": 20, "session_profile": "medium"},
    {"kind": "preprocess", "data_gb": 500},
    {"kind": "classic-ml", "algorithm": "gbdt", "rows": 1e8, "features": 100, "trees": 1000},
    {"kind": "classic-ml", "algorithm": "linear", "rows": 1e9, "features": 50},
    # Appended, so that the requests before keep their ids and constraints: llama.cpp's launch
    # queue over ggml's graph, Q4_K_M weights.
    {"kind": "serve", "model": "Llama-3-8B", "request_rate": 1, "engine": "llama.cpp",
     "precision": "int4", "weight_bits": 4.9},
]

OBJECTIVES = ["cheapest", "fastest", "balanced"]

CONSTRAINTS = [
    {},
    {"providers": ["aws", "gcp"], "pricing": ["ondemand"]},
    {"deadline_hours": 24, "budget": 500},
    {"exclude_gpus": ["H100"], "max_gpus": 8, "top": 5},
    {"gpus": ["A100-80GB"], "all_regions": True},
    {"include_cpu": False, "require_rdma": True, "pricing": ["ondemand", "spot", "reserved-1y"]},
    {"currency": "CNY", "top": 3, "max_spot_nodes": 2},
    {"providers": ["lambda", "azure"], "deadline_hours": 4, "exclude_costs": ["egress"]},
]


def main():
    n = 0
    for (w, workload), (o, objective) in itertools.product(enumerate(WORKLOADS),
                                                           enumerate(OBJECTIVES)):
        # Each workload meets every objective under three of the constraint sets, rotating so
        # that every set meets every kind.
        for k in range(3):
            constraints = CONSTRAINTS[(w + o * 3 + k) % len(CONSTRAINTS)]
            request = {"id": n, **workload, "objective": objective, "top": 2}
            request.update(constraints)
            print(json.dumps(request, sort_keys=False))
            n += 1


if __name__ == "__main__":
    main()
