// The checks every boundary goes through (util/validate.h): NaN and infinities refused by name,
// whole numbers checked before narrowing, bounded names and text, bounded JSON, plausible prices.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "util/validate.h"

namespace cloudfit {
namespace {

TEST(ValidateTest, NumbersMustBeFiniteAndInRange) {
  EXPECT_TRUE(CheckNumber("hours", 5, 0, 10).ok());
  Status nan = CheckNumber("--deadline-hours", std::nan(""), 0, 10, "hours");
  ASSERT_FALSE(nan.ok());
  EXPECT_EQ(nan.message(), "--deadline-hours: NaN is not allowed; a number of hours in [0, 10]");
  Status inf = CheckNumber("x", HUGE_VAL, 0, 10);
  ASSERT_FALSE(inf.ok());
  EXPECT_NE(inf.message().find("'inf' is not allowed"), std::string::npos) << inf.message();
  EXPECT_FALSE(CheckNumber("x", -1, 0, 10).ok());
  EXPECT_FALSE(CheckNumber("x", 10.5, 0, 10).ok());
}

TEST(ValidateTest, ParsedNumbersNameNanAndInfinity) {
  double v = 0;
  for (const char* text : {"nan", "NaN", "-nan", "inf", "+Infinity", "-inf"}) {
    Status s = ParseNumber("deadline_hours", text, 0, 100, "hours", &v);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_NE(s.message().find("is not allowed; a finite number"), std::string::npos)
        << s.message();
  }
  ASSERT_TRUE(ParseNumber("deadline_hours", " 12.5 ", 0, 100, "hours", &v).ok());
  EXPECT_EQ(v, 12.5);
  Status s = ParseNumber("deadline_hours", "1e400", 0, 100, "hours", &v);
  EXPECT_FALSE(s.ok());
  s = ParseNumber("tokens", "abc", 1, 10, "tokens", &v);
  EXPECT_EQ(s.message(), "tokens: 'abc' is not allowed; a number of tokens in [1, 10]");
}

TEST(ValidateTest, WholeNumbersAreCheckedBeforeNarrowing) {
  long long v = 0;
  ASSERT_TRUE(ParseWholeNumber("batch", "4096", 1, 1 << 20, "samples", &v).ok());
  EXPECT_EQ(v, 4096);
  ASSERT_TRUE(ParseWholeNumber("batch", "4096.0", 1, 1 << 20, "samples", &v).ok());
  EXPECT_EQ(v, 4096);
  ASSERT_TRUE(ParseWholeNumber("batch", "4e3", 1, 1 << 20, "samples", &v).ok());
  EXPECT_EQ(v, 4000);
  Status s = ParseWholeNumber("batch", "2.5", 1, 100, "samples", &v);
  EXPECT_EQ(s.message(), "batch: '2.5' is not allowed; a whole number of samples in [1, 100]");
  // Beyond long long, beyond int, and 2^54 KiB: refused, never wrapped.
  EXPECT_FALSE(ParseWholeNumber("n", "99999999999999999999999", 1, 100, "", &v).ok());
  EXPECT_FALSE(ParseWholeNumber("n", "1e300", 1, 100, "", &v).ok());
  EXPECT_FALSE(ParseWholeNumber("n", "18014398509481984", 1, 1 << 20, "KiB", &v).ok());
  EXPECT_FALSE(ParseWholeNumber("n", "nan", 1, 100, "", &v).ok());
  EXPECT_FALSE(CheckWholeNumber("gpus", 0.0001, 1, 1024).ok());
  EXPECT_TRUE(CheckWholeNumber("gpus", 8, 1, 1024).ok());
}

TEST(ValidateTest, NamesAndTextAreBounded) {
  EXPECT_TRUE(CheckName("model", "Llama-3.1-8B").ok());
  EXPECT_TRUE(CheckName("model", "模型-7B").ok());  // UTF-8 is fine
  EXPECT_FALSE(CheckName("model", "  ").ok());
  Status s = CheckName("model", std::string(kMaxNameBytes + 1, 'a'));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("at most 256 bytes"), std::string::npos) << s.message();
  EXPECT_LT(s.message().size(), 200u) << "the message shows a clipped value";
  EXPECT_FALSE(CheckName("model", "bad\xff").ok());
  EXPECT_FALSE(CheckName("model", "new\nline").ok());
  EXPECT_TRUE(CheckText("measured", std::string(kMaxTextBytes, 'x')).ok());
  EXPECT_FALSE(CheckText("measured", std::string(kMaxTextBytes + 1, 'x')).ok());
}

TEST(ValidateTest, Utf8CheckRefusesOverlongSurrogatesAndTruncation) {
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"));  // é € 😀
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // surrogate U+D800
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xe2\x82"));          // cut short
  EXPECT_FALSE(IsValidUtf8("\xff"));
}

TEST(ValidateTest, ShownClipsAndCleansValues) {
  EXPECT_EQ(Shown("A100"), "A100");
  EXPECT_EQ(Shown("a\xff\nb"), "a??b");
  std::string shown = Shown(std::string(10000, 'x'));
  EXPECT_EQ(shown, std::string(64, 'x') + "...");
}

TEST(ValidateTest, JsonIsBoundedInSizeDepthAndEncoding) {
  nlohmann::json out;
  ASSERT_TRUE(ParseJson("body", R"({"a": [1, {"b": "]"}]})", 1000, &out).ok());
  EXPECT_EQ(JsonNestingDepth(R"({"a": [1, {"b": "[[["}]})"), 3);
  std::string deep(100000, '[');
  Status s = ParseJson("body", deep, 1 << 20, &out);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("nested 100000 levels deep; at most 32"), std::string::npos)
      << s.message();
  s = ParseJson("body", std::string(2000, ' '), 1000, &out);
  EXPECT_NE(s.message().find("2000 bytes of JSON; at most 1000"), std::string::npos);
  s = ParseJson("body", "{\"a\": \"\xff\"}", 1000, &out);
  EXPECT_EQ(s.message(), "body: JSON must be UTF-8 text");
  s = ParseJson("body", "{\"a\": ", 1000, &out);
  EXPECT_NE(s.message().find("body: malformed JSON: "), std::string::npos) << s.message();
  // Writing never throws on bad bytes a caller put into a string.
  nlohmann::json bad = {{"error", std::string("no route GET /\xff")}};
  EXPECT_EQ(DumpJson(bad), "{\"error\":\"no route GET /\xef\xbf\xbd\"}");
}

TEST(ValidateTest, PricesMustBePlausibleForTheirCurrency) {
  EXPECT_TRUE(CheckPricePerHour("ondemand", 32.77, "USD", 1).ok());
  EXPECT_TRUE(CheckPricePerHour("ondemand", 0.0042, "USD", 1).ok());
  Status tiny = CheckPricePerHour("ondemand", 1e-300, "USD", 1);
  ASSERT_FALSE(tiny.ok());
  EXPECT_NE(tiny.message().find("ondemand: '1e-300' is not allowed; an hourly price"),
            std::string::npos)
      << tiny.message();
  EXPECT_FALSE(CheckPricePerHour("ondemand", 50000, "USD", 1).ok());
  // 50,000 yuan is about US$6,900 an hour: plausible; 0.0002 yuan is not.
  EXPECT_TRUE(CheckPricePerHour("ondemand", 50000, "CNY", 0.137487).ok());
  EXPECT_FALSE(CheckPricePerHour("ondemand", 0.0002, "CNY", 0.137487).ok());
  EXPECT_FALSE(CheckPricePerHour("ondemand", std::nan(""), "USD", 1).ok());
}

TEST(ValidateTest, DeviceAndReplicaCountsStayFarFromOverflow) {
  EXPECT_TRUE(CheckDeviceCount("--nodes", 8, 16384).ok());
  Status s = CheckDeviceCount("--nodes", 1024, 4096);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("at most 262144 devices"), std::string::npos) << s.message();
  int replicas = 0;
  ASSERT_TRUE(CountToCover("request_rate", 30, 10, kMaxServingReplicas, "replicas", &replicas).ok());
  EXPECT_EQ(replicas, 3);
  ASSERT_TRUE(CountToCover("request_rate", 31, 10, kMaxServingReplicas, "replicas", &replicas).ok());
  EXPECT_EQ(replicas, 4);
  s = CountToCover("request_rate", 1e7, 0.01, kMaxServingReplicas, "replicas", &replicas);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("request_rate: ", 0), 0u) << s.message();
  EXPECT_FALSE(CountToCover("request_rate", 1, 0, kMaxServingReplicas, "replicas", &replicas).ok());
}

}  // namespace
}  // namespace cloudfit
