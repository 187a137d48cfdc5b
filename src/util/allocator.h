// Allocator settings for long-running work (JSON Lines batches, the server).
#ifndef CLOUDFIT_UTIL_ALLOCATOR_H_
#define CLOUDFIT_UTIL_ALLOCATOR_H_

namespace cloudfit {

// Keeps memory the process frees for its next requests instead of handing it back to the
// system. A recommendation builds vectors of a few hundred kilobytes; by default glibc maps
// each of those afresh and unmaps it when freed, so every request paid for ~300 page faults
// (a third of a batch's time went to the kernel). With this, the heap grows to the largest
// request's size and stays there. No effect with other C libraries.
void KeepFreedMemory();

}  // namespace cloudfit

#endif  // CLOUDFIT_UTIL_ALLOCATOR_H_
