#!/usr/bin/env python3
"""Training throughput and peak memory of a few zoo models on one GPU, on synthetic data.

The figures it prints are the measured side of a comparison with `cloudfit estimate` on a GPU the
estimator was never fitted on (bench/gpu/device_check.sh runs it on a lent GPU machine; the
results are recorded in tests/calibration/ with the software versions it prints). Nothing is
downloaded: every model is built from its published architecture with random weights, and every
input is random (zeros would flatter the tensor cores), so the step costs what a real step costs
apart from the data loader, which is left out on purpose.

Each step is forward, backward and the optimizer, in PyTorch's automatic mixed precision (the
model's weights in FP32, matrix work in FP16 with a loss scaler, or in BF16). Throughput lines look
like 'resnet50: 3012.4 samples/s' so that `cloudfit poc` and `cloudfit monitor` can read them; the
last line of each model is one JSON object with every figure. After the timed steps, one more
forward pass runs under a saved-tensor hook: the bytes of the distinct storages autograd keeps
for backward (parameters, buffers and the input batch left out; autocast's cached 16-bit weight
copies are in it), and what the forward pass left allocated, which adds the loss's tensors. They
are what `cloudfit estimate` calls activations, measured apart from the allocator's peak.
"""

import argparse
import json
import sys
import time

import torch


def saved_by_forward(model, loss_of, data, dtype):
    """(bytes autograd saves for backward, bytes the forward pass leaves allocated) of one
    forward pass; storages counted once, parameters, buffers and the inputs left out."""
    skip = {t.untyped_storage().data_ptr() for t in model.parameters()}
    skip |= {t.untyped_storage().data_ptr() for t in model.buffers()}
    inputs = data if isinstance(data, (tuple, list)) else (data,)
    skip |= {t.untyped_storage().data_ptr() for t in inputs}
    storages = {}

    def pack(t):
        storage = t.untyped_storage()
        if storage.data_ptr() not in skip:
            storages[storage.data_ptr()] = max(storages.get(storage.data_ptr(), 0),
                                               storage.nbytes())
        return t

    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with torch.autocast("cuda", dtype=dtype or torch.float32, enabled=dtype is not None):
            loss = loss_of(model, data)
    torch.cuda.synchronize()
    left = torch.cuda.memory_allocated() - before
    del loss
    return sum(storages.values()), left


def build(name):
    """Returns (model, make_batch, loss_of, is_language_model, optimizer_kind) for one model."""
    if name in ("resnet50", "vit_b_16"):
        import torchvision

        model = getattr(torchvision.models, name)()

        def make_batch(batch, seq_len):
            images = torch.randn(batch, 3, 224, 224, device="cuda")
            labels = torch.randint(0, 1000, (batch,), device="cuda")
            return images, labels

        def loss_of(model, data):
            images, labels = data
            return torch.nn.functional.cross_entropy(model(images), labels)

        return model, make_batch, loss_of, 0, "sgd"

    import transformers

    if name == "bert-large":
        config = transformers.BertConfig(
            hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
            intermediate_size=4096, vocab_size=30522, max_position_embeddings=512)
        cls = transformers.BertForMaskedLM
    elif name == "gpt2":
        config = transformers.GPT2Config()  # 124 M: 12 layers, 768 wide, 50,257 tokens
        cls = transformers.GPT2LMHeadModel
    elif name == "llama-3.2-1b":
        # Llama-3.2-1B's config.json: 16 layers, 2,048 wide, 32 heads, 8 KV heads, FFN 8,192,
        # 128,256 tokens, tied embeddings.
        config = transformers.LlamaConfig(
            hidden_size=2048, num_hidden_layers=16, num_attention_heads=32,
            num_key_value_heads=8, intermediate_size=8192, vocab_size=128256,
            max_position_embeddings=131072, rope_theta=500000.0, tie_word_embeddings=True)
        cls = transformers.LlamaForCausalLM
    else:
        raise SystemExit(f"--model: unknown '{name}'")
    try:
        model = cls._from_config(config, attn_implementation="sdpa")
    except (TypeError, AttributeError):
        model = cls(config)
    vocab = config.vocab_size

    def make_batch(batch, seq_len):
        return torch.randint(0, vocab, (batch, seq_len), device="cuda")

    def loss_of(model, ids):
        return model(input_ids=ids, labels=ids).loss

    return model, make_batch, loss_of, 1, "adamw"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True,
                        help="resnet50, vit_b_16, bert-large, gpt2, llama-3.2-1b")
    parser.add_argument("--batch", type=int, required=True, help="samples per step")
    parser.add_argument("--seq-len", type=int, default=0, help="tokens per sample (transformers)")
    parser.add_argument("--precision", choices=["fp16", "bf16", "tf32"], default="fp16")
    parser.add_argument("--channels-last", action="store_true",
                        help="CNNs: model and images in channels-last (NHWC) memory format")
    parser.add_argument("--warmup", type=int, default=8, help="untimed steps first")
    parser.add_argument("--steps", type=int, default=30, help="timed steps")
    parser.add_argument("--seconds", type=float, default=0,
                        help="instead of --steps: report every --report-every steps this long")
    parser.add_argument("--report-every", type=int, default=10)
    args = parser.parse_args()

    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = args.precision == "tf32"
    torch.backends.cudnn.allow_tf32 = args.precision == "tf32"
    model, make_batch, loss_of, is_lm, optimizer_kind = build(args.model)
    model = model.cuda().train()
    if args.channels_last:
        if is_lm:
            raise SystemExit("--channels-last: only for the image models")
        model = model.to(memory_format=torch.channels_last)
    if optimizer_kind == "sgd":
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    else:
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(args.precision)
    scaler = torch.amp.GradScaler("cuda", enabled=dtype == torch.float16)
    data = make_batch(args.batch, args.seq_len)
    if args.channels_last:
        data = (data[0].contiguous(memory_format=torch.channels_last), data[1])

    def step():
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=dtype or torch.float32, enabled=dtype is not None):
            loss = loss_of(model, data)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    tokens = args.seq_len if is_lm else 0

    def report(samples_per_s):
        line = f"{args.model}: {samples_per_s:.1f} samples/s"
        if tokens:
            line += f" ({samples_per_s * tokens:.0f} tokens/s)"
        print(line, flush=True)

    if args.seconds > 0:
        end = time.perf_counter() + args.seconds
        while time.perf_counter() < end:
            start = time.perf_counter()
            for _ in range(args.report_every):
                step()
            torch.cuda.synchronize()
            report(args.report_every * args.batch / (time.perf_counter() - start))
        return

    start = time.perf_counter()
    for _ in range(args.steps):
        step()
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    samples_per_s = args.steps * args.batch / seconds
    report(samples_per_s)
    gib = float(1 << 30)
    peak_allocated = torch.cuda.max_memory_allocated()
    peak_reserved = torch.cuda.max_memory_reserved()
    optimizer.zero_grad(set_to_none=True)
    saved, left = saved_by_forward(model, loss_of, data, dtype)
    print(json.dumps({
        "model": args.model, "batch": args.batch, "seq_len": args.seq_len,
        "precision": args.precision, "optimizer": optimizer_kind,
        "memory_format": "channels_last" if args.channels_last else "channels_first",
        "samples_per_s": round(samples_per_s, 2),
        "tokens_per_s": round(samples_per_s * tokens, 1) if tokens else None,
        "step_ms": round(1000 * seconds / args.steps, 3),
        "peak_allocated_gib": round(peak_allocated / gib, 3),
        "peak_reserved_gib": round(peak_reserved / gib, 3),
        "saved_for_backward_gib": round(saved / gib, 3),
        "forward_left_allocated_gib": round(left / gib, 3),
        "params_m": round(sum(p.numel() for p in model.parameters()) / 1e6, 2),
        "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
        "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
    }), flush=True)


if __name__ == "__main__":
    sys.exit(main())
