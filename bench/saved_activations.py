#!/usr/bin/env python3
"""What autograd keeps for backward, per sample, in the reference models of data/operators.csv.

One training forward pass of each torchvision model (ResNet-18/50/101/152, EfficientNet-B0/B4/B7
at their own resolutions, ViT-B/16 and ViT-L/16), in FP32, with a saved-tensor hook that
records every tensor autograd saves for backward; storages are counted once (in-place results
and views share their input's), parameters and the input batch are left out. What remains is the
activation memory the backward pass holds, which `cloudfit estimate` models for a model with an
operator list (docs/estimation.md, "Memory per device"). Runs on the CPU: the saved tensors of a
graph are the same on any device, apart from what a library's kernels keep in their own
workspaces (cuDNN's batch norm keeps the same mean and inverse deviation as the CPU kernel).

Attention is PyTorch's unfused attention as the installed version runs it in training (1.13:
softmax and dropout materialised), to compare with `flash_attention: false`.

  python3 bench/saved_activations.py [--batch 2] > saved.csv
  python3 bench/saved_activations.py --list ViT-B/16

Prints CSV: model, torch and torchvision versions, batch, saved bytes per sample (FP32
activations, with the max-pool indices and any masks at their own sizes), and the count of
distinct saved activation storages. With --list MODEL, one line per saved storage instead, in
the order autograd first saved it: bytes per sample, the saving tensor's shape and the autograd
node that produced it (None for statistics and masks a kernel returns beside its output).
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
    "ResNet-101": (torchvision.models.resnet101, (3, 224, 224)),
    "ResNet-152": (torchvision.models.resnet152, (3, 224, 224)),
    "EfficientNet-B4": (torchvision.models.efficientnet_b4, (3, 380, 380)),
    "EfficientNet-B7": (torchvision.models.efficientnet_b7, (3, 600, 600)),
    "ViT-L/16": (torchvision.models.vit_l_16, (3, 224, 224)),
}


def saved_storages(build, shape, batch):
    """The storages autograd saves in one training forward pass: data pointer -> (bytes, shape
    of the first tensor saved from it, name of that tensor's autograd node)."""
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
            node = type(t.grad_fn).__name__ if t.grad_fn is not None else None
            _, first_shape, first_node = storages.get(s.data_ptr(), (0, tuple(t.shape), node))
            bytes_ = max(storages.get(s.data_ptr(), (0,))[0], s.nbytes())
            storages[s.data_ptr()] = (bytes_, first_shape, first_node)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    del out
    return storages


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=2, help="samples per forward pass")
    parser.add_argument("--list", metavar="MODEL", choices=sorted(MODELS),
                        help="list every saved storage of this model instead")
    args = parser.parse_args()
    if args.batch < 1 or args.batch > 64:
        print("error: --batch must be 1-64", file=sys.stderr)
        return 2
    if args.list:
        build, shape = MODELS[args.list]
        print("bytes_per_sample,shape,autograd_node")
        for bytes_, first_shape, node in saved_storages(build, shape, args.batch).values():
            print(f"{bytes_ / args.batch:.0f},{'x'.join(map(str, first_shape))},{node}")
        return 0
    print("model,torch,torchvision,batch,saved_bytes_per_sample,saved_storages")
    for name, (build, shape) in MODELS.items():
        storages = saved_storages(build, shape, args.batch)
        saved = sum(bytes_ for bytes_, _, _ in storages.values()) / args.batch
        print(f"{name},{torch.__version__},{torchvision.__version__},{args.batch},"
              f"{saved:.0f},{len(storages)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
