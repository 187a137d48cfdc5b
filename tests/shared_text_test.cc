// SharedText (views static bytes or shares a string it owns) and the built-in catalog's tables
// made on first use: what a caller sees must not depend on which was asked for first, by how
// many threads at once.
#include "cloudfit/shared_text.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cloudfit/catalog.h"

namespace cloudfit {
namespace {

TEST(SharedTextTest, StaticTextIsViewedNotCopied) {
  static constexpr char kBytes[] = "data/instances/aws.csv:12";
  SharedText t = SharedText::Static(kBytes);
  EXPECT_EQ(t.data(), kBytes);
  EXPECT_EQ(t, "data/instances/aws.csv:12");
  SharedText copy = t;
  EXPECT_EQ(copy.data(), kBytes);
}

TEST(SharedTextTest, OwnedTextOutlivesItsSourceAndIsSharedByCopies) {
  SharedText t;
  {
    std::string source = "a source longer than any short-string buffer";
    t = source;
    source.assign(source.size(), 'x');
  }
  EXPECT_EQ(t, "a source longer than any short-string buffer");
  SharedText copy = t;
  EXPECT_EQ(copy.data(), t.data());  // shared, not copied
  t = "other";
  EXPECT_EQ(copy, "a source longer than any short-string buffer");
  EXPECT_EQ(t, "other");
  SharedText moved = std::move(copy);
  EXPECT_EQ(moved, "a source longer than any short-string buffer");
}

TEST(SharedTextTest, ReadsAndJoinsAsAString) {
  SharedText t = std::string("https://example.com/prices");
  std::string s = t;
  EXPECT_EQ(s, "https://example.com/prices");
  EXPECT_EQ(t + "|" + std::string("b"), "https://example.com/prices|b");
  EXPECT_EQ("a|" + t, "a|https://example.com/prices");
  EXPECT_NE(t.find("example"), std::string::npos);
  EXPECT_TRUE(std::string("https://example.com/prices") == t);
  EXPECT_LT(t, SharedText("https://f"));
  t += "#x";
  EXPECT_EQ(t, "https://example.com/prices#x");
  EXPECT_TRUE(SharedText().empty());
  EXPECT_TRUE(SharedText(std::string()).empty());
}

TEST(BuiltInCatalogLazyTest, TablesMadeOnFirstUseAreTheSameFromEveryThread) {
  Catalog catalog;
  ASSERT_TRUE(Catalog::LoadBuiltIn(&catalog).ok());
  constexpr int kThreads = 4;
  std::vector<const InstanceType*> instances(kThreads);
  std::vector<const Model*> models(kThreads);
  std::vector<size_t> operators(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      // Half the threads find a model first, half list them all first.
      const Model* m = nullptr;
      if (i % 2 == 0) {
        ASSERT_TRUE(catalog.FindModel("resnet50", &m).ok());
        models[i] = &catalog.models().front();
      } else {
        models[i] = &catalog.models().front();
        ASSERT_TRUE(catalog.FindModel("resnet50", &m).ok());
      }
      operators[i] = m->operators.size();
      instances[i] = catalog.instances().data();
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(std::set<const InstanceType*>(instances.begin(), instances.end()).size(), 1u);
  EXPECT_EQ(std::set<const Model*>(models.begin(), models.end()).size(), 1u);
  EXPECT_GT(operators[0], 0u);
  EXPECT_EQ(std::set<size_t>(operators.begin(), operators.end()).size(), 1u);
  EXPECT_FALSE(catalog.instances().empty());
}

TEST(BuiltInCatalogLazyTest, AFoundModelHasItsOperatorsBeforeAnyListing) {
  Catalog catalog;
  ASSERT_TRUE(Catalog::LoadBuiltIn(&catalog).ok());
  const Model* m = nullptr;
  ASSERT_TRUE(catalog.FindModel("resnet50", &m).ok());
  ASSERT_FALSE(m->operators.empty());
  // The same rows as a catalog that made every model's at once.
  Catalog listed;
  ASSERT_TRUE(Catalog::LoadBuiltIn(&listed).ok());
  const Model* other = nullptr;
  for (const Model& model : listed.models()) {
    if (model.name == m->name) other = &model;
  }
  ASSERT_NE(other, nullptr);
  ASSERT_EQ(m->operators.size(), other->operators.size());
  for (size_t i = 0; i < m->operators.size(); ++i) {
    EXPECT_EQ(m->operators[i].label, other->operators[i].label);
    EXPECT_EQ(m->operators[i].m, other->operators[i].m);
    EXPECT_EQ(m->operators[i].source, other->operators[i].source);
  }
}

}  // namespace
}  // namespace cloudfit
