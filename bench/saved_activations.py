#!/usr/bin/env python3
"""What autograd keeps for backward, per sample, in the reference models of data/operators.csv.

One training forward pass of each torchvision model (ResNet-50, ResNet-18, ViT-B/16,
EfficientNet-B0), in FP32, with a saved-tensor hook that
records every tensor autograd saves for backward; storages are counted once (in-place results
and views share their input's), parameters and the input batch are left out. What remains is the
activation memory the backward pass holds, which `cloudfit estimate` models for a model with an
operator list (docs/estimation.md, "Memory per device"). Runs on the CPU: the saved tensors of a
graph are the same on any device, apart from what a library's kernels keep in their own
workspaces (cuDNN's batch norm keeps the same mean and inverse deviation as the CPU kernel).

Attention is PyTorch's unfused attention as the installed version runs it in training (1.13:
softmax and dropout materialised), to compare with `flash_attention: false`.

  python3 bench/saved_activations.py [--batch 2] > saved.csv

Prints CSV: model, torch and torchvision versions, batch, saved bytes per sample (FP32
activations, with the max-pool indices and any masks at their own sizes), and the count of
distinct saved activation storages.
"""

import argparse
import sys

import torch
import torchvision


MODELS = {
    # data/operators.csv name -> (torchvision builder, input shape of one sample)
    "ResNet-50": (torchvision.models.resnet50, (3, 224, 224)),
    "ResNet-18": (torchvision.models.resnet18, (3, 224, 224)),
    "ViT-B/16": (torchvision.models.vit_b_16, (3, 224, 224)),
    "EfficientNet-B0": (torchvision.models.efficientnet_b0, (3, 224, 224)),
}


def saved_bytes(build, shape, batch):
    torch.manual_seed(0)
    model = build()
    model.train()
    x = torch.randn(batch, *shape)
    skip = {p.storage().data_ptr() for p in model.parameters()}
    skip |= {b.storage().data_ptr() for b in model.buffers()}
    skip.add(x.storage().data_ptr())
    storages = {}

    def pack(t):
        s = t.storage()
        if s.data_ptr() not in skip:
            storages[s.data_ptr()] = max(storages.get(s.data_ptr(), 0), s.nbytes())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    del out
    return sum(storages.values()) / batch, len(storages)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=2, help="samples per forward pass")
    args = parser.parse_args()
    if args.batch < 1 or args.batch > 64:
        print("error: --batch must be 1-64", file=sys.stderr)
        return 2
    print("model,torch,torchvision,batch,saved_bytes_per_sample,saved_storages")
    for name, (build, shape) in MODELS.items():
        saved, count = saved_bytes(build, shape, args.batch)
        print(f"{name},{torch.__version__},{torchvision.__version__},{args.batch},"
              f"{saved:.0f},{count}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
