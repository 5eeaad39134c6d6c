// bundle_db/db_functions.cpp — the stoppable replace/instr/trim/like/glob (db_functions.h).
//
// Each mirrors the built-in of SQLite 3.40 (func.c) in its handling of NULL, blobs, NUL bytes (text
// ends at the first one, as sqlite3_value_text gives it), malformed UTF-8 (read the way
// sqlite3Utf8Read reads it) and SQLITE_LIMIT_LENGTH; only the algorithms differ where they must poll.
#include "bundle_db/db_functions.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace skillbox::bundle_db {
namespace {

// Units of work (bytes compared, characters stepped) between two looks at the StopToken: a look is
// tens of nanoseconds, 1 Mi units are well under a millisecond.
constexpr uint64_t kPollWork = uint64_t{1} << 20;

class Poller {
 public:
  explicit Poller(const bus::StopToken* stop) : stop_(stop) {}
  /// Counts `n` units; true when the invocation must stop.
  bool tick(uint64_t n = 1) {
    work_ += n;
    if (work_ < kPollWork) return false;
    work_ = 0;
    return stop_ != nullptr && stop_->stop_requested();
  }

 private:
  const bus::StopToken* stop_;
  uint64_t work_ = 0;
};

void interrupted(sqlite3_context* ctx) {
  sqlite3_result_error(ctx, "interrupted: the invocation reached a limit or its deadline", -1);
  sqlite3_result_error_code(ctx, SQLITE_INTERRUPT);
}

const bus::StopToken* stop_of(sqlite3_context* ctx) {
  return static_cast<DbFunctionContext*>(sqlite3_user_data(ctx))->stop;
}

// ---- instr(X, Y) ----------------------------------------------------------------------------------

void fn_instr(sqlite3_context* ctx, int /*argc*/, sqlite3_value** argv) {
  const int th = sqlite3_value_type(argv[0]);
  const int tn = sqlite3_value_type(argv[1]);
  if (th == SQLITE_NULL || tn == SQLITE_NULL) return;
  int64_t hn = sqlite3_value_bytes(argv[0]);
  int64_t nn = sqlite3_value_bytes(argv[1]);
  int64_t n = 1;
  if (nn > 0) {
    const unsigned char* h = nullptr;
    const unsigned char* needle = nullptr;
    bool is_text = true;
    sqlite3_value* c1 = nullptr;
    sqlite3_value* c2 = nullptr;
    if (th == SQLITE_BLOB && tn == SQLITE_BLOB) {
      h = static_cast<const unsigned char*>(sqlite3_value_blob(argv[0]));
      needle = static_cast<const unsigned char*>(sqlite3_value_blob(argv[1]));
      is_text = false;
    } else if (th != SQLITE_BLOB && tn != SQLITE_BLOB) {
      h = sqlite3_value_text(argv[0]);
      needle = sqlite3_value_text(argv[1]);
    } else {
      c1 = sqlite3_value_dup(argv[0]);
      h = sqlite3_value_text(c1);
      hn = sqlite3_value_bytes(c1);
      c2 = sqlite3_value_dup(argv[1]);
      needle = sqlite3_value_text(c2);
      nn = sqlite3_value_bytes(c2);
    }
    if (needle == nullptr || (hn > 0 && h == nullptr)) {
      sqlite3_value_free(c1);
      sqlite3_value_free(c2);
      sqlite3_result_error_nomem(ctx);
      return;
    }
    Poller poll(stop_of(ctx));
    const unsigned char first = needle[0];
    int64_t pos = 0;
    while (nn <= hn - pos) {
      if (h[pos] == first) {
        if (std::memcmp(h + pos, needle, static_cast<size_t>(nn)) == 0) break;
        if (poll.tick(static_cast<uint64_t>(nn))) {
          sqlite3_value_free(c1);
          sqlite3_value_free(c2);
          interrupted(ctx);
          return;
        }
      } else if (poll.tick()) {
        sqlite3_value_free(c1);
        sqlite3_value_free(c2);
        interrupted(ctx);
        return;
      }
      ++n;
      do {
        ++pos;
      } while (is_text && pos < hn && (h[pos] & 0xc0) == 0x80);
    }
    if (nn > hn - pos) n = 0;
    sqlite3_value_free(c1);
    sqlite3_value_free(c2);
  }
  sqlite3_result_int64(ctx, n);
}

// ---- replace(X, Y, Z) -----------------------------------------------------------------------------

void fn_replace(sqlite3_context* ctx, int /*argc*/, sqlite3_value** argv) {
  const unsigned char* str = sqlite3_value_text(argv[0]);
  if (str == nullptr) return;
  const auto ns = static_cast<size_t>(sqlite3_value_bytes(argv[0]));
  const unsigned char* pattern = sqlite3_value_text(argv[1]);
  if (pattern == nullptr) return;
  if (pattern[0] == 0) {
    sqlite3_result_value(ctx, argv[0]);
    return;
  }
  const auto np = static_cast<size_t>(sqlite3_value_bytes(argv[1]));
  const unsigned char* rep = sqlite3_value_text(argv[2]);
  if (rep == nullptr) return;
  const auto nr = static_cast<size_t>(sqlite3_value_bytes(argv[2]));
  const auto limit =
      static_cast<size_t>(sqlite3_limit(sqlite3_context_db_handle(ctx), SQLITE_LIMIT_LENGTH, -1));
  Poller poll(stop_of(ctx));
  std::string out;
  try {
    out.reserve(std::min(ns, limit));
    size_t i = 0;
    while (np <= ns && i <= ns - np) {
      if (str[i] == pattern[0] && std::memcmp(str + i, pattern, np) == 0) {
        if (out.size() + nr + (ns - i - np) > limit) {
          sqlite3_result_error_toobig(ctx);
          return;
        }
        out.append(reinterpret_cast<const char*>(rep), nr);
        i += np;
        if (poll.tick(np + nr)) {
          interrupted(ctx);
          return;
        }
      } else {
        out.push_back(static_cast<char>(str[i]));
        ++i;
        if (poll.tick(str[i - 1] == pattern[0] ? np : 1)) {
          interrupted(ctx);
          return;
        }
      }
    }
    out.append(reinterpret_cast<const char*>(str + i), ns - i);
  } catch (const std::bad_alloc&) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (out.size() > limit) {
    sqlite3_result_error_toobig(ctx);
    return;
  }
  sqlite3_result_text64(ctx, out.data(), out.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
}

// ---- trim(X[, Y]), ltrim, rtrim -------------------------------------------------------------------

/// The characters of a trim set as func.c splits them: a lead byte and the continuation bytes after
/// it. Matching takes, at each position, the first character of the set (in its order) that matches,
/// as the built-in's linear scan does; here one hash lookup per distinct length.
class TrimSet {
 public:
  explicit TrimSet(std::string_view set) {
    size_t i = 0;
    size_t index = 0;
    while (i < set.size()) {
      const size_t start = i;
      if (static_cast<unsigned char>(set[i++]) >= 0xc0) {
        while (i < set.size() && (static_cast<unsigned char>(set[i]) & 0xc0) == 0x80) ++i;
      }
      by_length_[i - start].emplace(set.substr(start, i - start), index++);  // keeps the first index
    }
  }
  [[nodiscard]] bool empty() const { return by_length_.empty(); }
  /// The length of the character that matches at the start (ltrim) or end (rtrim) of `s`; 0: none.
  [[nodiscard]] size_t match(std::string_view s, bool at_end) const {
    size_t best_len = 0;
    size_t best_index = SIZE_MAX;
    for (const auto& [len, chars] : by_length_) {
      if (len > s.size()) break;
      const auto it = chars.find(at_end ? s.substr(s.size() - len) : s.substr(0, len));
      if (it != chars.end() && it->second < best_index) {
        best_index = it->second;
        best_len = len;
      }
    }
    return best_len;
  }
  [[nodiscard]] size_t lengths() const { return by_length_.size(); }

 private:
  std::map<size_t, std::unordered_map<std::string_view, size_t>> by_length_;
};

template <int kFlags>
void fn_trim(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
  const auto* in = reinterpret_cast<const char*>(sqlite3_value_text(argv[0]));
  if (in == nullptr) return;
  std::string_view s(in, static_cast<size_t>(sqlite3_value_bytes(argv[0])));
  std::string_view set = " ";
  if (argc == 2) {
    const auto* c = reinterpret_cast<const char*>(sqlite3_value_text(argv[1]));
    if (c == nullptr) return;
    set = std::string_view(c);  // up to its first NUL, as func.c reads it
  }
  try {
    const TrimSet chars(set);
    Poller poll(stop_of(ctx));
    if (!chars.empty()) {
      if ((kFlags & 1) != 0) {
        while (!s.empty()) {
          const size_t len = chars.match(s, false);
          if (len == 0) break;
          s.remove_prefix(len);
          if (poll.tick(chars.lengths())) return interrupted(ctx);
        }
      }
      if ((kFlags & 2) != 0) {
        while (!s.empty()) {
          const size_t len = chars.match(s, true);
          if (len == 0) break;
          s.remove_suffix(len);
          if (poll.tick(chars.lengths())) return interrupted(ctx);
        }
      }
    }
  } catch (const std::bad_alloc&) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_text64(ctx, s.data(), s.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
}

// ---- LIKE and GLOB --------------------------------------------------------------------------------

/// One character read the way sqlite3Utf8Read reads it (0 at the end of the text).
uint32_t utf8_read(const unsigned char*& p) {
  uint32_t c = *p;
  if (c == 0) return 0;
  ++p;
  if (c >= 0xc0) {
    if (c < 0xe0)
      c -= 0xc0;
    else if (c < 0xf0)
      c -= 0xe0;
    else if (c < 0xf8)
      c -= 0xf0;
    else if (c < 0xfc)
      c -= 0xf8;
    else if (c < 0xfe)
      c -= 0xfc;
    else
      c = 0;
    while ((*p & 0xc0) == 0x80) c = (c << 6) + (0x3f & *p++);
    if (c < 0x80 || (c & 0xFFFFF800) == 0xD800 || (c & 0xFFFFFFFE) == 0xFFFE) c = 0xFFFD;
  }
  return c;
}

uint32_t ascii_lower(uint32_t c) {
  return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

struct Token {
  enum Kind : uint8_t { any_sequence, any_one, literal, set, never } kind = literal;
  uint32_t c = 0;
  bool invert = false;
  std::vector<std::pair<uint32_t, uint32_t>> ranges;  // a set: singles are [c, c]
};

struct PatternInfo {
  uint32_t match_all;
  uint32_t match_one;
  uint32_t match_set;  // '[' for GLOB, 0 for LIKE
  bool no_case;
};

Token never_token() {
  Token t;
  t.kind = Token::never;
  return t;
}

/// The pattern as tokens, read as func.c's patternCompare reads it. `other` is the escape character
/// (LIKE with ESCAPE) or '[' (GLOB). A token that can never match (an unterminated set, an escape at
/// the end) ends the list, since nothing after it can be reached.
std::vector<Token> compile(const unsigned char* p, const PatternInfo& info, uint32_t other) {
  std::vector<Token> out;
  for (;;) {
    uint32_t c = utf8_read(p);
    if (c == 0) break;
    Token t;
    if (info.match_all != 0 && c == info.match_all) {
      t.kind = Token::any_sequence;
    } else if (other != 0 && c == other) {
      if (info.match_set == 0) {  // the escape
        c = utf8_read(p);
        if (c == 0) {
          out.push_back(never_token());
          break;
        }
        t.c = c;
      } else {  // a set
        t.kind = Token::set;
        uint32_t c2 = utf8_read(p);
        if (c2 == '^') {
          t.invert = true;
          c2 = utf8_read(p);
        }
        if (c2 == ']') {
          t.ranges.emplace_back(']', ']');
          c2 = utf8_read(p);
        }
        uint32_t prior = 0;
        while (c2 != 0 && c2 != ']') {
          if (c2 == '-' && p[0] != ']' && p[0] != 0 && prior > 0) {
            c2 = utf8_read(p);
            t.ranges.emplace_back(prior, c2);
            prior = 0;
          } else {
            t.ranges.emplace_back(c2, c2);
            prior = c2;
          }
          c2 = utf8_read(p);
        }
        if (c2 == 0) {
          out.push_back(never_token());
          break;
        }
      }
    } else if (info.match_one != 0 && c == info.match_one) {
      t.kind = Token::any_one;
    } else {
      t.c = c;
    }
    out.push_back(std::move(t));
  }
  return out;
}

bool token_matches(const Token& t, uint32_t c, bool no_case) {
  switch (t.kind) {
    case Token::any_one:
      return true;
    case Token::literal:
      return t.c == c || (no_case && t.c < 0x80 && c < 0x80 && ascii_lower(t.c) == ascii_lower(c));
    case Token::set: {
      bool seen = false;
      for (const auto& [lo, hi] : t.ranges) seen = seen || (c >= lo && c <= hi);
      return seen != t.invert;
    }
    default:
      return false;
  }
}

enum class Match { yes, no, stopped };

/// Whether `s` matches `tokens` whole: the greedy match with one backtrack point (the last `*`),
/// which is exact for patterns of `*` and single-character tokens and takes at most
/// |tokens| x |s| steps.
Match match(const std::vector<Token>& tokens, const unsigned char* s, bool no_case, Poller& poll) {
  size_t ti = 0;
  const unsigned char* si = s;
  size_t star_ti = SIZE_MAX;
  const unsigned char* star_si = nullptr;
  for (;;) {
    if (poll.tick()) return Match::stopped;
    if (ti < tokens.size() && tokens[ti].kind == Token::any_sequence) {
      while (ti < tokens.size() && tokens[ti].kind == Token::any_sequence) ++ti;
      star_ti = ti;
      star_si = si;
      continue;
    }
    if (*si == 0) break;
    const unsigned char* next = si;
    const uint32_t c = utf8_read(next);
    if (ti < tokens.size() && token_matches(tokens[ti], c, no_case)) {
      si = next;
      ++ti;
      continue;
    }
    if (star_ti == SIZE_MAX) return Match::no;
    (void)utf8_read(star_si);
    si = star_si;
    ti = star_ti;
  }
  while (ti < tokens.size() && tokens[ti].kind == Token::any_sequence) ++ti;
  return ti == tokens.size() ? Match::yes : Match::no;
}

void like_or_glob(sqlite3_context* ctx, int argc, sqlite3_value** argv, PatternInfo info) {
  // Debian's build has LIKE_DOESNT_MATCH_BLOBS: a blob never matches.
  if (sqlite3_value_type(argv[0]) == SQLITE_BLOB || sqlite3_value_type(argv[1]) == SQLITE_BLOB) {
    sqlite3_result_int(ctx, 0);
    return;
  }
  const int pattern_bytes = sqlite3_value_bytes(argv[0]);
  if (pattern_bytes > sqlite3_limit(sqlite3_context_db_handle(ctx), SQLITE_LIMIT_LIKE_PATTERN_LENGTH, -1)) {
    sqlite3_result_error(ctx, "LIKE or GLOB pattern too complex", -1);
    return;
  }
  uint32_t other = info.match_set;
  if (argc == 3) {
    const unsigned char* esc = sqlite3_value_text(argv[2]);
    if (esc == nullptr) return;
    const unsigned char* e = esc;
    const uint32_t escape = utf8_read(e);
    if (escape == 0 || *e != 0) {
      sqlite3_result_error(ctx, "ESCAPE expression must be a single character", -1);
      return;
    }
    if (escape == info.match_all) info.match_all = 0;
    if (escape == info.match_one) info.match_one = 0;
    other = escape;
  }
  const unsigned char* pattern = sqlite3_value_text(argv[0]);
  const unsigned char* s = sqlite3_value_text(argv[1]);
  if (pattern == nullptr || s == nullptr) return;
  try {
    const std::vector<Token> tokens = compile(pattern, info, other);
    Poller poll(stop_of(ctx));
    const Match m = match(tokens, s, info.no_case, poll);
    if (m == Match::stopped) return interrupted(ctx);
    sqlite3_result_int(ctx, m == Match::yes ? 1 : 0);
  } catch (const std::bad_alloc&) {
    sqlite3_result_error_nomem(ctx);
  }
}

void fn_like(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  like_or_glob(ctx, argc, argv, PatternInfo{'%', '_', 0, true});
}

void fn_glob(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  like_or_glob(ctx, argc, argv, PatternInfo{'*', '?', '[', false});
}

}  // namespace

bool install_db_functions(sqlite3* db, DbFunctionContext& context) {
  struct Entry {
    const char* name;
    int args;
    void (*fn)(sqlite3_context*, int, sqlite3_value**);
  };
  const Entry entries[] = {
      {"instr", 2, fn_instr},   {"replace", 3, fn_replace}, {"trim", 1, fn_trim<3>},
      {"trim", 2, fn_trim<3>},  {"ltrim", 1, fn_trim<1>},   {"ltrim", 2, fn_trim<1>},
      {"rtrim", 1, fn_trim<2>}, {"rtrim", 2, fn_trim<2>},   {"like", 2, fn_like},
      {"like", 3, fn_like},     {"glob", 2, fn_glob},
  };
  const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
  for (const Entry& e : entries) {
    if (sqlite3_create_function_v2(db, e.name, e.args, flags, &context, e.fn, nullptr, nullptr, nullptr) !=
        SQLITE_OK)
      return false;
  }
  return true;
}

}  // namespace skillbox::bundle_db
