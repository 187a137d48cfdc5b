#!/usr/bin/env bash
# Everything cloudfit measures or samples on a GPU, run once on a machine that has one, with its
# output under $OUT (default: a temporary directory): the GPU tests that skip elsewhere, the full
# `cloudfit probe`, `cloudfit monitor` and `cloudfit poc` around a real training process, the
# training throughput and peak memory of bench/gpu/train_throughput.py for the models listed below,
# to compare with `cloudfit estimate` on that GPU, and bench/gpu/kernel_rates.py's per-operator
# rates. Needs build/cloudfit and build/tests/measure_tests (scripts/build.sh) and, for the
# training runs and kernel rates, PyTorch, torchvision and transformers. At most eight files land
# in $OUT (what a lent machine sends back).
#
#   bench/gpu/device_check.sh                    # about six minutes on one H200
#   PARTS=train,kernels bench/gpu/device_check.sh   # only these parts (tests, probe, monitor, poc,
#                                                   # train, kernels)
set -u
OUT=${OUT:-$(mktemp -d)}
cd "$(dirname "$0")/../.."
exec > >(tee "$OUT/log.txt") 2>&1
tee_pid=$!
PARTS=${PARTS:-tests,probe,monitor,poc,train,kernels}  # which parts to run
want() { [[ ",$PARTS," == *",$1,"* ]]; }
step() { printf '\n==== %s  %s\n' "$(date -u +%H:%M:%S)" "$*"; }

step "machine"
uname -a
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit,clocks.max.sm,clocks.max.mem,pcie.link.gen.max,pcie.link.width.max --format=csv
nvidia-smi -q >"$OUT/nvidia-smi.txt" 2>&1
lscpu | grep -E 'Model name|^CPU\(s\)|Thread|NUMA node\(s\)'
python3 -c 'import torch, torchvision, transformers; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "torchvision", torchvision.__version__, "transformers", transformers.__version__)'

# cuBLASLt and NCCL are opened by name: put the directories that hold them on the search path.
libdirs=$(find /usr/local /opt /usr/lib -xdev \( -name 'libcublasLt.so.1[0-9]' -o -name 'libnccl.so.2' \) 2>/dev/null | xargs -r -n1 dirname | sort -u | paste -sd: -)
echo "library directories: $libdirs"
# Only for cloudfit: the toolkit's directories can hold a cuDNN older than PyTorch's own.
cloudfit_libs=${libdirs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

want tests && {
step "GPU tests (skipped on machines without a GPU)"
LD_LIBRARY_PATH=$cloudfit_libs timeout 120 build/tests/measure_tests --gtest_filter='Gpu*:CpuProbeTest.MatchesDriverGpuNamesToTheCatalog' --gtest_color=no
echo "measure_tests exit $?"
}
want probe && {
step "cloudfit probe (full)"
LD_LIBRARY_PATH=$cloudfit_libs timeout 180 build/cloudfit probe --out "$OUT/probe.json"
echo "probe exit $?"
}
want monitor && {
step "cloudfit monitor around a training run"
LD_LIBRARY_PATH=$cloudfit_libs timeout 90 build/cloudfit monitor --interval 0.25 --samples-csv "$OUT/monitor.csv" --plot "$OUT/monitor.svg" \
  -- python3 bench/gpu/train_throughput.py --model gpt2 --batch 16 --seq-len 1024 --precision bf16 --seconds 12
echo "monitor exit $?"
}
want poc && {
step "cloudfit poc on one GPU"
LD_LIBRARY_PATH=$cloudfit_libs timeout 120 build/cloudfit poc --gpus 1 --duration 45 --json \
  -- python3 bench/gpu/train_throughput.py --model resnet50 --batch 256 --seconds 60 >"$OUT/poc.json"
echo "poc exit $?"
cat "$OUT/poc.json"
}
want train && {
step "training throughput"
train() {
  timeout 100 python3 bench/gpu/train_throughput.py "$@" | grep '^{' | tee -a "$OUT/train.jsonl"
  echo "exit ${PIPESTATUS[0]}: $*"
}
train --model resnet50 --batch 256 --precision fp16
train --model resnet50 --batch 256 --precision fp16 --channels-last
train --model resnet50 --batch 128 --precision tf32
train --model vit_b_16 --batch 128 --precision fp16
train --model bert-large --batch 128 --seq-len 128 --precision fp16
train --model bert-large --batch 32 --seq-len 512 --precision fp16
train --model gpt2 --batch 16 --seq-len 1024 --precision bf16
train --model llama-3.2-1b --batch 4 --seq-len 2048 --precision bf16
}
want kernels && {
step "kernel rates: dispatch, convolutions and their layout transposes, GEMM sizes, memory-bound kernels, fused attention"
timeout 300 python3 bench/gpu/kernel_rates.py >"$OUT/kernel_rates.jsonl"
echo "kernel_rates exit $? ($(wc -l <"$OUT/kernel_rates.jsonl") lines)"
}

step "done"
exec >&- 2>&-
wait "$tee_pid"
