#include "util/allocator.h"

#include <cstdlib>  // defines __GLIBC__ where the C library is glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

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

}  // namespace cloudfit
