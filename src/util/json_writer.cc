#include "util/json_writer.h"

#include <cassert>
#include <charconv>
#include <cmath>
#include <cstring>

namespace cloudfit {

namespace {

// The bytes dump() copies as they are: printable ASCII other than the quote and the backslash.
struct PlainBytes {
  bool plain[256] = {};
  constexpr PlainBytes() {
    for (int c = 0x20; c < 0x80; ++c) plain[c] = c != '"' && c != '\\';
  }
};
constexpr PlainBytes kPlain;

// Whether dump() would copy every byte of `text` as it is: answers are mostly such text, so
// eight bytes are checked at once (the zero-byte tests of "Bit Twiddling Hacks", which are exact
// for whether some byte matches), the tail by table.
bool PlainAscii(std::string_view text) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  auto has_zero_byte = [](uint64_t v) { return (v - kOnes) & ~v; };
  const char* p = text.data();
  size_t n = text.size();
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t x;
    std::memcpy(&x, p, sizeof x);
    uint64_t special = x |                                 // a byte from 0x80: not ASCII
                       ((x - kOnes * 0x20) & ~x) |         // a byte below 0x20 (with none above)
                       has_zero_byte(x ^ (kOnes * '"')) |  // a quote
                       has_zero_byte(x ^ (kOnes * '\\'));  // a backslash
    if (special & kHigh) return false;
  }
  for (; n > 0; ++p, --n) {
    if (!kPlain.plain[static_cast<unsigned char>(*p)]) return false;
  }
  return true;
}

bool Ascii(std::string_view text) {
  for (unsigned char c : text) {
    if (c >= 0x80) return false;
  }
  return true;
}

// Names and texts up to this long are quoted in a buffer on the stack and appended at once.
constexpr size_t kShortText = 120;

// An integer in decimal, as dump() writes one (20 digits and a sign at most).
template <typename Integer>
void AppendDecimal(Integer number, std::string* out) {
  char buffer[24];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, number);
  out->append(buffer, static_cast<size_t>(result.ptr - buffer));
}

}  // namespace

JsonWriter::JsonWriter(std::string* out, int indent) : out_(out), indent_(indent) {
  levels_.reserve(8);
}

void JsonWriter::Indent(size_t levels) {
  if (indent_ > 0) out_->append(levels * static_cast<size_t>(indent_), ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (levels_.empty()) return;
  Level& level = levels_.back();
  assert(!level.object && "an object's value needs a key first");
  if (!level.empty) out_->push_back(',');
  level.empty = false;
  if (indent_ >= 0) {
    out_->push_back('\n');
    Indent(levels_.size());
  }
}

void JsonWriter::Key(std::string_view key) {
  assert(!levels_.empty() && levels_.back().object && !after_key_);
  Level& level = levels_.back();
#ifndef NDEBUG
  // dump() writes a std::map's members: in ascending byte order, each name once.
  assert((level.empty || level.last_key < key) && "keys must come in ascending order");
  level.last_key = key;
#endif
  const bool first = level.empty;
  level.empty = false;
  after_key_ = true;
  if (indent_ < 0 && key.size() <= kShortText && PlainAscii(key)) {
    // The usual case (a compact answer's member names) in one append: ,"name":
    char buffer[kShortText + 4];
    char* p = buffer;
    if (!first) *p++ = ',';
    *p++ = '"';
    std::memcpy(p, key.data(), key.size());
    p += key.size();
    *p++ = '"';
    *p++ = ':';
    out_->append(buffer, static_cast<size_t>(p - buffer));
    return;
  }
  if (!first) out_->push_back(',');
  if (indent_ >= 0) {
    out_->push_back('\n');
    Indent(levels_.size());
  }
  WriteString(key);
  if (indent_ >= 0) {
    out_->append(": ");
  } else {
    out_->push_back(':');
  }
}

void JsonWriter::Open(bool object) {
  BeforeValue();
  out_->push_back(object ? '{' : '[');
  levels_.push_back(Level{object, true, {}});
}

void JsonWriter::Close(bool object) {
  assert(!levels_.empty() && levels_.back().object == object && !after_key_);
  bool empty = levels_.back().empty;
  levels_.pop_back();
  // dump() writes an empty object or array on one line, "{}" and "[]", even when indenting.
  if (!empty && indent_ >= 0) {
    out_->push_back('\n');
    Indent(levels_.size());
  }
  out_->push_back(object ? '}' : ']');
}

void JsonWriter::BeginObject() { Open(true); }
void JsonWriter::EndObject() { Close(true); }
void JsonWriter::BeginArray() { Open(false); }
void JsonWriter::EndArray() { Close(false); }

void JsonWriter::Value(std::string_view text) {
  BeforeValue();
  WriteString(text);
}

void JsonWriter::Value(double number) {
  BeforeValue();
  if (!std::isfinite(number)) {
    out_->append("null");
    return;
  }
  // dump()'s own shortest round-trip formatting (Grisu2, "1.0" for whole numbers, "1e+20").
  char buffer[64];
  char* end = nlohmann::detail::to_chars(buffer, buffer + sizeof buffer, number);
  out_->append(buffer, static_cast<size_t>(end - buffer));
}

void JsonWriter::Value(bool flag) {
  BeforeValue();
  out_->append(flag ? "true" : "false");
}

void JsonWriter::Value(const std::optional<double>& number) {
  if (number) {
    Value(*number);
  } else {
    Null();
  }
}

void JsonWriter::Value(const std::vector<std::string>& texts) {
  BeginArray();
  for (const std::string& text : texts) Value(text);
  EndArray();
}

void JsonWriter::Value(const nlohmann::json& document) {
  BeforeValue();
  std::string text = document.dump(indent_, ' ', false, nlohmann::json::error_handler_t::replace);
  if (indent_ <= 0 || levels_.empty()) {
    out_->append(text);
    return;
  }
  // dump() indents from column 0; a nested document continues at this depth. Its strings
  // escape their line breaks, so every '\n' in the text is one dump() wrote for layout.
  for (char c : text) {
    out_->push_back(c);
    if (c == '\n') Indent(levels_.size());
  }
}

void JsonWriter::Null() {
  BeforeValue();
  out_->append("null");
}

void JsonWriter::Written(std::string_view compact_text) {
  assert(indent_ < 0 && "kept text is compact");
  BeforeValue();
  out_->append(compact_text);
}

void JsonWriter::WriteInteger(int64_t number) {
  BeforeValue();
  AppendDecimal(number, out_);
}

void JsonWriter::WriteUnsigned(uint64_t number) {
  BeforeValue();
  AppendDecimal(number, out_);
}

void JsonWriter::WriteString(std::string_view text) {
  if (PlainAscii(text)) {
    if (text.size() <= kShortText) {
      // One append rather than three.
      char buffer[kShortText + 2];
      buffer[0] = '"';
      std::memcpy(buffer + 1, text.data(), text.size());
      buffer[text.size() + 1] = '"';
      out_->append(buffer, text.size() + 2);
      return;
    }
    out_->push_back('"');
    out_->append(text);
    out_->push_back('"');
    return;
  }
  if (!Ascii(text)) {
    // UTF-8 (valid or not) goes through dump() itself: rare in answers, and its validation and
    // replacement of invalid bytes are then the same by construction.
    out_->append(nlohmann::json(std::string(text))
                     .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    return;
  }
  // ASCII with characters to escape: dump()'s escapes (short forms, else \u00xx in lower case).
  out_->push_back('"');
  for (char c : text) {
    switch (c) {
      case '"':
        out_->append("\\\"");
        break;
      case '\\':
        out_->append("\\\\");
        break;
      case '\b':
        out_->append("\\b");
        break;
      case '\f':
        out_->append("\\f");
        break;
      case '\n':
        out_->append("\\n");
        break;
      case '\r':
        out_->append("\\r");
        break;
      case '\t':
        out_->append("\\t");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          static const char kHex[] = "0123456789abcdef";
          char escape[6] = {'\\', 'u', '0', '0', kHex[(c >> 4) & 0xF], kHex[c & 0xF]};
          out_->append(escape, sizeof escape);
        } else {
          out_->push_back(c);
        }
    }
  }
  out_->push_back('"');
}

}  // namespace cloudfit
