#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "cloudfit/table.h"
#include "util/allocator.h"
#include "util/csv.h"
#include "util/date.h"
#include "util/python_literal.h"
#include "util/strings.h"

namespace cloudfit {
namespace {

// FormatNumber writes digits with std::to_chars; they must be fmt's "{:.Nf}" digits (what it
// wrote before), trailing zeros dropped, for any double, halfway cases and extremes included.
TEST(FormatNumberTest, WritesFmtsFixedDigitsWithoutTrailingZeros) {
  auto reference = [](double value, int digits) {
    std::string s = fmt::format("{:.{}f}", value, digits);
    if (s.find('.') != std::string::npos) {
      while (!s.empty() && s.back() == '0') s.pop_back();
      if (!s.empty() && s.back() == '.') s.pop_back();
    }
    return s == "-0" ? std::string("0") : s;
  };
  std::vector<double> values = {0.0,
                                -0.0,
                                0.5,
                                1.5,
                                2.5,
                                0.125,
                                0.005,
                                1.005,
                                2.675,
                                1e-300,
                                -1e-300,
                                1e300,
                                -1e300,
                                123456789.125,
                                0.045,
                                1e21,
                                4.35e-7,
                                9.995,
                                99.995,
                                0.0001,
                                -0.004,
                                std::numeric_limits<double>::max(),
                                std::numeric_limits<double>::denorm_min(),
                                std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity(),
                                std::numeric_limits<double>::quiet_NaN()};
  std::mt19937_64 random(7);
  for (int i = 0; i < 20000; ++i) {
    double magnitude = std::pow(10.0, static_cast<double>(random() % 24) - 8);
    values.push_back((static_cast<double>(random() % 2000001) - 1e6) / 1e6 * magnitude);
  }
  // What tables format most (prices with 4 decimals, whole counts), and values on and next to
  // a halfway point, where a shortcut through value * 10^digits could round the wrong way.
  for (int i = 0; i < 20000; ++i) {
    double scale = std::pow(10.0, static_cast<double>(random() % 7));
    double k = static_cast<double>(random() % 100000000);
    for (double v : {k / 1e4, k, (k + 0.5) / scale, std::nextafter((k + 0.5) / scale, 0.0),
                     std::nextafter((k + 0.5) / scale, 1e300), -(k + 0.5) / scale}) {
      values.push_back(v);
    }
  }
  for (double v : values) {
    for (int digits : {0, 1, 2, 3, 4, 6}) {
      ASSERT_EQ(FormatNumber(v, digits), reference(v, digits)) << v << " to " << digits;
    }
  }
}

// DisplayWidth counts the bytes that start a code point, eight at a time: every length around
// the word size, and every byte value in every position, must count as one byte at a time does.
TEST(DisplayWidthTest, CountsCodePointStartsAsOneByteAtATimeDoes) {
  auto reference = [](const std::string& s) {
    size_t width = 0;
    for (unsigned char c : s) width += (c & 0xC0) != 0x80;
    return width;
  };
  EXPECT_EQ(DisplayWidth("caf\xc3\xa9 \xe2\x80\xa6 H100"), 11u);
  std::mt19937_64 random(11);
  for (int i = 0; i < 20000; ++i) {
    std::string s(random() % 40, ' ');
    for (char& c : s) c = static_cast<char>(random() % 256);
    ASSERT_EQ(DisplayWidth(s), reference(s)) << i;
  }
}

TEST(CsvTest, ParsesQuotesCrlfCommentsAndEmbeddedNewlines) {
  CsvTable t;
  std::string text =
      "# comment\r\na,b,c\r\n1,\"x, \"\"y\"\"\",3\r\n\r\n# skipped\n4,\"multi\nline\",6\n";
  ASSERT_TRUE(ParseCsv(text, "t.csv", CsvOptions(), &t).ok());
  ASSERT_EQ(t.header, (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0].fields[1], "x, \"y\"");
  EXPECT_EQ(t.rows[0].line, 3);
  EXPECT_EQ(t.rows[1].fields[1], "multi\nline");
  EXPECT_EQ(t.rows[1].line, 6);
}

TEST(CsvTest, RejectsWrongFieldCountWithFileAndLine) {
  CsvTable t;
  Status s = ParseCsv("a,b\n1,2\n3\n", "x.csv", CsvOptions(), &t);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("x.csv:3"), std::string::npos) << s.message();
}

TEST(CsvTest, RejectsUnterminatedQuote) {
  CsvTable t;
  Status s = ParseCsv("a,b\n1,\"open\n", "q.csv", CsvOptions(), &t);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("q.csv:2: unterminated"), std::string::npos) << s.message();
}

TEST(CsvTest, RowReaderNamesTheField) {
  CsvTable t;
  ASSERT_TRUE(ParseCsv("price,name\n-3,x\n", "p.csv", CsvOptions(), &t).ok());
  CsvRowReader r(t, t.rows[0]);
  r.Number("price", 0, 10);
  EXPECT_EQ(r.status().message(), "p.csv:2: field 'price': -3 is out of range [0, 10]");
  CsvRowReader r2(t, t.rows[0]);
  ASSERT_TRUE(ParseCsv("price\nabc\n", "p.csv", CsvOptions(), &t).ok());
  CsvRowReader r3(t, t.rows[0]);
  r3.OptionalNumber("price");
  EXPECT_NE(r3.status().message().find("'abc' is not a number"), std::string::npos);
}

TEST(CsvTest, EscapeRoundTrips) {
  EXPECT_EQ(CsvEscape("plain"), "plain");
  EXPECT_EQ(CsvEscape("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvEscape("say \"hi\""), "\"say \"\"hi\"\"\"");
}

TEST(StringsTest, NormalizeNameIgnoresCaseSpacesAndPunctuation) {
  EXPECT_EQ(NormalizeName("RTX A6000"), NormalizeName("rtx-a6000"));
  EXPECT_EQ(NormalizeName("A100_SXM4.80GB"), "a100sxm480gb");
}

TEST(StringsTest, ParseDoubleIsStrict) {
  double v = 0;
  EXPECT_TRUE(ParseDouble(" 3.5 ", &v));
  EXPECT_EQ(v, 3.5);
  EXPECT_FALSE(ParseDouble("3.5x", &v));
  EXPECT_FALSE(ParseDouble("", &v));
  EXPECT_FALSE(ParseDouble("nan", &v));
  EXPECT_FALSE(ParseDouble("inf", &v));
}

TEST(StringsTest, ClosestNamesSuggestsNearMisses) {
  std::vector<std::string> names = {"A100-SXM4-40GB", "H100-SXM5-80GB", "L4", "T4"};
  auto near = ClosestNames("H10", names);
  ASSERT_FALSE(near.empty());
  EXPECT_EQ(near[0], "H100-SXM5-80GB");
  EXPECT_TRUE(ClosestNames("zzzzzzzzzzzz", names).empty());
  EXPECT_EQ(DidYouMean({"a", "b"}), "; did you mean 'a' or 'b'?");
}

// ClosestNames stops filling a distance table once a name is certain to be too far; what it
// suggests, and in which order, is what full tables give. The reference below fills them whole.
TEST(StringsTest, ClosestNamesStopsEarlyWithTheSameSuggestions) {
  auto reference = [](const std::string& query, const std::vector<std::string>& names) {
    std::string key = NormalizeName(query);
    size_t max_distance = std::max<size_t>(2, key.size() / 2);
    std::multimap<size_t, std::string> ranked;
    for (const std::string& name : names) {
      std::string normalized = NormalizeName(name);
      size_t distance = EditDistance(key, normalized);
      if (!key.empty() && normalized.find(key) != std::string::npos)
        distance = std::min<size_t>(distance, 1);
      if (distance <= max_distance) ranked.emplace(distance, name);
    }
    std::vector<std::string> out;
    for (const auto& [distance, name] : ranked) {
      if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
      if (out.size() == 3) break;
    }
    return out;
  };
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  std::mt19937 random(13);
  auto word = [&](size_t most) {
    std::string w(random() % (most + 1), ' ');
    for (char& c : w) c = "ab1-c"[random() % 5];
    return w;
  };
  int suggested = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<std::string> names;
    for (int i = 0; i < 8; ++i) names.push_back(word(12));
    std::string query = word(trial % 10 == 0 ? 300 : 14);
    std::vector<std::string> expected = reference(query, names);
    suggested += !expected.empty();
    ASSERT_EQ(ClosestNames(query, names), expected) << query;
  }
  EXPECT_GT(suggested, 500) << "the trials include near names";
}

TEST(DateTest, ParsesAndFormatsIsoDates) {
  int days = 0;
  ASSERT_TRUE(ParseIsoDate("2026-11-22", &days));
  EXPECT_EQ(FormatIsoDate(days), "2026-11-22");
  ASSERT_TRUE(ParseIsoDate("1970-01-02", &days));
  EXPECT_EQ(days, 1);
  EXPECT_FALSE(ParseIsoDate("2026-02-30", &days));
  EXPECT_FALSE(ParseIsoDate("22/11/2026", &days));
}

TEST(PythonLiteralTest, ParsesSkyPilotGpuInfo) {
  nlohmann::json j;
  Status s = ParsePythonLiteral(
      "{'Gpus': [{'Name': 'A10G', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 22888}}], "
      "'TotalGpuMemoryInMiB': 22888, 'Ok': True, 'None': None, 'Ratio': 1.5}",
      &j);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(j["Gpus"][0]["Name"], "A10G");
  EXPECT_EQ(j["Gpus"][0]["MemoryInfo"]["SizeInMiB"], 22888);
  EXPECT_EQ(j["Ok"], true);
  EXPECT_TRUE(j["None"].is_null());
  EXPECT_DOUBLE_EQ(j["Ratio"].get<double>(), 1.5);
}

TEST(PythonLiteralTest, RejectsMalformedInput) {
  nlohmann::json j;
  EXPECT_FALSE(ParsePythonLiteral("{'a': 1", &j).ok());
  EXPECT_FALSE(ParsePythonLiteral("{'a' 1}", &j).ok());
  EXPECT_FALSE(ParsePythonLiteral("{1: 2}", &j).ok());
  EXPECT_FALSE(ParsePythonLiteral(std::string(100, '[') + std::string(100, ']'), &j).ok());
}

}  // namespace
}  // namespace cloudfit

#if defined(__GLIBC__) && defined(__linux__) && !defined(__SANITIZE_ADDRESS__)
// ASan replaces malloc (its own heap, no glibc top to reuse), so the test needs glibc's.
TEST(AllocatorTest, PrefaultHeapLeavesTheNextAllocationMapped) {
  cloudfit::KeepFreedMemory();
  constexpr size_t kBytes = 2 << 20;
  cloudfit::PrefaultHeap(kBytes);
  // A block a little smaller reuses the prefaulted top: every page of it is already mapped, so
  // touching it takes no fault.
  constexpr size_t kUsed = kBytes - (64 << 10);
  auto* block = static_cast<char*>(malloc(kUsed));
  ASSERT_NE(block, nullptr);
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t start = (reinterpret_cast<uintptr_t>(block) + page - 1) & ~(page - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(block) + kUsed) & ~(page - 1);
  std::vector<unsigned char> resident((end - start) / page);
  int status = mincore(reinterpret_cast<void*>(start), end - start, resident.data());
  free(block);
  ASSERT_EQ(status, 0);
  size_t mapped = static_cast<size_t>(
      std::count_if(resident.begin(), resident.end(), [](unsigned char r) { return r & 1; }));
  EXPECT_EQ(mapped, resident.size());
}
#endif
