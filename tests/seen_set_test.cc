// SeenSet answers "seen before?" exactly, for every key, past the size it was made for.
#include "util/seen_set.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_set>

namespace cloudfit {
namespace {

TEST(SeenSetTest, AgreesWithUnorderedSetOnRandomKeysBeyondItsExpectedSize) {
  SeenSet seen(8);  // far fewer than inserted: it must grow without losing keys
  std::unordered_set<uint64_t> reference;
  std::mt19937_64 random(42);
  for (int i = 0; i < 20000; ++i) {
    // Small keys repeat often; pointer-like keys (multiples of 8) rarely.
    uint64_t key = i % 3 == 0 ? random() % 512 : (random() % (1u << 20)) * 8;
    ASSERT_EQ(seen.Insert(key), reference.insert(key).second) << "key " << key << " at " << i;
  }
}

TEST(SeenSetTest, ZeroAndTheLargestKeyAreKeysLikeAnyOther) {
  SeenSet seen(4);
  EXPECT_TRUE(seen.Insert(0));
  EXPECT_FALSE(seen.Insert(0));
  EXPECT_TRUE(seen.Insert(UINT64_MAX));  // stored apart: its slot value would wrap to "empty"
  EXPECT_FALSE(seen.Insert(UINT64_MAX));
  EXPECT_TRUE(seen.Insert(UINT64_MAX - 1));
  for (uint64_t k = 1; k < 100; ++k) EXPECT_TRUE(seen.Insert(k)) << k;
  EXPECT_FALSE(seen.Insert(UINT64_MAX));
  EXPECT_FALSE(seen.Insert(UINT64_MAX - 1));
  EXPECT_FALSE(seen.Insert(50));
}

}  // namespace
}  // namespace cloudfit
