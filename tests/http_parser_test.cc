// The HTTP/1.1 request parser alone: framing, limits as bytes arrive, and the refusals that
// close the doors to request smuggling.
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "server/http_parser.h"

namespace cloudfit {
namespace {

using State = HttpRequestParser::State;

// Feeds `text` one byte at a time (the worst split a network can make) or whole.
HttpRequestParser Parse(const std::string& text, HttpLimits limits = {}, bool bytewise = false,
                        size_t* consumed = nullptr) {
  HttpRequestParser p(limits);
  size_t total = 0;
  if (bytewise) {
    for (size_t i = 0; i < text.size() && total == i; ++i) total += p.Feed(text.substr(i, 1));
  } else {
    total = p.Feed(text);
  }
  if (consumed) *consumed = total;
  return p;
}

TEST(HttpParserTest, ParsesARequestWhateverTheSplit) {
  const std::string text =
      "POST /v1/recommend?x=1 HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
      "Content-Length: 7\r\n\r\n{\"a\":1}";
  for (bool bytewise : {false, true}) {
    HttpRequestParser p = Parse(text, {}, bytewise);
    ASSERT_EQ(p.state(), State::kComplete) << p.error_message();
    EXPECT_EQ(p.request().method, "POST");
    EXPECT_EQ(p.request().path, "/v1/recommend");
    EXPECT_EQ(p.request().query, "x=1");
    EXPECT_EQ(p.request().body, "{\"a\":1}");
    ASSERT_NE(p.request().Header("content-type"), nullptr);
    EXPECT_EQ(*p.request().Header("content-type"), "application/json");
    EXPECT_TRUE(p.request().keep_alive);
  }
}

TEST(HttpParserTest, LeavesPipelinedRequestsUnconsumed) {
  std::string first = "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n";
  std::string second = "GET /v1/gpus HTTP/1.1\r\nHost: a\r\n\r\n";
  size_t consumed = 0;
  HttpRequestParser p = Parse(first + second, {}, false, &consumed);
  ASSERT_EQ(p.state(), State::kComplete);
  EXPECT_EQ(consumed, first.size());
  p.Reset();
  EXPECT_EQ(p.Feed(second), second.size());
  ASSERT_EQ(p.state(), State::kComplete);
  EXPECT_EQ(p.request().path, "/v1/gpus");
}

TEST(HttpParserTest, DecodesChunkedBodiesAndIgnoresTrailers) {
  std::string text =
      "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
      "4;ext=1\r\nWiki\r\n5\r\npedia\r\n0\r\nTrailer: yes\r\n\r\n";
  for (bool bytewise : {false, true}) {
    HttpRequestParser p = Parse(text, {}, bytewise);
    ASSERT_EQ(p.state(), State::kComplete) << p.error_message();
    EXPECT_EQ(p.request().body, "Wikipedia");
  }
}

TEST(HttpParserTest, BodyLimitsApplyBeforeTheBodyIsHeld) {
  HttpLimits limits;
  limits.max_body_bytes = 10;
  HttpRequestParser declared =
      Parse("POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 999999999999\r\n\r\n", limits);
  EXPECT_EQ(declared.state(), State::kError);
  EXPECT_EQ(declared.error_status(), 413);
  // Chunked: refused at the chunk whose size would pass the limit, before its data arrives.
  HttpRequestParser chunked = Parse(
      "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n8\r\n",
      limits);
  EXPECT_EQ(chunked.state(), State::kError);
  EXPECT_EQ(chunked.error_status(), 413);
  EXPECT_LE(chunked.request().body.size(), 10u);
  HttpRequestParser huge_chunk = Parse(
      "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffffff\r\n",
      limits);
  EXPECT_EQ(huge_chunk.error_status(), 413);
}

TEST(HttpParserTest, HeaderLimitsAre414And431) {
  HttpLimits limits;
  limits.max_request_line_bytes = 100;
  limits.max_header_bytes = 300;
  limits.max_headers = 5;
  HttpRequestParser long_target =
      Parse("GET /" + std::string(200, 'a') + " HTTP/1.1\r\nHost: a\r\n\r\n", limits);
  EXPECT_EQ(long_target.error_status(), 414);
  // Refused while the line is still arriving: no end of line needed.
  HttpRequestParser endless = Parse("GET /" + std::string(200, 'a'), limits);
  EXPECT_EQ(endless.error_status(), 414);
  HttpRequestParser big_headers =
      Parse("GET / HTTP/1.1\r\nHost: a\r\nX: " + std::string(400, 'b') + "\r\n\r\n", limits);
  EXPECT_EQ(big_headers.error_status(), 431);
  std::string many = "GET / HTTP/1.1\r\nHost: a\r\n";
  for (int i = 0; i < 6; ++i) many += fmt::format("X{}: y\r\n", i);
  EXPECT_EQ(Parse(many + "\r\n", limits).error_status(), 431);
}

TEST(HttpParserTest, RefusesAmbiguousFraming) {
  auto status = [](const std::string& headers) {
    return Parse("POST /x HTTP/1.1\r\n" + headers + "\r\n").error_status();
  };
  EXPECT_EQ(status("Host: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n"), 400);
  EXPECT_EQ(status("Host: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n"), 400);
  EXPECT_EQ(status("Host: a\r\nContent-Length: 3, 4\r\n"), 400);
  EXPECT_EQ(status("Host: a\r\nContent-Length: -3\r\n"), 400);
  EXPECT_EQ(status("Host: a\r\nTransfer-Encoding: gzip, chunked\r\n"), 501);
  EXPECT_EQ(status("Host: a\r\nX: folded\r\n continued\r\n"), 400);
  EXPECT_EQ(status("Host : a\r\n"), 400);
  EXPECT_EQ(status("Content-Length: 0\r\n"), 400) << "HTTP/1.1 needs Host";
  EXPECT_EQ(status("Host: a\r\nHost: b\r\n"), 400);
  EXPECT_EQ(status("Host: a\r\nExpect: something-else\r\n"), 417);
  // Repeated but equal lengths are one length.
  HttpRequestParser same = Parse("POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n"
                                 "Content-Length: 2\r\n\r\nok");
  EXPECT_EQ(same.state(), State::kComplete);
}

TEST(HttpParserTest, RequestLineAndVersions) {
  EXPECT_EQ(Parse("GET / HTTP/2.0\r\nHost: a\r\n\r\n").error_status(), 505);
  EXPECT_EQ(Parse("GET / HTTX/1.1\r\n\r\n").error_status(), 400);
  EXPECT_EQ(Parse("GET  / HTTP/1.1\r\n\r\n").error_status(), 400);
  EXPECT_EQ(Parse("G(T / HTTP/1.1\r\n\r\n").error_status(), 400);
  // Not a method at all: refused at once, without waiting for a line end.
  EXPECT_EQ(Parse(std::string("\x16\x03\x01\x02\x00", 5)).error_status(), 400);
  EXPECT_EQ(Parse("GET nopath HTTP/1.1\r\nHost: a\r\n\r\n").error_status(), 400);
  EXPECT_EQ(Parse("GET /%zz HTTP/1.1\r\nHost: a\r\n\r\n").error_status(), 400);
  // HTTP/1.0: no Host needed, closes unless asked to keep alive.
  HttpRequestParser old = Parse("GET / HTTP/1.0\r\n\r\n");
  ASSERT_EQ(old.state(), State::kComplete);
  EXPECT_FALSE(old.request().keep_alive);
  HttpRequestParser kept = Parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
  EXPECT_TRUE(kept.request().keep_alive);
  HttpRequestParser closing = Parse("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
  EXPECT_FALSE(closing.request().keep_alive);
  // Bare LF line ends and empty lines before the request are accepted.
  HttpRequestParser lf = Parse("\r\n\nGET /a%20b HTTP/1.1\nHost: a\n\n");
  ASSERT_EQ(lf.state(), State::kComplete) << lf.error_message();
  EXPECT_EQ(lf.request().path, "/a b");
  // Any bytes may come out of percent-decoding; routing decides what they mean.
  HttpRequestParser binary = Parse("GET /%ff%00 HTTP/1.1\r\nHost: a\r\n\r\n");
  ASSERT_EQ(binary.state(), State::kComplete);
  EXPECT_EQ(binary.request().path, std::string("/\xff\0", 3));
}

TEST(HttpParserTest, QueryStrings) {
  std::vector<std::pair<std::string, std::string>> pairs;
  ASSERT_TRUE(ParseQuery("gpu=H100&gpu=A100%2080GB&top=3&flag&name=a+b", &pairs));
  ASSERT_EQ(pairs.size(), 5u);
  EXPECT_EQ(pairs[1].second, "A100 80GB");
  EXPECT_EQ(pairs[3].first, "flag");
  EXPECT_EQ(pairs[4].second, "a b");
  EXPECT_FALSE(ParseQuery("a=%4", &pairs));
}

}  // namespace
}  // namespace cloudfit
