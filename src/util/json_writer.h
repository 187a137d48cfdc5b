// JSON text written straight from values, without building a document first: the same bytes
// nlohmann::json's dump() gives for the document those values would make (keys in ascending
// byte order as its std::map keeps them, its number formatting, its escaping, invalid UTF-8
// replaced), at the cost of appending to a string. Answers that are written once and read by
// another program (a recommendation is 30-60 KB) are written this way; a document that is
// built, changed and read back stays an nlohmann::json.
//
//   std::string text;
//   JsonWriter out(&text);
//   out.BeginObject();
//   out.Field("count", 2);      // keys must come in ascending order (checked in debug builds)
//   out.Key("names");
//   out.Value(names);            // a vector of strings
//   out.EndObject();
#ifndef CLOUDFIT_UTIL_JSON_WRITER_H_
#define CLOUDFIT_UTIL_JSON_WRITER_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace cloudfit {

class JsonWriter {
 public:
  // `indent` < 0 writes compactly, as dump() does; otherwise as dump(indent) does.
  explicit JsonWriter(std::string* out, int indent = -1);

  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  // An object's member name; the value follows. Names come in ascending byte order.
  void Key(std::string_view key);

  void Value(std::string_view text);
  void Value(const std::string& text) { Value(std::string_view(text)); }
  void Value(const char* text) { Value(std::string_view(text)); }
  void Value(double number);  // NaN and infinities are written as null, as dump() does
  void Value(bool flag);
  void Value(const std::optional<double>& number);  // null when empty
  void Value(const std::vector<std::string>& texts);
  // Any document, as dump() writes it (for the rare parts that are built as documents).
  void Value(const nlohmann::json& document);
  template <typename Integer, typename = std::enable_if_t<std::is_integral_v<Integer> &&
                                                          !std::is_same_v<Integer, bool>>>
  void Value(Integer number) {
    if constexpr (std::is_signed_v<Integer>) {
      WriteInteger(static_cast<int64_t>(number));
    } else {
      WriteUnsigned(static_cast<uint64_t>(number));
    }
  }
  void Null();
  // A value another, compact JsonWriter wrote (kept text appended as it is).
  void Written(std::string_view compact_text);
  bool compact() const { return indent_ < 0; }

  template <typename T>
  void Field(std::string_view key, const T& value) {
    Key(key);
    Value(value);
  }
  void NullField(std::string_view key) {
    Key(key);
    Null();
  }

 private:
  struct Level {
    bool object = false;
    bool empty = true;
    std::string last_key;  // debug builds: the order check
  };

  // What comes before a value: the separator and, when indenting, the new line and indent.
  void BeforeValue();
  void Open(bool object);
  void Close(bool object);
  void WriteInteger(int64_t number);
  void WriteUnsigned(uint64_t number);
  void WriteString(std::string_view text);
  void Indent(size_t levels);

  std::string* out_;
  int indent_;
  std::vector<Level> levels_;
  bool after_key_ = false;
};

}  // namespace cloudfit

#endif  // CLOUDFIT_UTIL_JSON_WRITER_H_
