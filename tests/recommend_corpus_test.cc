// The golden corpus of recommendations: a few hundred requests of every kind, objective and
// constraint (tools/recommend_corpus.py) answered by `cloudfit recommend --jsonl` on the built-in
// catalog, each answer's SHA-256 compared with tests/golden/recommend_corpus/answers.sha256.
//
// A change made for speed must not change an answer, not even a byte of its JSON. Only a commit
// that changes the model on purpose regenerates the digests: CLOUDFIT_UPDATE_GOLDEN=1 rewrites
// them. On a mismatch the answers are kept in a file named by the failure, to diff.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "refresh/crypto.h"
#include "test_support.h"

namespace cloudfit::testing {
namespace {

std::string CorpusPath(const std::string& name) {
  return SourcePath("tests/golden/recommend_corpus/" + name);
}

// "id digest" per line.
std::map<int, std::string> ReadDigests(const std::string& text) {
  std::map<int, std::string> digests;
  std::istringstream lines(text);
  int id = 0;
  std::string digest;
  while (lines >> id >> digest) digests[id] = digest;
  return digests;
}

TEST(RecommendCorpusTest, EveryAnswerIsByteIdentical) {
  TempDir dir;
  // The corpus is answered as of a fixed day: price-age warnings depend on it.
  ProgramRun run = RunProgram(
      "env", dir.path(),
      "-u CLOUDFIT_CATALOG CLOUDFIT_TODAY=2026-11-22 '" + std::string(CLOUDFIT_BINARY) +
          "' recommend --jsonl '" + CorpusPath("requests.jsonl") + "'");
  ASSERT_EQ(run.exit_code, 0) << run.err;

  std::string requests = ReadWholeFile(CorpusPath("requests.jsonl"));
  size_t request_count = static_cast<size_t>(std::count(requests.begin(), requests.end(), '\n'));
  ASSERT_GE(request_count, 200u) << "the corpus is a few hundred requests";

  std::ostringstream digests;
  std::istringstream answers(run.out);
  size_t answered = 0;
  for (std::string line; std::getline(answers, line); ++answered) {
    // Answers come in request order; the id is the line number (tools/recommend_corpus.py).
    digests << answered << ' ' << refresh::HexEncode(refresh::Sha256(line)) << '\n';
  }
  ASSERT_EQ(answered, request_count);

  if (std::getenv("CLOUDFIT_UPDATE_GOLDEN")) {
    std::ofstream(CorpusPath("answers.sha256")) << digests.str();
    GTEST_SKIP() << "rewrote answers.sha256";
  }
  std::map<int, std::string> expected = ReadDigests(ReadWholeFile(CorpusPath("answers.sha256")));
  std::map<int, std::string> actual = ReadDigests(digests.str());
  ASSERT_EQ(expected.size(), request_count)
      << "answers.sha256 is missing or stale; run with CLOUDFIT_UPDATE_GOLDEN=1";
  int changed = 0;
  std::string first_changed;
  for (const auto& [id, digest] : expected) {
    if (actual[id] == digest) continue;
    if (changed++ == 0) first_changed = std::to_string(id);
  }
  if (changed > 0) {
    std::string out = std::string(CLOUDFIT_BUILD_DIR) + "/recommend_corpus_answers.jsonl";
    std::ofstream(out) << run.out;
    ADD_FAILURE() << changed << " of " << request_count << " answers changed (first: id "
                  << first_changed << "); the answers are in " << out;
  }
}

}  // namespace
}  // namespace cloudfit::testing
