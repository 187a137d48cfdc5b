#!/usr/bin/env python3
"""What one GPU sustains per operator group, as the estimator's operator model needs it.

Each line printed is one JSON object: a matrix multiply at a size and format (TFLOP/s), a
memory-bound PyTorch kernel at a size (GB/s of the bytes it must move), a fused attention call
(TFLOP/s, forward and backward), a cuDNN convolution (TFLOP/s, with the share of its time spent
transposing between channels-first and channels-last), or the host's cost of one small PyTorch
call (microseconds, with and without a CUDA graph). These are the quantities docs/estimation.md models: a GEMM's fraction
of the tensor rate as its size falls, the share of DRAM bandwidth a memory-bound kernel reaches as
its size falls, the fused-attention fraction, and the dispatch and launch gaps. Nothing here is
fitted to a workload; the figures are evidence to set or check the data files against.

Inputs are random (zeros flatter tensor cores); each figure is the median of timed repetitions
measured with CUDA events after warm-up.

  python3 bench/gpu/kernel_rates.py [--quick] > rates.jsonl

Written 2026-11-28 (the convolutions 2026-11-29) and not yet run on a GPU (the lent machine's
loans paused first): its first run is its test.
"""

import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F


def timed_ms(fn, repeats, warmup=3):
    """Median milliseconds of `fn` over `repeats` runs, each timed with CUDA events."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def emit(**fields):
    print(json.dumps(fields), flush=True)


DTYPES = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16,
          "bf16": torch.bfloat16}


def gemms(quick):
    squares = [256, 512, 1024, 2048, 4096, 8192]
    # Transformer shapes: tokens x hidden x 4 hidden (the MLP's first product) and back.
    shapes = [(m, m, m) for m in squares]
    for tokens in (2048, 16384):
        for hidden in (768, 2048, 4096):
            shapes.append((tokens, 4 * hidden, hidden))
            shapes.append((tokens, hidden, 4 * hidden))
    formats = ["bf16", "fp16"] if quick else ["bf16", "fp16", "tf32", "fp32"]
    for name in formats:
        torch.backends.cuda.matmul.allow_tf32 = name == "tf32"
        dtype = DTYPES[name]
        for m, n, k in shapes:
            a = torch.randn(m, k, device="cuda", dtype=dtype)
            b = torch.randn(k, n, device="cuda", dtype=dtype)
            ms = timed_ms(lambda: torch.mm(a, b), 10 if quick else 20)
            emit(kind="gemm", format=name, m=m, n=n, k=k, ms=round(ms, 5),
                 tflops=round(2 * m * n * k / ms / 1e9, 2))
    torch.backends.cuda.matmul.allow_tf32 = False


def memory_bound(quick):
    sizes = [1 << s for s in range(16, 29, 2 if quick else 1)]
    for name in ("bf16", "fp32"):
        dtype = DTYPES[name]
        width = torch.finfo(dtype).bits // 8
        for elements in sizes:
            x = torch.randn(elements, device="cuda", dtype=dtype)
            y = torch.randn(elements, device="cuda", dtype=dtype)
            rows = x.view(-1, 1024) if elements >= 1024 else x.view(1, -1)
            ln = torch.nn.LayerNorm(rows.shape[-1], device="cuda", dtype=dtype)
            channels = 64
            image = x.view(-1, channels, 16, 16) if elements >= channels * 256 else None
            bn = torch.nn.BatchNorm2d(channels, device="cuda", dtype=dtype)
            # (label, call, elements read + written, in units of the tensor)
            cases = [
                ("copy", lambda: y.copy_(x), 2),
                ("add", lambda: torch.add(x, y), 3),
                ("relu", lambda: F.relu(x), 2),
                ("gelu", lambda: F.gelu(x), 2),
                ("layer_norm", lambda: ln(rows), 2),
                ("softmax", lambda: torch.softmax(rows, dim=-1), 2),
            ]
            if image is not None:
                # Training-mode batch norm: statistics, then the normalisation.
                cases.append(("batch_norm_train", lambda: bn(image), 3))
            for label, call, passes in cases:
                ms = timed_ms(call, 10 if quick else 30)
                moved = passes * elements * width
                emit(kind="memory_bound", op=label, format=name, elements=elements,
                     bytes=moved, ms=round(ms, 5), gbps=round(moved / ms / 1e6, 1))


def attention(quick):
    for causal in (False, True):
        for head_dim in (64, 128):
            for seq in ((1024, 4096) if quick else (128, 512, 1024, 2048, 4096, 8192)):
                batch = max(1, 16384 // seq)
                heads = 2048 // head_dim
                q, k, v = (torch.randn(batch, heads, seq, head_dim, device="cuda",
                                       dtype=torch.bfloat16, requires_grad=True)
                           for _ in range(3))
                flops = 4 * batch * heads * seq * seq * head_dim / (2 if causal else 1)
                forward = timed_ms(
                    lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), 10)
                out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                grad = torch.randn_like(out)
                backward = timed_ms(
                    lambda: torch.autograd.grad(out, (q, k, v), grad, retain_graph=True), 10)
                emit(kind="attention", batch=batch, heads=heads, seq=seq, head_dim=head_dim,
                     causal=causal, forward_ms=round(forward, 4), backward_ms=round(backward, 4),
                     forward_tflops=round(flops / forward / 1e9, 1),
                     backward_tflops=round(2.5 * flops / backward / 1e9, 1))


def kernel_share(call, marks):
    """Share of device time, over one profiled `call`, in kernels whose names hold a mark."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        call()
        torch.cuda.synchronize()
    total = marked = 0.0
    for event in prof.key_averages():
        t = getattr(event, "self_device_time_total", None)
        if t is None:
            t = getattr(event, "self_cuda_time_total", 0.0)
        total += t
        if any(mark in event.key for mark in marks):
            marked += t
    return round(marked / total, 3) if total > 0 else None


def convolutions(quick):
    """cuDNN convolutions as PyTorch calls them, forward and backward, with the share of device
    time spent transposing between channels-first and channels-last (the layout question of
    docs/estimation.md): ResNet-50's 3x3 and 1x1 convolutions in NCHW and channels-last, and
    WaveGlow's dilated 1-D convolution (512 -> 2 x 512 channels, kernel 3, 1,000 steps) at
    dilations 1 to 128, in 16 bits, TF32 and FP32."""
    transposes = ("nchwToNhwc", "nhwcToNchw", "Transpose", "transpose")
    cases = []
    for fmt in ("fp16", "tf32", "fp32"):
        for layout in ("nchw", "nhwc"):
            cases.append(("resnet 3x3 64->64 56x56", fmt, layout, 64, 64, (3, 3), (1, 1),
                          (64, 64, 56, 56)))
            cases.append(("resnet 1x1 256->64 56x56", fmt, layout, 256, 64, (1, 1), (1, 1),
                          (64, 256, 56, 56)))
        for dilation in ((1, 8, 128) if quick else (1, 2, 8, 32, 128)):
            cases.append((f"waveglow in_layer dilation {dilation}", fmt, "ncl", 512, 1024, 3,
                          dilation, (16, 512, 1000)))
    for benchmark in (False, True):
        torch.backends.cudnn.benchmark = benchmark
        for label, fmt, layout, cin, cout, kernel, dilation, shape in cases:
            torch.backends.cudnn.allow_tf32 = fmt == "tf32"
            dtype = DTYPES[fmt]
            one_d = layout == "ncl"
            conv_type = torch.nn.Conv1d if one_d else torch.nn.Conv2d
            padding = dilation if one_d else tuple(k // 2 for k in kernel)
            conv = conv_type(cin, cout, kernel, dilation=dilation, padding=padding,
                             device="cuda", dtype=dtype)
            x = torch.randn(*shape, device="cuda", dtype=dtype, requires_grad=True)
            if layout == "nhwc":
                conv = conv.to(memory_format=torch.channels_last)
                x = x.detach().to(memory_format=torch.channels_last).requires_grad_()
            out = conv(x)
            grad = torch.randn_like(out)
            forward = timed_ms(lambda: conv(x), 10)
            backward = timed_ms(
                lambda: torch.autograd.grad(out, (x, conv.weight), grad, retain_graph=True), 10)
            kernel_size = kernel if one_d else kernel[0] * kernel[1]
            flops = 2 * out.numel() * cin * kernel_size
            emit(kind="conv", op=label, format=fmt, layout=layout, cudnn_benchmark=benchmark,
                 shape=list(shape), forward_ms=round(forward, 4), backward_ms=round(backward, 4),
                 forward_tflops=round(flops / forward / 1e9, 1),
                 backward_tflops=round(2 * flops / backward / 1e9, 1),
                 forward_transpose_share=kernel_share(lambda: conv(x), transposes),
                 backward_transpose_share=kernel_share(
                     lambda: torch.autograd.grad(out, (x, conv.weight), grad,
                                                 retain_graph=True), transposes))
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.allow_tf32 = True


def dispatch():
    """Host microseconds per small PyTorch call, eager and replayed from a CUDA graph."""
    x = torch.zeros(1, device="cuda")
    calls = 2000
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        x.add_(1)
    host = (time.perf_counter() - start) / calls * 1e6
    torch.cuda.synchronize()
    device = (time.perf_counter() - start) / calls * 1e6
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        x.add_(1)
        torch.cuda.synchronize()
        with torch.cuda.graph(graph):
            for _ in range(100):
                x.add_(1)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls // 100):
        graph.replay()
    torch.cuda.synchronize()
    replayed = (time.perf_counter() - start) / calls * 1e6
    emit(kind="dispatch", eager_host_us=round(host, 2), eager_until_done_us=round(device, 2),
         graph_per_kernel_us=round(replayed, 2))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer sizes and repetitions")
    args = parser.parse_args()
    torch.manual_seed(0)
    emit(kind="device", gpu=torch.cuda.get_device_name(), torch=torch.__version__,
         cuda=torch.version.cuda)
    dispatch()
    # Convolutions first: the layout and dilated-convolution questions they answer are the
    # open ones (docs/estimation.md), should the device's time run out.
    convolutions(args.quick)
    gemms(args.quick)
    memory_bound(args.quick)
    attention(args.quick)


if __name__ == "__main__":
    main()
