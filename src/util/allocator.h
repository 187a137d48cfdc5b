// Allocator settings for long-running work (JSON Lines batches, the server).
#ifndef CLOUDFIT_UTIL_ALLOCATOR_H_
#define CLOUDFIT_UTIL_ALLOCATOR_H_

#include <cstddef>

namespace cloudfit {

// Keeps memory the process frees for its next requests instead of handing it back to the
// system. A recommendation builds vectors of a few hundred kilobytes; by default glibc maps
// each of those afresh and unmaps it when freed, so every request paid for ~300 page faults
// (a third of a batch's time went to the kernel). With this, the heap grows to the largest
// request's size and stays there. No effect with other C libraries.
void KeepFreedMemory();

// Grows the heap by `bytes` at once and has the kernel map all of it in one call, so that a
// short command's first touches of fresh memory do not each take a page fault. A fault costs
// ~0.25 us on bare metal but 15-20 us in some virtual machines (measured here: 16-20 us per
// page touched one by one, 0.7-1.1 us per page mapped by MADV_POPULATE_WRITE), where a one-shot
// `recommend` spent most of its time in ~650 faults on the heap. Call after KeepFreedMemory (the
// grown heap must not be trimmed back). Does nothing with other C libraries or kernels before
// Linux 5.14.
void PrefaultHeap(size_t bytes);

}  // namespace cloudfit

#endif  // CLOUDFIT_UTIL_ALLOCATOR_H_
