"""A stand-in for a training script: a few seconds of arithmetic with progress lines, so the
README's `cloudfit monitor` example has a job to watch. Replace it with your own."""
import time

start = time.time()
step = 0
total = 0.0
while time.time() - start < 3:
    total += sum(i * i for i in range(20000))
    step += 1
    if step % 20 == 0:
        print(f"step {step}", flush=True)
print(f"done: {step} steps")
