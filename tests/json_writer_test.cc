// JsonWriter must write what nlohmann::json's dump() writes for the same document, byte for
// byte: answers written with it are compared with the golden corpus and read by programs that
// were written against dump()'s output.
#include "util/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace cloudfit {
namespace {

std::string Dumped(const nlohmann::json& document, int indent) {
  return document.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

TEST(JsonWriterTest, NumbersAreFormattedAsDumpFormatsThem) {
  const double doubles[] = {0.0,
                            -0.0,
                            1.0,
                            -2.0,
                            0.1,
                            1.0 / 3,
                            4.2792657327763726e-05,
                            1e-7,
                            123456789012345678.0,
                            1e300,
                            -1e-300,
                            std::numeric_limits<double>::denorm_min(),
                            std::numeric_limits<double>::max(),
                            std::nan(""),
                            std::numeric_limits<double>::infinity(),
                            -std::numeric_limits<double>::infinity()};
  for (double d : doubles) {
    std::string text;
    JsonWriter out(&text);
    out.Value(d);
    EXPECT_EQ(text, Dumped(nlohmann::json(d), -1)) << d;
  }
  const long long integers[] = {0, -1, 42, std::numeric_limits<long long>::min(),
                                std::numeric_limits<long long>::max()};
  for (long long i : integers) {
    std::string text;
    JsonWriter out(&text);
    out.Value(i);
    EXPECT_EQ(text, Dumped(nlohmann::json(i), -1)) << i;
  }
  std::string text;
  JsonWriter out(&text);
  out.Value(std::numeric_limits<size_t>::max());
  EXPECT_EQ(text, Dumped(nlohmann::json(std::numeric_limits<size_t>::max()), -1));
}

TEST(JsonWriterTest, StringsAreEscapedAsDumpEscapesThem) {
  std::string every_ascii;
  for (int c = 1; c < 128; ++c) every_ascii.push_back(static_cast<char>(c));
  const std::string texts[] = {"",
                               "plain text",
                               "quote \" and backslash \\",
                               std::string("nul \0 inside", 12),
                               every_ascii,
                               "1.9 it/s \xc3\x97 8 \xe2\x89\xa5 x",  // valid UTF-8
                               "broken \xc3 and \xff\xfe bytes",      // invalid UTF-8
                               "overlong \xc0\xaf slash"};
  for (const std::string& s : texts) {
    std::string text;
    JsonWriter out(&text);
    out.Value(s);
    EXPECT_EQ(text, Dumped(nlohmann::json(s), -1)) << s;
  }
}

// Plain text is recognised eight bytes at a time: every byte value at every position of a
// word and of the tail must be escaped exactly as dump() escapes it.
TEST(JsonWriterTest, EveryByteAtEveryPositionIsEscapedAsDumpEscapesIt) {
  for (int byte = 0; byte < 256; ++byte) {
    for (size_t position = 0; position < 19; ++position) {
      std::string s(19, 'a');
      s[position] = static_cast<char>(byte);
      std::string text;
      JsonWriter out(&text);
      out.Value(s);
      ASSERT_EQ(text, Dumped(nlohmann::json(s), -1)) << "byte " << byte << " at " << position;
      // The same text as a member name, after another member.
      std::string object;
      JsonWriter member(&object);
      member.BeginObject();
      member.Field("", 1);
      member.Field(s, 2);
      member.EndObject();
      ASSERT_EQ(object, Dumped(nlohmann::json{{"", 1}, {s, 2}}, -1)) << "byte " << byte;
    }
  }
}

// A document with every kind of value, nested, written both ways, compactly and indented.
TEST(JsonWriterTest, DocumentsMatchDumpCompactAndIndented) {
  nlohmann::json nested = {{"b", {1, 2.5, nullptr}}, {"a", nlohmann::json::object()}};
  nlohmann::json expected = {
      {"count", 3},
      {"empty_list", nlohmann::json::array()},
      {"empty_object", nlohmann::json::object()},
      {"flag", false},
      {"list", {"x", "y\n"}},
      {"nested", nested},
      {"none", nullptr},
      {"optional", 0.25},
      {"ratio", 0.5},
      {"rows", {{{"a", 1}}, nlohmann::json::array({nlohmann::json::array()})}}};
  for (int indent : {-1, 0, 2, 4}) {
    std::string text;
    JsonWriter out(&text, indent);
    out.BeginObject();
    out.Field("count", 3);
    out.Key("empty_list");
    out.BeginArray();
    out.EndArray();
    out.Key("empty_object");
    out.BeginObject();
    out.EndObject();
    out.Field("flag", false);
    out.Field("list", std::vector<std::string>{"x", "y\n"});
    out.Field("nested", nested);  // a document inside, at this depth
    out.NullField("none");
    out.Field("optional", std::optional<double>(0.25));
    out.Field("ratio", 0.5);
    out.Key("rows");
    out.BeginArray();
    out.BeginObject();
    out.Field("a", 1);
    out.EndObject();
    out.BeginArray();
    out.BeginArray();
    out.EndArray();
    out.EndArray();
    out.EndArray();
    out.EndObject();
    EXPECT_EQ(text, Dumped(expected, indent)) << "indent " << indent;
  }
}

TEST(JsonWriterTest, AnEmptyOptionalIsNull) {
  std::string text;
  JsonWriter out(&text);
  out.BeginArray();
  out.Value(std::optional<double>());
  out.Value(true);
  out.EndArray();
  EXPECT_EQ(text, "[null,true]");
}

// Kept text (a candidate written for an earlier answer) takes a value's place: separators
// before it and after it as any value's.
TEST(JsonWriterTest, WrittenTextTakesAValuesPlace) {
  std::string kept;
  JsonWriter part(&kept);
  part.BeginObject();
  part.Field("a", 1);
  part.EndObject();

  std::string text;
  JsonWriter out(&text);
  out.BeginObject();
  out.Key("list");
  out.BeginArray();
  out.Written(kept);
  out.Value(2);
  out.Written(kept);
  out.EndArray();
  out.Key("one");
  out.Written(kept);
  out.Field("z", false);
  out.EndObject();
  EXPECT_EQ(text, R"({"list":[{"a":1},2,{"a":1}],"one":{"a":1},"z":false})");
  EXPECT_TRUE(out.compact());
  EXPECT_FALSE(JsonWriter(&text, 2).compact());
}

}  // namespace
}  // namespace cloudfit
