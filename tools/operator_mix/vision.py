"""Operator mixes of the vision models: torchvision ResNets, EfficientNets and ViTs, Ultralytics
YOLOv8, the 2015 U-Net and NVIDIA's SSD300. Each builder walks the reference definition named in
its source constant and returns a Net."""

import math

from .net import TRAINING_ONLY, Map, Net, conv_out, make_divisible

TV_RESNET = "pytorch/vision@054e54c573ba:torchvision/models/resnet.py"
DLE_RESNET = ("NVIDIA/DeepLearningExamples@0c4310bf175a:"
              "PyTorch/Classification/ConvNets/image_classification/models/resnet.py")
TV_EFFNET = "pytorch/vision@07a929e8b851:torchvision/models/efficientnet.py"
TV_VIT = "pytorch/vision@07a929e8b851:torchvision/models/vision_transformer.py"
YOLO_YAML = "ultralytics/ultralytics@023641f5f0a4:ultralytics/cfg/models/v8/yolov8.yaml"
UNET_PAPER = "https://arxiv.org/abs/1505.04597 (Fig. 1)"
DLE_SSD = "NVIDIA/DeepLearningExamples@04099020ae68:PyTorch/Detection/SSD/ssd/model.py"


# ==== ResNet (torchvision v1.5 = NVIDIA DeepLearningExamples ResNet-50) ========================

def resnet_stem(net, prefix, size):
    """7x7/2 conv, BN, ReLU and 3x3/2 max-pool of a torchvision ResNet."""
    x = net.conv(f"{prefix}stem conv 7x7/2", Map(3, size, size), 64, 7, 2, 3)
    net.norm(f"{prefix}stem bn", x)
    net.act(f"{prefix}stem relu", x, in_place=True)
    y = Map(64, conv_out(x.h, 3, 2, 1), conv_out(x.w, 3, 2, 1))
    net.maxpool(f"{prefix}stem maxpool 3x3/2", x.e, y.e)
    return y


def resnet_stage(net, prefix, x, blocks, planes, stride, bottleneck=True):
    """One torchvision ResNet stage (v1.5: the stride sits on the 3x3 conv); blocks 2..n are
    identical and share rows."""
    cout = planes * (4 if bottleneck else 1)
    for b in range(blocks):
        s = stride if b == 0 else 1
        tag = f"{prefix} block1" if b == 0 else f"{prefix} blocks2-{blocks}"
        # Where conv1 and conv2 write maps of one size, their BN and ReLU share a row.
        one, two = ("1+2", "1+2") if s == 1 else ("1", "2")
        if bottleneck:
            h = net.conv(f"{tag} conv1 1x1", x, planes, 1)
            net.norm(f"{tag} bn{one}", h)
            net.act(f"{tag} relu{one}", h, in_place=True)
            h = net.conv(f"{tag} conv2 3x3" + ("/2" if s == 2 else ""), h, planes, 3, s)
            net.norm(f"{tag} bn{two}", h)
            net.act(f"{tag} relu{two}", h, in_place=True)
            h = net.conv(f"{tag} conv3 1x1", h, cout, 1)
            net.norm(f"{tag} bn3", h)
        else:
            h = net.conv(f"{tag} conv1 3x3" + ("/2" if s == 2 else ""), x, planes, 3, s)
            net.norm(f"{tag} bn{one}", h)
            net.act(f"{tag} relu1", h, in_place=True)
            h = net.conv(f"{tag} conv2 3x3", h, planes, 3)
            net.norm(f"{tag} bn{two}", h)
        if s != 1 or x.c != cout:
            d = net.conv(f"{tag} downsample conv 1x1" + ("/2" if s == 2 else ""), x, cout, 1, s,
                         0)
            # Read only by `out += identity`, which saves nothing: freed after the add.
            net.norm(f"{tag} downsample bn", d, freed=True)
        # torchvision: `out += identity`, then ReLU(inplace=True).
        net.add(f"{tag} residual add", h, in_place=True)
        net.act(f"{tag} relu out", h, in_place=True)
        x = h
    return x


def resnet(name, layers, bottleneck):
    net = Net(name, TV_RESNET, "SAMPLE = one 224x224 RGB image (ImageNet training crop). "
              "BatchNorm and ReLU run as separate kernels, as in torchvision and DLE "
              f"({DLE_RESNET}).")
    x = resnet_stem(net, "", 224)
    for s, (blocks, planes) in enumerate(zip(layers, (64, 128, 256, 512)), 1):
        x = resnet_stage(net, f"layer{s}", x, blocks, planes, 1 if s == 1 else 2, bottleneck)
    net.mem("pooling", "global avgpool", x.e, x.c, notes="reads the 7x7 map, writes one vector")
    net.linear("fc", 1, x.c, 1000, freed=True)  # the loss's log-softmax keeps its own result
    net.loss("cross-entropy", 1000, 1000, notes="log-softmax over 1000 classes (DLE adds "
             "label smoothing: same traffic)")
    return net


# ==== EfficientNet B0/B4/B7 (torchvision) ======================================================

# (expand_ratio, kernel, stride, in, out, layers): torchvision's table (paper Table 1).
EFFNET_STAGES = [(1, 3, 1, 32, 16, 1), (6, 3, 2, 16, 24, 2), (6, 5, 2, 24, 40, 2),
                 (6, 3, 2, 40, 80, 3), (6, 5, 1, 80, 112, 3), (6, 5, 2, 112, 192, 4),
                 (6, 3, 1, 192, 320, 1)]


def efficientnet(name, width, depth, size):
    net = Net(name, TV_EFFNET, f"SAMPLE = one {size}x{size} RGB image (torchvision crop for "
              "this variant). Depthwise convs are memory-bound; SE blocks add tiny GEMMs.")
    stages = [(e, k, s, make_divisible(i * width), make_divisible(o * width),
               int(math.ceil(n * depth))) for e, k, s, i, o, n in EFFNET_STAGES]
    x = net.conv("stem conv 3x3/2", Map(3, size, size), stages[0][3], 3, 2)
    net.norm("stem bn", x)
    net.act("stem silu", x)
    for si, (expand, k, stride, cin, cout, blocks) in enumerate(stages, 1):
        for b in range(blocks):
            tag = f"stage{si} block1" if b == 0 else f"stage{si} blocks2-{blocks}"
            block_in = cin if b == 0 else cout
            s = stride if b == 0 else 1
            h = x
            hidden = make_divisible(block_in * expand)
            # With stride 1 the expand and depthwise outputs are one size: shared BN/SiLU rows.
            ex, dw = ("expand+depthwise",) * 2 if s == 1 else ("expand", "depthwise")
            if hidden != block_in:
                h = net.conv(f"{tag} expand 1x1", h, hidden, 1)
                net.norm(f"{tag} {ex} bn", h)
                net.act(f"{tag} {ex} silu", h)
            h = net.conv(f"{tag} depthwise {k}x{k}" + ("/2" if s == 2 else ""), h, hidden, k, s,
                         groups=hidden)
            net.norm(f"{tag} {dw} bn", h)
            net.act(f"{tag} {dw} silu", h)
            squeeze = max(1, block_in // 4)
            net.mem("pooling", f"{tag} SE avgpool", h.e, h.c)
            net.linear(f"{tag} SE fc1 1x1", 1, hidden, squeeze)
            net.act(f"{tag} SE silu", Map(squeeze, 1), False)
            net.linear(f"{tag} SE fc2 1x1", 1, squeeze, hidden)
            net.act(f"{tag} SE sigmoid", Map(hidden, 1), False)
            net.mem("elementwise", f"{tag} SE scale", h.e + h.c, h.e,
                    notes="feature map x per-channel gate")
            h = net.conv(f"{tag} project 1x1", h, cout, 1)
            residual = s == 1 and block_in == cout
            # With a residual, StochasticDepth multiplies the BN's output by a mask and saves
            # only the mask: the output is freed after the product.
            net.norm(f"{tag} project bn", h, freed=residual)
            if residual:
                net.mem("elementwise", f"{tag} stochastic depth", h.e, h.e,
                        notes=TRAINING_ONLY + "StochasticDepth 'row' multiplies by a per-sample "
                        "mask (probability 0.2 x block index / blocks)")
                net.add(f"{tag} residual add", h, in_place=True)  # `result += input`
            x = h
    x = net.conv("head conv 1x1", x, 4 * stages[-1][4], 1)
    net.norm("head bn", x)
    net.act("head silu", x)
    net.mem("pooling", "global avgpool", x.e, x.c)
    net.dropout("classifier dropout", Map(x.c, 1), False)
    net.linear("fc", 1, x.c, 1000, freed=True)
    net.loss("cross-entropy", 1000, 1000, notes="log-softmax over 1000 classes")
    return net


# ==== ViT (torchvision) ========================================================================

def vit(name, layers, hidden, heads, mlp):
    net = Net(name, TV_VIT, "SAMPLE = one 224x224 image: 196 patches + class token = 197 "
              "tokens. spatial=yes rows scale with the token count; attention also scales with "
              "the key length, which spatial does not express.")
    t = (224 // 16) ** 2 + 1
    # Outputs read only by a copy, a concatenation or an add (through the identity dropouts of
    # dropout=0.0) are freed: the patch map, the concatenated tokens, the packed projection and
    # the two projections ahead of the residual adds. Measured, what autograd keeps per layer
    # is 16 hidden-sized tensors and the scores under PyTorch 1.13's unfused attention
    # (bench/saved_activations.py).
    x = net.conv("patch embedding conv 16x16/16", Map(3, 224, 224), hidden, 16, 16, 0, bias=True,
                 freed=True)
    tok = Map(hidden, t)
    net.mem("elementwise", "class token concat", x.e, tok.e, notes="copy into 197 tokens",
            freed=True)
    net.params += hidden + t * hidden  # class token, position embedding
    net.mem("elementwise", "position embedding add", tok.e + t * hidden, tok.e)
    hd = hidden // heads
    for _ in range(layers):
        tag = f"encoder layers1-{layers}"
        net.norm(f"{tag} ln_1", tok)
        net.linear(f"{tag} attention in_proj qkv", t, hidden, 3 * hidden, spatial=True,
                   freed=True)
        net.mem("elementwise", f"{tag} qkv split copy", 3 * tok.e, 3 * tok.e,
                notes="F.multi_head_attention_forward makes the packed projection contiguous")
        net.attention(f"{tag} attention", heads, t, t, hd,
                      notes="nn.MultiheadAttention(need_weights=False): SDPA on PyTorch 2")
        net.mem("elementwise", f"{tag} attention output permute copy", tok.e, tok.e)
        net.linear(f"{tag} attention out_proj", t, hidden, hidden, spatial=True, freed=True)
        net.add(f"{tag} residual add 1", tok)
        net.norm(f"{tag} ln_2", tok)
        net.linear(f"{tag} mlp fc1", t, hidden, mlp, spatial=True)
        net.act(f"{tag} mlp gelu", Map(mlp, t))
        net.linear(f"{tag} mlp fc2", t, mlp, hidden, spatial=True, freed=True)
        net.add(f"{tag} residual add 2", tok)
    net.norm("final ln", tok)
    net.linear("head (class token)", 1, hidden, 1000, freed=True)
    net.loss("cross-entropy", 1000, 1000, notes="log-softmax over 1000 classes")
    return net


# ==== YOLOv8 (Ultralytics) =====================================================================

YOLO_BACKBONE = [  # (from, repeats, module, args) of yolov8.yaml
    (-1, 1, "Conv", (64, 3, 2)), (-1, 1, "Conv", (128, 3, 2)), (-1, 3, "C2f", (128, True)),
    (-1, 1, "Conv", (256, 3, 2)), (-1, 6, "C2f", (256, True)), (-1, 1, "Conv", (512, 3, 2)),
    (-1, 6, "C2f", (512, True)), (-1, 1, "Conv", (1024, 3, 2)), (-1, 3, "C2f", (1024, True)),
    (-1, 1, "SPPF", (1024, 5)),
    (-1, 1, "Upsample", ()), ([-1, 6], 1, "Concat", ()), (-1, 3, "C2f", (512, False)),
    (-1, 1, "Upsample", ()), ([-1, 4], 1, "Concat", ()), (-1, 3, "C2f", (256, False)),
    (-1, 1, "Conv", (256, 3, 2)), ([-1, 12], 1, "Concat", ()), (-1, 3, "C2f", (512, False)),
    (-1, 1, "Conv", (512, 3, 2)), ([-1, 9], 1, "Concat", ()), (-1, 3, "C2f", (1024, False)),
    ([15, 18, 21], 1, "Detect", (80,)),
]


def yolo_conv(net, op, x, cout, k, s=1, freed=False):
    """Ultralytics Conv: Conv2d(bias=False) + BatchNorm2d + SiLU (unfused while training; the
    SiLU is not in place). `freed`: the SiLU's output is read only by a residual add."""
    y = net.conv(f"{op} {k}x{k}" + (f"/{s}" if s > 1 else ""), x, cout, k, s)
    net.norm(f"{op} bn", y)
    net.act(f"{op} silu", y, freed=freed)
    return y


def yolov8(name, depth, width, max_channels):
    net = Net(name, YOLO_YAML, "SAMPLE = one 640x640 image (COCO training size). BN and SiLU "
              "are separate kernels while training (Ultralytics fuses Conv+BN only for "
              "inference/export); box decoding and NMS are not included.")

    def ch(c):
        return make_divisible(min(c, max_channels) * width)

    outs = []
    x = Map(3, 640, 640)
    for i, (src, reps, module, args) in enumerate(YOLO_BACKBONE):
        n = max(round(reps * depth), 1) if reps > 1 else reps
        tag = f"L{i} {module}"
        if module == "Conv":
            x = yolo_conv(net, f"{tag}", x, ch(args[0]), args[1], args[2])
        elif module == "C2f":
            c2, shortcut = ch(args[0]), args[1]
            c = c2 // 2
            y = yolo_conv(net, f"{tag} cv1", x, 2 * c, 1)
            h = Map(c, y.h, y.w)
            for _ in range(n):
                b = yolo_conv(net, f"{tag} bottlenecks x{n} cv1", h, c, 3)
                # Bottleneck: `x + cv2(cv1(x))`; the add saves nothing of cv2's output.
                b = yolo_conv(net, f"{tag} bottlenecks x{n} cv2", b, c, 3, freed=shortcut)
                if shortcut:
                    net.add(f"{tag} bottlenecks x{n} residual add", b)
                h = b
            cat = Map((2 + n) * c, y.h, y.w)
            net.mem("elementwise", f"{tag} concat", cat.e, cat.e, notes="torch.cat of the splits")
            x = yolo_conv(net, f"{tag} cv2", cat, c2, 1)
        elif module == "SPPF":
            c_ = x.c // 2
            y = yolo_conv(net, f"{tag} cv1", x, c_, 1)
            net.maxpool(f"{tag} maxpool 5x5/1", y.e, y.e, repeats=3)
            cat = Map(4 * c_, y.h, y.w)
            net.mem("elementwise", f"{tag} concat", cat.e, cat.e)
            x = yolo_conv(net, f"{tag} cv2", cat, ch(args[0]), 1)
        elif module == "Upsample":
            y = Map(x.c, 2 * x.h, 2 * x.w)
            net.mem("resize", f"{tag} nearest 2x", x.e, y.e)
            x = y
        elif module == "Concat":
            parts = [x] + [outs[j] for j in src[1:]]
            x = Map(sum(p.c for p in parts), x.h, x.w)
            net.mem("elementwise", f"{tag}", x.e, x.e)
        elif module == "Detect":
            levels = [outs[j] for j in src]
            c2 = max(16, levels[0].c // 4, 16 * 4)
            c3 = max(levels[0].c, min(args[0], 100))
            for lv, f in enumerate(levels, 3):
                t = f"{tag} P{lv}"
                b = yolo_conv(net, f"{t} box conv1", f, c2, 3)
                b = yolo_conv(net, f"{t} box conv2", b, c2, 3)
                # The two last convolutions are read only by torch.cat, and the concatenation
                # only by the view and torch.cat of the loss, which save nothing of them.
                net.conv(f"{t} box conv3 1x1 (4x16 bins)", b, 64, 1, bias=True, freed=True)
                c = yolo_conv(net, f"{t} cls conv1", f, c3, 3)
                c = yolo_conv(net, f"{t} cls conv2", c, c3, 3)
                net.conv(f"{t} cls conv3 1x1", c, args[0], 1, bias=True, freed=True)
                out = Map(64 + args[0], f.h, f.w)
                net.mem("elementwise", f"{t} concat box+cls", out.e, out.e, freed=True)
            net.params += 16  # DFL's fixed 1x1 conv (no gradient), used when decoding boxes
            anchors = sum(f.h * f.w for f in levels)
            net.loss("v8DetectionLoss", anchors * (64 + args[0]), anchors * args[0], True,
                     f"BCE over {anchors} anchors x 80 classes, DFL and CIoU on assigned "
                     "anchors; the task-aligned assigner adds traffic per ground-truth box")
        outs.append(x)
    return net


# ==== U-Net (Ronneberger et al. 2015) ==========================================================

def unet():
    net = Net("U-Net", UNET_PAPER, "SAMPLE = one 572x572 single-channel input tile (388x388 "
              "output). Unpadded 3x3 convs with bias, ReLU, no normalisation (2015 original); "
              "spatial scaling is approximate because valid convs trim borders.")
    x = Map(1, 572, 572)
    skips = []
    for i, c in enumerate((64, 128, 256, 512, 1024), 1):
        for j in (1, 2):
            x = net.conv(f"down{i} conv{j} 3x3", x, c, 3, p=0, bias=True)
            net.act(f"down{i} relu{j}", x)
        if i < 5:
            skips.append(x)
            y = Map(c, x.h // 2, x.w // 2)
            net.maxpool(f"down{i} maxpool 2x2", x.e, y.e)
            x = y
    net.dropout("bottom dropout", x)
    for i, c in enumerate((512, 256, 128, 64), 1):
        y = Map(c, 2 * x.h, 2 * x.w)
        net.row(f"up{i} up-conv 2x2", "conv", True, m=x.h * x.w, n=4 * c, k=x.c, read=x.e,
                written=y.e, notes="transposed conv 2x2/2 as a GEMM over input positions")
        net.params += x.c * c * 4 + c
        skip = skips.pop()
        x = Map(2 * c, y.h, y.w)
        net.mem("elementwise", f"up{i} crop + concat", x.e, x.e,
                notes=f"center crop of the {skip.h}x{skip.w} skip to {y.h}x{y.w}")
        for j in (1, 2):
            x = net.conv(f"up{i} conv{j} 3x3", x, c, 3, p=0, bias=True)
            net.act(f"up{i} relu{j}", x)
    x = net.conv("output conv 1x1", x, 2, 1, bias=True)
    net.loss("pixel-wise softmax cross-entropy", 2 * x.e, x.e, True,
             "2-class softmax per output pixel, weighted by the border weight map")
    return net


# ==== SSD300 v1.1 (NVIDIA DeepLearningExamples, ResNet-50 backbone) ============================

def ssd300():
    net = Net("SSD300 v1.1 (ResNet-50 backbone)", DLE_SSD, "SAMPLE = one 300x300 image. "
              "Backbone: torchvision ResNet-50 through layer3 with layer3's strides set to 1 "
              "(38x38x1024); box decoding and NMS excluded.")
    x = resnet_stem(net, "backbone ", 300)
    x = resnet_stage(net, "backbone layer1", x, 3, 64, 1)
    x = resnet_stage(net, "backbone layer2", x, 4, 128, 2)
    x = resnet_stage(net, "backbone layer3", x, 6, 256, 1)  # conv4_block1 strides set to 1
    feeds = [x]
    outs = [1024, 512, 512, 256, 256, 256]
    for i, (mid, cout) in enumerate(zip((256, 256, 128, 128, 128), outs[1:])):
        tag = f"extra block{i + 1}"
        h = net.conv(f"{tag} conv 1x1", x, mid, 1)
        net.norm(f"{tag} bn1", h)
        net.act(f"{tag} relu1", h, in_place=True)  # DLE: nn.ReLU(inplace=True)
        if i < 3:
            h = net.conv(f"{tag} conv 3x3/2", h, cout, 3, 2, 1)
        else:
            h = net.conv(f"{tag} conv 3x3 valid", h, cout, 3, 1, 0)
        net.norm(f"{tag} bn2", h)
        net.act(f"{tag} relu2", h, in_place=True)
        feeds.append(h)
        x = h
    boxes = 0
    for f, nd in zip(feeds, (4, 6, 6, 6, 4, 4)):
        # Viewed and concatenated (torch.cat saves nothing): freed after the concatenation.
        net.conv(f"head {f.h}x{f.w} loc conv 3x3", f, nd * 4, 3, bias=True, freed=True)
        net.conv(f"head {f.h}x{f.w} conf conv 3x3", f, nd * 81, 3, bias=True, freed=True)
        boxes += nd * f.h * f.w
    net.mem("elementwise", "head reshape + concat", boxes * 85, boxes * 85,
            notes=f"{boxes} default boxes x (4 + 81)")
    net.loss("localisation smooth-L1", 8 * boxes, 4 * boxes, True,
             "encodes ground truth against the default boxes, positives only")
    net.loss("confidence cross-entropy + hard negative mining", 81 * boxes, 81 * boxes, True,
             "log-softmax over 81 classes per box, then two sorts of 8732 losses per image")
    return net
