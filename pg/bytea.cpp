// pg/bytea.cpp — see bytea.h.
#include "pg/bytea.h"

namespace skillbox::pg {

namespace {

constexpr char kHex[] = "0123456789abcdef";

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string to_bytea(std::string_view bytes) {
  std::string out;
  out.reserve(2 + bytes.size() * 2);
  out += "\\x";
  for (const char ch : bytes) {
    const auto b = static_cast<unsigned char>(ch);
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

std::optional<std::string> from_bytea(const std::optional<std::string>& text) {
  if (!text || text->size() < 2 || (*text)[0] != '\\' || (*text)[1] != 'x' || text->size() % 2 != 0)
    return std::nullopt;
  std::string out;
  out.reserve((text->size() - 2) / 2);
  for (size_t i = 2; i < text->size(); i += 2) {
    const int hi = hex_value((*text)[i]);
    const int lo = hex_value((*text)[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>((hi << 4) | lo);
  }
  return out;
}

}  // namespace skillbox::pg
