// base/json_text.cpp — one iterative scanner of JSON text with three consumers: nothing (check), a
// tree builder (parse) and a printer (reformat); and an iterative writer of trees (write).
#include "base/json_text.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "base/escape.h"
#include "base/utf8.h"

namespace skillbox::base::json_text {
namespace {

constexpr char kHex[] = "0123456789abcdef";

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// The four hex digits at text[i..i+4) as a code unit, or -1.
long hex4(std::string_view text, size_t i) {
  if (i + 4 > text.size()) return -1;
  long v = 0;
  for (size_t k = i; k < i + 4; ++k) {
    const int d = hex_value(text[k]);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

void append_u_escape(std::string& out, uint32_t unit) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(unit >> shift) & 0xF];
}

/// `cp` as `\uXXXX`, or as a UTF-16 pair of them above U+FFFF (what nlohmann's ensure_ascii writes).
void append_cp_escape(std::string& out, uint32_t cp) {
  if (cp <= 0xFFFF) {
    append_u_escape(out, cp);
  } else {
    const uint32_t v = cp - 0x10000;
    append_u_escape(out, 0xD800 + (v >> 10));
    append_u_escape(out, 0xDC00 + (v & 0x3FF));
  }
}

/// UTF-8 bytes of `cp`, or WTF-8 bytes for a surrogate (cp <= U+10FFFF).
void append_wtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

/// The surrogate encoded in WTF-8 at s[i..i+3) (ED A0..BF 80..BF), or 0 when there is none.
uint32_t wtf8_surrogate_at(std::string_view s, size_t i) {
  if (i + 3 > s.size()) return 0;
  const auto b0 = static_cast<uint8_t>(s[i]);
  const auto b1 = static_cast<uint8_t>(s[i + 1]);
  const auto b2 = static_cast<uint8_t>(s[i + 2]);
  if (b0 != 0xED || b1 < 0xA0 || b1 > 0xBF || (b2 & 0xC0) != 0x80) return 0;
  return 0xD000u | ((b1 & 0x3Fu) << 6) | (b2 & 0x3Fu);
}

/// One ASCII character of a string as nlohmann's serializer writes it.
void append_ascii(std::string& out, char c, bool ascii) {
  switch (c) {
    case '"':
      out += "\\\"";
      return;
    case '\\':
      out += "\\\\";
      return;
    case '\b':
      out += "\\b";
      return;
    case '\f':
      out += "\\f";
      return;
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    default:
      break;
  }
  const auto u = static_cast<uint8_t>(c);
  if (u < 0x20 || (ascii && u == 0x7F)) {
    append_u_escape(out, u);
  } else {
    out += c;
  }
}

/// `s` (UTF-8, possibly with WTF-8 surrogates or ill-formed bytes) as a JSON string literal.
void append_string(std::string& out, std::string_view s, bool ascii) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    if (static_cast<uint8_t>(c) < 0x80) {
      append_ascii(out, c, ascii);
      ++i;
      continue;
    }
    char32_t cp = 0;
    if (const size_t len = utf8::decode(s, i, cp); len > 0) {
      if (ascii) {
        append_cp_escape(out, cp);
      } else {
        out.append(s.substr(i, len));
      }
      i += len;
    } else if (const uint32_t surrogate = wtf8_surrogate_at(s, i); surrogate != 0) {
      append_u_escape(out, surrogate);  // only an escape can stand for a lone surrogate
      i += 3;
    } else {
      if (ascii) {
        append_u_escape(out, utf8::kReplacement);
      } else {
        append_wtf8(out, utf8::kReplacement);
      }
      ++i;
    }
  }
  out += '"';
}

/// A string token (quotes included) that the scanner accepted, decoded.
std::string decode_string(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  const std::string_view body = raw.substr(1, raw.size() - 2);
  for (size_t i = 0; i < body.size();) {
    if (body[i] != '\\') {
      const size_t next = std::min(body.find('\\', i), body.size());
      out.append(body.substr(i, next - i));
      i = next;
      continue;
    }
    const char e = body[i + 1];
    i += 2;
    switch (e) {
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        auto unit = static_cast<uint32_t>(hex4(body, i));
        i += 4;
        if (unit >= 0xD800 && unit <= 0xDBFF && i + 6 <= body.size() && body[i] == '\\' &&
            body[i + 1] == 'u') {
          const long low = hex4(body, i + 2);
          if (low >= 0xDC00 && low <= 0xDFFF) {
            unit = 0x10000 + ((unit - 0xD800) << 10) + (static_cast<uint32_t>(low) - 0xDC00);
            i += 6;
          }
        }
        append_wtf8(out, unit);
        break;
      }
      default:  // '"', '\\', '/'
        out += e;
        break;
    }
  }
  return out;
}

/// The scanner. Sink receives begin(is_object), end(is_object), key(raw token), scalar(kind, raw token)
/// and may stop the scan by returning false from any of them.
template <class Sink>
class Scanner {
 public:
  Scanner(std::string_view text, size_t max_depth, Sink& sink)
      : t_(text), max_depth_(max_depth), sink_(sink) {}

  Checked run() {
    Checked out;
    const Kind kind = scan(out.depth);
    out.kind = kind;
    return out;
  }

 private:
  void skip_space() {
    while (i_ < t_.size() && is_space(t_[i_])) ++i_;
  }

  /// At '"': past the closing quote, true when the string is well-formed.
  bool string_token() {
    ++i_;
    size_t run = i_;
    for (;;) {
      if (i_ >= t_.size()) return false;
      const auto c = static_cast<uint8_t>(t_[i_]);
      if (c == '"' || c == '\\') {
        if (!utf8::is_valid(t_.substr(run, i_ - run))) return false;
        if (c == '"') {
          ++i_;
          return true;
        }
        if (++i_ >= t_.size()) return false;
        const char e = t_[i_];
        if (e == 'u') {
          if (hex4(t_, i_ + 1) < 0) return false;
          i_ += 5;
        } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' ||
                   e == 't') {
          ++i_;
        } else {
          return false;
        }
        run = i_;
        continue;
      }
      if (c < 0x20) return false;
      ++i_;
    }
  }

  bool digits() {
    const size_t from = i_;
    while (i_ < t_.size() && is_digit(t_[i_])) ++i_;
    return i_ > from;
  }

  bool number_token() {
    if (t_[i_] == '-') ++i_;
    if (i_ >= t_.size()) return false;
    if (t_[i_] == '0') {
      ++i_;
    } else if (!digits()) {
      return false;
    }
    if (i_ < t_.size() && t_[i_] == '.') {
      ++i_;
      if (!digits()) return false;
    }
    if (i_ < t_.size() && (t_[i_] == 'e' || t_[i_] == 'E')) {
      ++i_;
      if (i_ < t_.size() && (t_[i_] == '+' || t_[i_] == '-')) ++i_;
      if (!digits()) return false;
    }
    return true;
  }

  bool literal(std::string_view word) {
    if (t_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }

  /// A scalar at i_: its kind (and i_ past it), or invalid.
  Kind scalar() {
    const char c = t_[i_];
    if (c == '"') return string_token() ? Kind::string : Kind::invalid;
    if (c == 't') return literal("true") ? Kind::boolean : Kind::invalid;
    if (c == 'f') return literal("false") ? Kind::boolean : Kind::invalid;
    if (c == 'n') return literal("null") ? Kind::null : Kind::invalid;
    if (c == '-' || is_digit(c)) return number_token() ? Kind::number : Kind::invalid;
    return Kind::invalid;
  }

  Kind scan(size_t& deepest) {
    std::vector<bool> objects;  // the open containers, innermost last: true for an object
    Kind top = Kind::invalid;
    bool want_key = false;
    for (;;) {
      skip_space();
      if (i_ >= t_.size()) return Kind::invalid;
      if (want_key) {
        if (t_[i_] != '"') return Kind::invalid;
        const size_t from = i_;
        if (!string_token() || !sink_.key(t_.substr(from, i_ - from))) return Kind::invalid;
        skip_space();
        if (i_ >= t_.size() || t_[i_] != ':') return Kind::invalid;
        ++i_;
        want_key = false;
        continue;
      }
      const char c = t_[i_];
      if (c == '{' || c == '[') {
        const bool object = c == '{';
        if (objects.empty()) top = object ? Kind::object : Kind::array;
        if (objects.size() >= max_depth_) return Kind::too_deep;
        ++i_;
        objects.push_back(object);
        deepest = std::max(deepest, objects.size());
        if (!sink_.begin(object)) return Kind::invalid;
        skip_space();
        if (i_ < t_.size() && t_[i_] == (object ? '}' : ']')) {
          ++i_;
          objects.pop_back();
          if (!sink_.end(object)) return Kind::invalid;
        } else {
          want_key = object;
          continue;
        }
      } else {
        const size_t from = i_;
        const Kind kind = scalar();
        if (kind == Kind::invalid || !sink_.scalar(kind, t_.substr(from, i_ - from))) return Kind::invalid;
        if (objects.empty()) top = kind;
      }
      // A value ended: close what it ends, or go on to the next member or element.
      for (;;) {
        skip_space();
        if (objects.empty()) return i_ == t_.size() ? top : Kind::invalid;
        if (i_ >= t_.size()) return Kind::invalid;
        const bool object = objects.back();
        if (t_[i_] == ',') {
          ++i_;
          want_key = object;
          break;
        }
        if (t_[i_] != (object ? '}' : ']')) return Kind::invalid;
        ++i_;
        objects.pop_back();
        if (!sink_.end(object)) return Kind::invalid;
      }
    }
  }

  std::string_view t_;
  size_t i_ = 0;
  size_t max_depth_;
  Sink& sink_;
};

struct NoSink {
  static bool begin(bool /*object*/) { return true; }
  static bool end(bool /*object*/) { return true; }
  static bool key(std::string_view /*raw*/) { return true; }
  static bool scalar(Kind /*kind*/, std::string_view /*raw*/) { return true; }
};

template <class Json>
struct TreeSink {
  std::vector<Json> open;  // containers being filled, innermost last
  std::vector<std::string> keys;
  Json root;

  bool add(Json v) {
    if (open.empty()) {
      root = std::move(v);
    } else if (open.back().is_object()) {
      open.back()[keys.back()] = std::move(v);
      keys.pop_back();
    } else {
      open.back().push_back(std::move(v));
    }
    return true;
  }
  bool begin(bool object) {
    open.push_back(object ? Json::object() : Json::array());
    return true;
  }
  bool end(bool /*object*/) {
    Json v = std::move(open.back());
    open.pop_back();
    return add(std::move(v));
  }
  bool key(std::string_view raw) {
    keys.push_back(decode_string(raw));
    return true;
  }
  bool scalar(Kind kind, std::string_view raw) {
    switch (kind) {
      case Kind::null:
        return add(Json(nullptr));
      case Kind::boolean:
        return add(Json(raw == "true"));
      case Kind::string:
        return add(Json(decode_string(raw)));
      default: {
        Json n = Json::parse(raw, nullptr, /*allow_exceptions=*/false);  // a number: no nesting
        if (n.is_discarded()) return false;                              // beyond double's range
        return add(std::move(n));
      }
    }
  }
};

/// Newline and indentation, shared by the tree writer and the text printer.
struct Indenter {
  const Layout& layout;
  std::string& out;

  /// Whether the container nested `level` levels deep is laid out over several lines.
  [[nodiscard]] bool multiline(size_t level) const {
    return layout.indent >= 0 && level < layout.max_indented_depth;
  }
  void line(size_t level) const {
    out += '\n';
    out.append(level * static_cast<size_t>(layout.indent), ' ');
  }
};

struct PrintSink {
  Indenter ind;
  std::vector<bool> objects;  // open containers, innermost last
  std::vector<bool> empty;    // whether each has no member yet

  /// Separator and indentation before a member's key or an element.
  void before_item() {
    if (!empty.back()) ind.out += ',';
    empty.back() = false;
    if (ind.multiline(objects.size() - 1)) ind.line(objects.size());
  }
  void before_value() {
    if (!objects.empty() && !objects.back()) before_item();  // in an object, the key did it
  }
  bool begin(bool object) {
    before_value();
    ind.out += object ? '{' : '[';
    objects.push_back(object);
    empty.push_back(true);
    return true;
  }
  bool end(bool object) {
    const bool was_empty = empty.back();
    objects.pop_back();
    empty.pop_back();
    if (!was_empty && ind.multiline(objects.size())) ind.line(objects.size());
    ind.out += object ? '}' : ']';
    return true;
  }
  bool key(std::string_view raw) {
    before_item();
    append_string(ind.out, decode_string(raw), ind.layout.ascii);
    ind.out += ind.multiline(objects.size() - 1) ? ": " : ":";
    return true;
  }
  bool scalar(Kind kind, std::string_view raw) {
    before_value();
    if (kind == Kind::string) {
      append_string(ind.out, decode_string(raw), ind.layout.ascii);
    } else if (kind == Kind::number) {
      const nlohmann::json n = nlohmann::json::parse(raw, nullptr, /*allow_exceptions=*/false);
      ind.out += n.is_discarded() ? std::string(raw) : n.dump();
    } else {
      ind.out.append(raw);
    }
    return true;
  }
};

template <class Json>
Json parse_tree(std::string_view text, size_t max_depth) {
  TreeSink<Json> sink;
  if (!Scanner<TreeSink<Json>>(text, max_depth, sink).run().ok()) return Json(Json::value_t::discarded);
  return std::move(sink.root);
}

template <class Json>
void write_scalar(std::string& out, const Json& v, bool ascii) {
  if (v.is_string()) {
    append_string(out, v.template get_ref<const typename Json::string_t&>(), ascii);
  } else {
    out += v.dump(-1, ' ', ascii, Json::error_handler_t::replace);  // a number, boolean or null
  }
}

template <class Json>
std::string write_tree(const Json& root, const Layout& layout) {
  std::string out;
  const Indenter ind{layout, out};
  struct Frame {
    const Json* container;
    typename Json::const_iterator it;
  };
  std::vector<Frame> open;
  const Json* next = &root;
  while (next != nullptr) {
    const Json& v = *next;
    next = nullptr;
    if (v.is_structured() && !v.empty()) {
      out += v.is_object() ? '{' : '[';
      open.push_back({&v, v.cbegin()});
    } else if (v.is_structured()) {
      out += v.is_object() ? "{}" : "[]";
    } else {
      write_scalar(out, v, layout.ascii);
    }
    while (!open.empty()) {
      Frame& f = open.back();
      const size_t level = open.size() - 1;
      const bool multiline = ind.multiline(level);
      if (f.it == f.container->cend()) {
        if (multiline) ind.line(level);
        out += f.container->is_object() ? '}' : ']';
        open.pop_back();
        continue;
      }
      if (f.it != f.container->cbegin()) out += ',';
      if (multiline) ind.line(level + 1);
      if (f.container->is_object()) {
        append_string(out, f.it.key(), layout.ascii);
        out += multiline ? ": " : ":";
      }
      next = &f.it.value();
      ++f.it;
      break;
    }
  }
  return out;
}

}  // namespace

Checked check(std::string_view text, size_t max_depth) {
  NoSink sink;
  return Scanner<NoSink>(text, max_depth, sink).run();
}

nlohmann::json parse(std::string_view text, size_t max_depth) {
  return parse_tree<nlohmann::json>(text, max_depth);
}

nlohmann::ordered_json parse_ordered(std::string_view text, size_t max_depth) {
  return parse_tree<nlohmann::ordered_json>(text, max_depth);
}

std::string write(const nlohmann::json& value, const Layout& layout) {
  return write_tree(value, layout);
}

std::string write(const nlohmann::ordered_json& value, const Layout& layout) {
  return write_tree(value, layout);
}

std::string reformat(std::string_view text, const Layout& layout) {
  if (!check(text).ok()) return {};
  std::string out;
  out.reserve(text.size());
  PrintSink sink{Indenter{layout, out}, {}, {}};
  (void)Scanner<PrintSink>(text, kNoDepthLimit, sink).run();
  return out;
}

namespace {

/// Accepts every JSON event and keeps the first syntax error, as nlohmann words it.
struct SyntaxProbe final : nlohmann::json_sax<nlohmann::json> {
  bool null() override { return true; }
  bool boolean(bool /*v*/) override { return true; }
  bool number_integer(number_integer_t /*v*/) override { return true; }
  bool number_unsigned(number_unsigned_t /*v*/) override { return true; }
  bool number_float(number_float_t /*v*/, const string_t& /*s*/) override { return true; }
  bool string(string_t& /*v*/) override { return true; }
  bool binary(binary_t& /*v*/) override { return true; }
  bool start_object(std::size_t /*n*/) override { return true; }
  bool key(string_t& /*v*/) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t /*n*/) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& ex) override {
    // ex.what(): "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..."
    const std::string what = ex.what();
    const size_t at = what.find("at line ");
    error = escape_text(at == std::string::npos ? what : what.substr(at + 3));
    return false;
  }
  std::string error;
};

}  // namespace

std::string syntax_error_text(std::string_view text) {
  SyntaxProbe probe;
  if (nlohmann::json::sax_parse(text.begin(), text.end(), &probe) || probe.error.empty())
    return "not valid JSON";
  return probe.error;
}

}  // namespace skillbox::base::json_text
