// policy/strict_json.cpp — single-pass SAX parse that builds the DOM and rejects duplicate keys.
#include "policy/strict_json.h"

#include <set>
#include <vector>

#include "base/escape.h"
#include "base/quote.h"

namespace skillbox::policy {
namespace {

using nlohmann::json;

bool is_plain_key(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

/// Builds the document while tracking, for every open container, the keys seen so far and the path
/// to it, so that a duplicate key can be reported with its full path.
class StrictSax final : public nlohmann::json_sax<json> {
 public:
  explicit StrictSax(std::string_view doc) : doc_(doc) {}

  bool null() override { return add(json(nullptr)); }
  bool boolean(bool v) override { return add(json(v)); }
  bool number_integer(number_integer_t v) override { return add(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return add(json(v)); }
  bool number_float(number_float_t v, const string_t& /*text*/) override { return add(json(v)); }
  bool string(string_t& v) override { return add(json(std::move(v))); }
  bool binary(binary_t& /*v*/) override { return fail("", "binary values are not JSON"); }

  bool start_object(std::size_t /*elements*/) override { return open(json::object()); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t /*elements*/) override { return open(json::array()); }
  bool end_array() override { return close(); }

  bool key(string_t& name) override {
    Frame& top = frames_.back();
    top.pending_key = name;
    if (!top.keys.insert(name).second) {
      return fail(top.path.key(name).str(), "duplicate key; a key may appear only once per object");
    }
    return true;
  }

  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& ex) override {
    // ex.what() is "[json.exception.parse_error.101] parse error at line 1, column 9: syntax error ...";
    // keep the part from "line".
    std::string what = ex.what();
    const size_t at = what.find("at line ");
    std::string detail = at == std::string::npos ? what : what.substr(at + 3);
    // The parser quotes the bytes it last read, which may end inside a UTF-8 sequence or be no UTF-8 at
    // all: escape them, so the message is valid text (fuzz/manifest.cpp found this).
    error_ = std::string(doc_) + ": invalid JSON at " + base::escape_text(detail);
    return false;
  }

  Result<json> take() {
    if (!error_.empty()) return Error{error_};
    return std::move(root_);
  }

 private:
  struct Frame {
    json* container = nullptr;
    KeyPath path;
    std::set<std::string> keys;  // objects only
    std::string pending_key;     // objects only: the key of the next value
  };

  /// Path of the value about to be added to the innermost open container.
  KeyPath child_path() const {
    if (frames_.empty()) return {};
    const Frame& top = frames_.back();
    if (top.container->is_array()) return top.path.index(top.container->size());
    return top.path.key(top.pending_key);
  }

  json* insert(json value) {
    if (frames_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    json& parent = *frames_.back().container;
    if (parent.is_array()) {
      parent.push_back(std::move(value));
      return &parent.back();
    }
    json& slot = parent[frames_.back().pending_key];
    slot = std::move(value);
    return &slot;
  }

  bool add(json value) {
    insert(std::move(value));
    return true;
  }

  bool open(json empty) {
    KeyPath path = child_path();
    if (frames_.size() >= kMaxJsonDepth) {
      return fail(path.str(), "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    }
    // Pointers stay valid: a container only grows while it is the innermost open one, and a parent
    // array never grows while one of its children is open.
    json* container = insert(std::move(empty));
    frames_.push_back(Frame{container, std::move(path), {}, {}});
    return true;
  }

  bool close() {
    frames_.pop_back();
    return true;
  }

  bool fail(const std::string& path, const std::string& problem) {
    error_ = std::string(doc_) + ": " + (path.empty() ? "" : path + ": ") + problem;
    return false;
  }

  std::string_view doc_;
  json root_;
  std::vector<Frame> frames_;
  std::string error_;
};

}  // namespace

Result<nlohmann::json> parse_strict_json(std::string_view text, std::string_view doc) {
  StrictSax sax(doc);
  const bool ok = json::sax_parse(text.begin(), text.end(), &sax, json::input_format_t::json,
                                  /*strict=*/true, /*ignore_comments=*/false);
  Result<json> result = sax.take();
  if (ok || !result.ok()) return result;
  return Error{std::string(doc) + ": invalid JSON"};  // unreachable in practice: a failure sets a message
}

KeyPath KeyPath::key(std::string_view name) const {
  KeyPath next = *this;
  if (!next.text_.empty()) next.text_ += '.';
  next.text_ += is_plain_key(name) ? std::string(name) : base::quote(name, 32, base::QuoteStyle::json);
  return next;
}

KeyPath KeyPath::index(size_t i) const {
  KeyPath next = *this;
  next.text_ += '[' + std::to_string(i) + ']';
  return next;
}

std::string describe_json(const json& value) {
  switch (value.type()) {
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return base::quote(value.get_ref<const std::string&>(), kMaxShownBytes, base::QuoteStyle::json);
    default:
      return value.dump();
  }
}

}  // namespace skillbox::policy
