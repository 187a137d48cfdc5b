#include "util/python_literal.h"

#include <cctype>

#include <fmt/format.h>

#include "util/strings.h"

namespace cloudfit {

namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Status ParseDocument(nlohmann::json* out) {
    Status s = ParseValue(out, 0);
    if (!s.ok()) return s;
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the value");
    return Status::OK();
  }

 private:
  Status Error(std::string_view what) const {
    return Status::Corruption(fmt::format("Python literal at offset {}: {}", pos_, what));
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  Status ParseValue(nlohmann::json* out, int depth) {
    if (depth > kMaxDepth) return Error("nested too deeply");
    SkipSpace();
    if (pos_ >= text_.size()) return Error("unexpected end");
    char c = text_[pos_];
    if (c == '{') return ParseDict(out, depth);
    if (c == '[') return ParseSequence(out, depth, ']');
    if (c == '(') return ParseSequence(out, depth, ')');
    if (c == '\'' || c == '"') {
      std::string s;
      Status status = ParseString(&s);
      *out = std::move(s);
      return status;
    }
    return ParseAtom(out);
  }

  Status ParseDict(nlohmann::json* out, int depth) {
    ++pos_;  // '{'
    *out = nlohmann::json::object();
    if (Consume('}')) return Status::OK();
    while (true) {
      nlohmann::json key;
      Status s = ParseValue(&key, depth + 1);
      if (!s.ok()) return s;
      if (!key.is_string()) return Error("dict keys must be strings");
      if (!Consume(':')) return Error("expected ':'");
      nlohmann::json value;
      s = ParseValue(&value, depth + 1);
      if (!s.ok()) return s;
      (*out)[key.get<std::string>()] = std::move(value);
      if (Consume(',')) {
        if (Consume('}')) return Status::OK();
        continue;
      }
      if (Consume('}')) return Status::OK();
      return Error("expected ',' or '}'");
    }
  }

  Status ParseSequence(nlohmann::json* out, int depth, char close) {
    ++pos_;  // '[' or '('
    *out = nlohmann::json::array();
    if (Consume(close)) return Status::OK();
    while (true) {
      nlohmann::json value;
      Status s = ParseValue(&value, depth + 1);
      if (!s.ok()) return s;
      out->push_back(std::move(value));
      if (Consume(',')) {
        if (Consume(close)) return Status::OK();
        continue;
      }
      if (Consume(close)) return Status::OK();
      return Error(fmt::format("expected ',' or '{}'", close));
    }
  }

  Status ParseString(std::string* out) {
    char quote = text_[pos_++];
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (c == quote) return Status::OK();
      if (c == '\\') {
        if (pos_ >= text_.size()) break;
        char escaped = text_[pos_++];
        switch (escaped) {
          case 'n': out->push_back('\n'); break;
          case 't': out->push_back('\t'); break;
          case 'r': out->push_back('\r'); break;
          default: out->push_back(escaped);
        }
        continue;
      }
      out->push_back(c);
    }
    return Error("unterminated string");
  }

  Status ParseAtom(nlohmann::json* out) {
    size_t start = pos_;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+' ||
          c == '_') {
        ++pos_;
      } else {
        break;
      }
    }
    std::string_view atom = text_.substr(start, pos_ - start);
    if (atom.empty()) return Error("expected a value");
    if (atom == "True") *out = true;
    else if (atom == "False") *out = false;
    else if (atom == "None") *out = nullptr;
    else {
      long long integer = 0;
      double number = 0;
      if (ParseInt(atom, &integer)) *out = integer;
      else if (ParseDouble(atom, &number)) *out = number;
      else return Error(fmt::format("unknown token '{}'", atom));
    }
    return Status::OK();
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

Status ParsePythonLiteral(std::string_view text, nlohmann::json* out) {
  return Parser(text).ParseDocument(out);
}

}  // namespace cloudfit
