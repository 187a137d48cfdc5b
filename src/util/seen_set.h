// A set of 64-bit keys that only answers "seen before?": open addressing in one array, sized
// once for the keys a pass will insert. The recommender folds and counts thousands of offers per
// request, where a node-based std::set or std::unordered_set allocates for every key.
#ifndef CLOUDFIT_UTIL_SEEN_SET_H_
#define CLOUDFIT_UTIL_SEEN_SET_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cloudfit {

class SeenSet {
 public:
  // Room for `expected_keys` distinct keys without growing (more are still accepted).
  explicit SeenSet(size_t expected_keys) { Resize(expected_keys * 2 + 16); }

  // Adds `key`; whether it was new.
  bool Insert(uint64_t key) {
    if (2 * (size_ + 1) > slots_.size()) Grow();
    return InsertInto(&slots_, key + 1);
  }

 private:
  // Slots hold key + 1, so that 0 marks an empty slot (a key of ~0 wraps to 0 and is stored
  // as the separate flag).
  bool InsertInto(std::vector<uint64_t>* slots, uint64_t stored) {
    if (stored == 0) {
      bool fresh = !max_key_seen_;
      max_key_seen_ = true;
      size_ += fresh;
      return fresh;
    }
    size_t mask = slots->size() - 1;
    // Fibonacci hashing spreads pointer-like keys (multiples of 8) over the table.
    size_t i = static_cast<size_t>((stored * 0x9E3779B97F4A7C15ull) >> 20) & mask;
    while ((*slots)[i] != 0) {
      if ((*slots)[i] == stored) return false;
      i = (i + 1) & mask;
    }
    (*slots)[i] = stored;
    ++size_;
    return true;
  }

  void Resize(size_t at_least) {
    size_t n = 16;
    while (n < at_least) n *= 2;
    slots_.assign(n, 0);
  }

  void Grow() {
    std::vector<uint64_t> old;
    old.swap(slots_);
    Resize(old.size() * 2);
    size_ = max_key_seen_ ? 1 : 0;
    for (uint64_t stored : old) {
      if (stored != 0) InsertInto(&slots_, stored);
    }
  }

  std::vector<uint64_t> slots_;  // a power of two in size, at most half full
  size_t size_ = 0;
  bool max_key_seen_ = false;
};

}  // namespace cloudfit

#endif  // CLOUDFIT_UTIL_SEEN_SET_H_
