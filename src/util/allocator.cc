#include "util/allocator.h"

#include <cstdlib>  // defines __GLIBC__ where the C library is glibc

#if defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

#include <cstdint>

namespace cloudfit {

void KeepFreedMemory() {
#if defined(__GLIBC__)
  // Blocks up to 32 MiB (glibc's largest threshold on 64-bit) come from the heap rather than a
  // fresh mapping each, and up to 256 MiB free at the heap's top stays mapped. Larger blocks (a
  // whole price file read at once) still map and unmap, so a one-off spike is returned.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

void PrefaultHeap(size_t bytes) {
#if defined(__GLIBC__) && defined(__linux__)
#ifndef MADV_POPULATE_WRITE
  constexpr int MADV_POPULATE_WRITE = 23;  // Linux 5.14; older headers lack the name
#endif
  // A block below the mmap threshold comes from the heap's top, grown to hold it if need be.
  // Its pages are mapped in one call, then it is freed: it joins the top again and stays (the
  // trim threshold is far above it), so the next allocations land on mapped pages.
  void* volatile block = malloc(bytes);  // volatile: the compiler may drop a malloc-free pair
  if (block == nullptr) return;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t start = (reinterpret_cast<uintptr_t>(block) + page - 1) & ~(page - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(block) + bytes) & ~(page - 1);
  // EINVAL on kernels without it: the pages are then faulted in one by one, as before.
  if (end > start) (void)madvise(reinterpret_cast<void*>(start), end - start, MADV_POPULATE_WRITE);
  free(block);
#else
  (void)bytes;
#endif
}

}  // namespace cloudfit
