// engine/commonjs.cpp — see commonjs.h.
//
// A tokenizer of just enough of ECMAScript's lexical grammar (ECMA-262 §12) to know what is code: comments,
// string, template and regular-expression literals are consumed whole, and the tokens of code are kept in
// a window of the last four, which is all the patterns need. Whether a `/` starts a regular expression or
// is a division follows the usual rule of thumb (§12 "goal symbols"): a regular expression where an
// expression may begin, i.e. after a punctuator other than `)`, `]` and `}` or after a keyword such as
// `return`. The rule is wrong after the `}` of a block followed by a regular expression, a place where
// it hardly ever stands; a wrong guess can only hide a use or make one up in that file, never crash.
#include "engine/commonjs.h"

#include <array>
#include <vector>

namespace skillbox::engine {
namespace {

enum class Kind : uint8_t { none, name, punct, literal };

struct Token {
  Kind kind = Kind::none;
  std::string_view text;
  uint32_t line = 0;
  size_t depth = 0;  // braces open around the token (`${` of a template counts as one)
};

bool is_name_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
         c == '\\' || c >= 0x80;  // `\u` escapes and non-ASCII letters: part of a name, never one of ours
}

bool is_digit(unsigned char c) {
  return c >= '0' && c <= '9';
}

/// Keywords after which an expression (so a regular expression) may begin.
bool keyword_before_expression(std::string_view name) {
  static constexpr std::array<std::string_view, 14> kWords = {
      "return", "typeof", "instanceof", "in", "of",   "new",   "delete",
      "void",   "throw",  "case",       "do", "else", "yield", "await"};
  for (std::string_view w : kWords)
    if (name == w) return true;
  return false;
}

bool is_declaration_keyword(std::string_view name) {
  return name == "var" || name == "let" || name == "const" || name == "function" || name == "class";
}

class Scanner {
 public:
  explicit Scanner(std::string_view src) : src_(src) {}

  std::optional<CommonJsUse> run() {
    if (src_.size() > kMaxCommonJsScanBytes) return std::nullopt;
    if (src_.starts_with("#!")) skip_line();  // a hashbang line
    while (pos_ < src_.size()) {
      if (!step()) return std::nullopt;  // template nesting past the bound
    }
    if (guarded_) return std::nullopt;
    const CommonJsUse* first = nullptr;
    for (size_t i = 0; i < kNames.size(); ++i) {
      if (declared_[i] || !use_[i]) continue;
      if (first == nullptr || use_[i]->line < first->line) first = &*use_[i];
    }
    if (first == nullptr) return std::nullopt;
    return *first;
  }

 private:
  static constexpr std::array<std::string_view, 3> kNames = {"require", "module", "exports"};

  static int name_index(const Token& t) {
    if (t.kind != Kind::name) return -1;
    for (size_t i = 0; i < kNames.size(); ++i)
      if (t.text == kNames[i]) return static_cast<int>(i);
    return -1;
  }

  static bool is_punct(const Token& t, std::string_view p) { return t.kind == Kind::punct && t.text == p; }
  static bool is_member_access(const Token& t) { return is_punct(t, ".") || is_punct(t, "?."); }

  char peek(size_t ahead = 0) const { return pos_ + ahead < src_.size() ? src_[pos_ + ahead] : '\0'; }

  void advance() {
    if (src_[pos_] == '\n') ++line_;
    ++pos_;
  }

  void skip_line() {
    while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_;
  }

  bool regex_allowed() const {
    const Token& prev = window_[3];
    switch (prev.kind) {
      case Kind::none:
        return true;
      case Kind::literal:
        return false;
      case Kind::name:
        return keyword_before_expression(prev.text);
      case Kind::punct:
        return prev.text != ")" && prev.text != "]" && prev.text != "}";
    }
    return true;
  }

  // One token, comment or blank; false to give up.
  bool step() {
    const char c = peek();
    if (c == '\n' || c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      advance();
      return true;
    }
    if (c == '/' && peek(1) == '/') {
      skip_line();
      return true;
    }
    if (c == '/' && peek(1) == '*') {
      pos_ += 2;
      while (pos_ < src_.size() && !(peek() == '*' && peek(1) == '/')) advance();
      pos_ = std::min(pos_ + 2, src_.size());
      return true;
    }
    const size_t start = pos_;
    const uint32_t line = line_;
    if (c == '\'' || c == '"') {
      advance();
      while (pos_ < src_.size() && peek() != c && peek() != '\n') {
        if (peek() == '\\' && pos_ + 1 < src_.size()) advance();
        advance();
      }
      if (pos_ < src_.size() && peek() == c) advance();
      emit(Kind::literal, start, line);
      return true;
    }
    if (c == '`') {
      advance();
      return template_rest(start, line);
    }
    if (c == '/' && regex_allowed()) {
      advance();
      bool in_class = false;
      while (pos_ < src_.size() && peek() != '\n') {
        const char r = peek();
        if (r == '\\' && pos_ + 1 < src_.size() && src_[pos_ + 1] != '\n') {
          pos_ += 2;
          continue;
        }
        advance();
        if (r == '[') in_class = true;
        if (r == ']') in_class = false;
        if (r == '/' && !in_class) break;
      }
      while (pos_ < src_.size() && is_name_char(static_cast<unsigned char>(peek()))) ++pos_;  // flags
      emit(Kind::literal, start, line);
      return true;
    }
    if (is_digit(static_cast<unsigned char>(c)) ||
        (c == '.' && is_digit(static_cast<unsigned char>(peek(1))))) {
      while (pos_ < src_.size() && (is_name_char(static_cast<unsigned char>(peek())) || peek() == '.'))
        ++pos_;
      emit(Kind::literal, start, line);
      return true;
    }
    if (is_name_char(static_cast<unsigned char>(c))) {
      while (pos_ < src_.size() && is_name_char(static_cast<unsigned char>(peek()))) ++pos_;
      emit(Kind::name, start, line);
      return true;
    }
    // A punctuator: one character, but `?.` (optional chaining, a member access like `.`).
    if (c == '?' && peek(1) == '.' && !is_digit(static_cast<unsigned char>(peek(2)))) {
      pos_ += 2;
      emit(Kind::punct, start, line);
      return true;
    }
    advance();
    if (c == '{') {
      emit(Kind::punct, start, line);
      ++depth_;
      return true;
    }
    if (c == '}') {
      if (depth_ > 0) --depth_;
      if (!templates_.empty() && templates_.back() == depth_) {
        templates_.pop_back();  // the end of a `${...}`: the template literal goes on
        return template_rest(start, line);
      }
    }
    emit(Kind::punct, start, line);
    return true;
  }

  // The rest of a template literal from just after "`" or "}": up to its closing "`" (one literal token)
  // or to a `${` (a punctuator; its expression is scanned as code until the matching `}`).
  bool template_rest(size_t start, uint32_t line) {
    while (pos_ < src_.size()) {
      const char t = peek();
      if (t == '\\' && pos_ + 1 < src_.size()) {
        advance();
        advance();
        continue;
      }
      if (t == '`') {
        advance();
        emit(Kind::literal, start, line);
        return true;
      }
      if (t == '$' && peek(1) == '{') {
        pos_ += 2;
        if (templates_.size() == kMaxTemplateNesting) return false;
        emit(Kind::punct, start, line);
        templates_.push_back(depth_);
        ++depth_;
        return true;
      }
      advance();
    }
    emit(Kind::literal, start, line);  // unterminated: the compiler has said so already
    return true;
  }

  void emit(Kind kind, size_t start, uint32_t line) {
    for (size_t i = 0; i + 1 < window_.size(); ++i) window_[i] = window_[i + 1];
    window_[3] = Token{kind, src_.substr(start, pos_ - start), line, depth_};
    look();
  }

  // The patterns, on the window's newest tokens (w[3] the token just read).
  void look() {
    const auto& w = window_;
    // `typeof module`: a file that tests for the names works with and without them.
    if (name_index(w[3]) >= 0 && w[2].kind == Kind::name && w[2].text == "typeof") guarded_ = true;
    // `var module`, `function require`, `class exports`: the file's own name (hoisted: anywhere counts).
    if (const int i = name_index(w[3]);
        i >= 0 && w[2].kind == Kind::name && is_declaration_keyword(w[2].text))
      declared_[static_cast<size_t>(i)] = true;

    // require(...): w[2] `require`, w[3] `(`.
    if (is_punct(w[3], "(") && name_index(w[2]) == 0 && w[2].depth == 0 && !is_member_access(w[1]) &&
        !(w[1].kind == Kind::name && is_declaration_keyword(w[1].text)))
      note(0, w[2].line, "require(...)");
    // module.exports: w[1] `module`, w[2] `.`, w[3] `exports`.
    if (w[3].kind == Kind::name && w[3].text == "exports" && is_punct(w[2], ".") && name_index(w[1]) == 1 &&
        w[1].depth == 0 && !is_member_access(w[0]))
      note(1, w[1].line, "module.exports");
    // exports.NAME or exports[...]: w[2] `exports`, w[3] `.` or `[`, not itself `module.exports`.
    if ((is_punct(w[3], ".") || is_punct(w[3], "[")) && name_index(w[2]) == 2 && w[2].depth == 0 &&
        !is_member_access(w[1]))
      note(2, w[2].line, is_punct(w[3], ".") ? "exports.NAME" : "exports[...]");
  }

  void note(size_t index, uint32_t line, const char* what) {
    if (!use_[index]) use_[index] = CommonJsUse{line, what};
  }

  std::string_view src_;
  size_t pos_ = 0;
  uint32_t line_ = 1;
  size_t depth_ = 0;
  std::vector<size_t> templates_;  // for each open `${`: the brace depth its `}` returns to
  std::array<Token, 4> window_{};
  std::array<std::optional<CommonJsUse>, 3> use_{};
  std::array<bool, 3> declared_{};
  bool guarded_ = false;
};

}  // namespace

std::optional<CommonJsUse> find_commonjs_use(std::string_view source) {
  return Scanner(source).run();
}

}  // namespace skillbox::engine
