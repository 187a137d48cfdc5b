// Text of catalog rows that is long and written once: sources, notes. A SharedText reads as a
// std::string_view; it views either bytes that outlive every catalog (the built-in catalog's
// records, compiled into the binary) or a string it owns together with its copies.
//
// Why not std::string: the built-in catalog's rows are made at every start, and copying their
// sources and notes (a few hundred bytes each, ~4,000 of them) into strings was ~1 MB of heap:
// ~250 fresh pages, each a page fault, on every command. Viewing them costs nothing.
#ifndef CLOUDFIT_SHARED_TEXT_H_
#define CLOUDFIT_SHARED_TEXT_H_

#include <compare>
#include <memory>
#include <string>
#include <string_view>

namespace cloudfit {

class SharedText : public std::string_view {
 public:
  SharedText() = default;
  // Implicit, so that a field is assigned and initialized as a std::string is.
  SharedText(std::string text) { Own(std::move(text)); }  // NOLINT(google-explicit-constructor)
  SharedText(const char* text) { Own(text); }             // NOLINT(google-explicit-constructor)
  explicit SharedText(std::string_view text) { Own(std::string(text)); }

  // A view of `text` without a copy: only for bytes that live as long as the program.
  static SharedText Static(std::string_view text) {
    SharedText out;
    out.View(text);
    return out;
  }

  SharedText& operator=(std::string text) {
    Own(std::move(text));
    return *this;
  }
  SharedText& operator=(const char* text) {
    Own(text);
    return *this;
  }
  SharedText& operator=(std::string_view text) {
    Own(std::string(text));
    return *this;
  }
  SharedText& operator+=(std::string_view more) {
    std::string joined(view());
    joined += more;
    Own(std::move(joined));
    return *this;
  }

  operator std::string() const { return std::string(view()); }  // NOLINT: as a string reads
  std::string_view view() const { return *this; }

  friend bool operator==(const SharedText& a, std::string_view b) { return a.view() == b; }
  friend std::strong_ordering operator<=>(const SharedText& a, std::string_view b) {
    return a.view() <=> b;
  }
  // Concatenation gives a std::string, as it does for std::string.
  friend std::string operator+(const SharedText& a, std::string_view b) {
    std::string out(a.view());
    return out += b;
  }
  friend std::string operator+(std::string_view a, const SharedText& b) {
    std::string out(a);
    return out += b.view();
  }
  friend std::string operator+(const SharedText& a, const char* b) {
    return a + std::string_view(b);
  }
  friend std::string operator+(const char* a, const SharedText& b) {
    return std::string_view(a) + b;
  }
  friend std::string operator+(const SharedText& a, const std::string& b) {
    return a + std::string_view(b);
  }
  friend std::string operator+(const std::string& a, const SharedText& b) {
    return std::string_view(a) + b;
  }
  friend std::string operator+(const SharedText& a, const SharedText& b) { return a + b.view(); }

 private:
  void Own(std::string text) {
    owned_.reset();
    if (!text.empty()) owned_ = std::make_shared<const std::string>(std::move(text));
    View(owned_ ? std::string_view(*owned_) : std::string_view());
  }
  void View(std::string_view text) { static_cast<std::string_view&>(*this) = text; }

  // The string viewed, shared with copies (its bytes never move); null for static text.
  std::shared_ptr<const std::string> owned_;
};

}  // namespace cloudfit

#endif  // CLOUDFIT_SHARED_TEXT_H_
