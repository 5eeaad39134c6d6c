// engine/source_map.cpp — see source_map.h.
#include "engine/source_map.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "bindings/base64.h"
#include "engine/skill_files.h"

namespace skillbox::engine {
namespace {

/// Levels of JSON a source map has: an object of arrays of strings. Deeper text is not a map.
constexpr size_t kMaxMapDepth = 4;

/// One Base64 VLQ value of `s` from `pos` (ECMA-426 "Base64 VLQ"): 5 bits per digit, least significant
/// first, the digit's 6th bit set when another follows; the lowest bit of the result is the sign.
/// False when the text ends inside a value, a digit is not Base64, or the value needs more than 31 bits
/// (no real map has such a number; an attacker's would overflow the sums below).
bool read_vlq(std::string_view s, size_t& pos, int64_t& out) {
  constexpr int kMaxShift = 30;  // 7 digits: 35 bits read, at most 31 kept
  uint64_t value = 0;
  for (int shift = 0;; shift += 5) {
    if (pos >= s.size() || shift > kMaxShift) return false;
    const int digit = bindings::base64_sextet(s[pos++]);
    if (digit < 0) return false;
    value |= static_cast<uint64_t>(digit & 31) << shift;
    if ((digit & 32) == 0) break;
  }
  const bool negative = (value & 1) != 0;
  value >>= 1;
  if (value > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) return false;
  out = negative ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
  return true;
}

/// The map's name for source `source` (with `root`, the map's sourceRoot), as a skill-relative name when
/// it names a file of the skill folder relative to the generated file's folder `dir`; otherwise as the
/// map wrote it (a URL such as `webpack://x/y.ts`, an absolute path): a label, never opened.
std::string resolve_source(std::string_view dir, std::string_view root, std::string_view source) {
  std::string name(root);
  if (!name.empty() && name.back() != '/') name += '/';
  name += source;
  if (name.empty() || name.front() == '/' || name.find("://") != std::string::npos ||
      name.find(':') != std::string::npos)
    return name;
  auto normal = normalize_relative(dir.empty() ? name : std::string(dir) + "/" + name);
  return normal ? *normal : name;
}

/// The base64 payload of the `sourceMappingURL` data URL on the last non-blank line of `text`, or
/// nullopt. Only a comment that ends the file counts: a string elsewhere that looks like one does not.
std::optional<std::string_view> inline_map_payload(std::string_view text) {
  size_t end = text.size();
  while (end > 0 &&
         (text[end - 1] == '\n' || text[end - 1] == '\r' || text[end - 1] == ' ' || text[end - 1] == '\t'))
    --end;
  const size_t line_start = text.rfind('\n', end == 0 ? 0 : end - 1);
  std::string_view line = text.substr(line_start == std::string_view::npos ? 0 : line_start + 1,
                                      end - (line_start == std::string_view::npos ? 0 : line_start + 1));
  for (std::string_view prefix : {"//# sourceMappingURL=", "//@ sourceMappingURL="}) {
    if (!line.starts_with(prefix)) continue;
    std::string_view url = line.substr(prefix.size());
    constexpr std::string_view kData = "data:application/json;";
    if (!url.starts_with(kData)) return std::nullopt;
    url.remove_prefix(kData.size());
    for (std::string_view charset : {"charset=utf-8;", "charset=UTF-8;"})
      if (url.starts_with(charset)) url.remove_prefix(charset.size());
    constexpr std::string_view kBase64 = "base64,";
    if (!url.starts_with(kBase64)) return std::nullopt;
    return url.substr(kBase64.size());
  }
  return std::nullopt;
}

}  // namespace

std::optional<SourceMap> SourceMap::from_inline(std::string_view generated_name,
                                                std::string_view generated_source) {
  const std::optional<std::string_view> payload = inline_map_payload(generated_source);
  // 4 base64 digits per 3 bytes: a longer payload decodes to more than the cap.
  if (!payload || payload->size() / 4 * 3 > kMaxSourceMapBytes + 3) return std::nullopt;
  const std::optional<std::string> json = bindings::forgiving_base64_decode(*payload);
  if (!json) return std::nullopt;
  return from_json(generated_name, *json);
}

std::optional<SourceMap> SourceMap::from_json(std::string_view generated_name, std::string_view json) {
  if (json.size() > kMaxSourceMapBytes) return std::nullopt;
  const nlohmann::json map = base::json_text::parse(json, kMaxMapDepth);
  if (map.is_discarded() || !map.is_object()) return std::nullopt;
  const auto version = map.find("version");
  if (version == map.end() || !version->is_number_integer() || version->get<int64_t>() != 3)
    return std::nullopt;
  const auto sources = map.find("sources");
  const auto mappings = map.find("mappings");
  if (sources == map.end() || !sources->is_array() || mappings == map.end() || !mappings->is_string())
    return std::nullopt;
  std::string root;
  if (const auto r = map.find("sourceRoot"); r != map.end()) {
    if (r->is_string()) {
      root = r->get<std::string>();
    } else if (!r->is_null()) {
      return std::nullopt;
    }
  }
  const size_t slash = generated_name.rfind('/');
  const std::string_view dir = slash == std::string_view::npos ? "" : generated_name.substr(0, slash);
  SourceMap out;
  out.sources_.reserve(sources->size());
  for (const nlohmann::json& s : *sources) {
    if (s.is_null()) {
      out.sources_.emplace_back();  // allowed by the format; a frame mapped to it is left alone
    } else if (s.is_string()) {
      out.sources_.push_back(resolve_source(dir, root, s.get_ref<const std::string&>()));
    } else {
      return std::nullopt;
    }
  }
  out.mappings_ = mappings->get<std::string>();
  return out;
}

std::vector<std::optional<SourcePosition>> SourceMap::lookup(const std::vector<uint32_t>& lines) const {
  // Wanted generated line (0-based) -> its first mapped segment's source index and original line.
  std::map<uint32_t, std::optional<std::pair<int64_t, int64_t>>> wanted;
  for (uint32_t line : lines)
    if (line > 0) wanted.emplace(line - 1, std::nullopt);
  if (wanted.empty()) return std::vector<std::optional<SourcePosition>>(lines.size());
  const uint32_t last = wanted.rbegin()->first;

  // The fields after the generated column are deltas across the whole mappings, so every segment up to
  // the last wanted line is decoded (and checked) on the way.
  const std::string_view m = mappings_;
  int64_t source = 0;
  int64_t original_line = 0;
  int64_t original_column = 0;
  int64_t name = 0;
  uint32_t generated_line = 0;
  size_t pos = 0;
  while (pos < m.size() && generated_line <= last) {
    if (m[pos] == ';') {
      ++generated_line;
      ++pos;
      continue;
    }
    if (m[pos] == ',') {
      ++pos;
      continue;
    }
    int64_t fields[5] = {};
    int count = 0;
    while (pos < m.size() && m[pos] != ',' && m[pos] != ';') {
      if (count == 5 || !read_vlq(m, pos, fields[count])) return {};
      ++count;
    }
    if (count != 1 && count != 4 && count != 5) return {};
    if (count == 1) continue;  // a generated column that maps to nothing
    source += fields[1];
    original_line += fields[2];
    original_column += fields[3];
    if (count == 5) name += fields[4];
    // Each sum stays within 31 bits or the map is wrong (a run of deltas walking off the range).
    if (source < 0 || static_cast<uint64_t>(source) >= sources_.size() || original_line < 0 ||
        original_line >= std::numeric_limits<int32_t>::max() || original_column < 0 ||
        original_column > std::numeric_limits<int32_t>::max() || name < 0 ||
        name > std::numeric_limits<int32_t>::max())
      return {};
    if (auto it = wanted.find(generated_line); it != wanted.end() && !it->second)
      it->second = std::make_pair(source, original_line);
  }

  std::vector<std::optional<SourcePosition>> out;
  out.reserve(lines.size());
  for (uint32_t line : lines) {
    const auto it = line > 0 ? wanted.find(line - 1) : wanted.end();
    if (it == wanted.end() || !it->second) {
      out.emplace_back();
      continue;
    }
    const std::string& src = sources_[static_cast<size_t>(it->second->first)];
    if (src.empty() || src.size() > kMaxMappedNameBytes) {
      out.emplace_back();
      continue;
    }
    out.push_back(SourcePosition{src, static_cast<uint32_t>(it->second->second + 1)});
  }
  return out;
}

namespace {}  // namespace

std::string map_stack(const std::string& stack, const bus::SkillSources& sources) {
  try {
    const std::vector<StackFrame> frames = stack_frames(stack, sources);
    if (frames.empty()) return stack;
    // Each file's map is read once, and looked up once for all of its frames.
    std::map<std::string, std::vector<std::optional<SourcePosition>>> mapped;
    for (const StackFrame& f : frames) {
      if (mapped.count(f.file) != 0) continue;
      std::vector<uint32_t> lines;
      for (const StackFrame& g : frames)
        if (g.file == f.file) lines.push_back(g.line);
      const std::optional<SourceMap> map = SourceMap::from_inline(f.file, sources.files.at(f.file));
      mapped.emplace(f.file, map ? map->lookup(lines) : std::vector<std::optional<SourcePosition>>{});
    }
    std::map<std::string, size_t> next;  // per file: the index of its next frame in `mapped`
    std::string out;
    size_t copied = 0;
    for (const StackFrame& f : frames) {
      const auto& positions = mapped.at(f.file);
      const size_t i = next[f.file]++;
      if (i >= positions.size() || !positions[i]) continue;
      out.append(stack, copied, f.begin - copied);
      out += positions[i]->source + ":" + std::to_string(positions[i]->line);
      copied = f.end;
    }
    out.append(stack, copied, std::string::npos);
    return out;
  } catch (const std::exception&) {
    return stack;  // out of memory, or a JSON value of an unexpected type: the frames as they were
  }
}

std::vector<StackFrame> stack_frames(const std::string& stack, const bus::SkillSources& sources) {
  std::vector<StackFrame> frames;
  for (size_t at = stack.find(':'); at != std::string::npos; at = stack.find(':', at + 1)) {
    size_t begin = at;
    while (begin > 0 && stack[begin - 1] != ' ' && stack[begin - 1] != '(' && stack[begin - 1] != '\n')
      --begin;
    const std::string name = stack.substr(begin, at - begin);
    if (sources.files.count(name) == 0) continue;
    uint32_t line = 0;
    const char* first = stack.data() + at + 1;
    const auto [end, ec] = std::from_chars(first, stack.data() + stack.size(), line);
    if (ec != std::errc() || end == first) continue;
    frames.push_back(StackFrame{begin, static_cast<size_t>(end - stack.data()), name, line});
  }
  return frames;
}

}  // namespace skillbox::engine
