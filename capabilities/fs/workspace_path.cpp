// capabilities/fs/workspace_path.cpp — a skill's path string checked and normalised into a WorkspacePath.
#include "capabilities/fs/workspace_path.h"

#include <string>

#include "base/quote.h"
#include "base/utf8.h"

namespace skillbox::capabilities {
namespace {

bus::ErrorReply path_error(bus::ErrorCode code, std::string_view op, std::string_view given,
                           std::string_view what) {
  std::string message(op);
  message += ' ';
  message += base::quote(given, kMaxQuotedPathBytes);
  message += ": ";
  message += what;
  return bus::ErrorReply{code, std::move(message)};
}

}  // namespace

bool is_visible_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.size() <= kMaxComponentBytes &&
         name.find('\0') == std::string_view::npos && name.find('/') == std::string_view::npos &&
         !name.starts_with(kReservedPrefix) && base::utf8::is_valid(name);
}

std::string WorkspacePath::relative() const {
  if (components_.empty()) return ".";
  std::string out;
  for (const std::string& c : components_) {
    if (!out.empty()) out += '/';
    out += c;
  }
  return out;
}

std::string WorkspacePath::parent() const {
  std::string out;
  for (size_t i = 0; i + 1 < components_.size(); ++i) {
    if (!out.empty()) out += '/';
    out += components_[i];
  }
  return out.empty() ? "." : out;
}

Result<WorkspacePath, bus::ErrorReply> parse_workspace_path(std::string_view op, std::string_view given) {
  using bus::ErrorCode;
  if (given.size() > kMaxPathBytes) return bus::path_too_long(op, given);
  // Embedded NUL ("notes.txt\0/../../etc/passwd"): a C API would see a different path than we check.
  if (given.find('\0') != std::string_view::npos) {
    return path_error(ErrorCode::InvalidArgument, op, given, "path contains a NUL character");
  }
  if (!base::utf8::is_valid(given)) {
    return path_error(ErrorCode::InvalidArgument, op, given, "path is not valid UTF-8");
  }
  if (given.empty()) {
    return path_error(ErrorCode::InvalidArgument, op, given,
                      "path is empty; use \".\" for the workspace root");
  }
  if (given.front() == '/') {
    return path_error(ErrorCode::PermissionDenied, op, given,
                      "absolute paths leave the workspace; use a path relative to the workspace root");
  }
  std::vector<std::string> components;
  size_t start = 0;
  while (start <= given.size()) {
    size_t end = given.find('/', start);
    if (end == std::string_view::npos) end = given.size();
    const std::string_view part = given.substr(start, end - start);
    start = end + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (components.empty()) {
        return path_error(ErrorCode::PermissionDenied, op, given, "path leaves the workspace");
      }
      components.pop_back();
      continue;
    }
    if (part.size() > kMaxComponentBytes) {
      return path_error(ErrorCode::InvalidArgument, op, given,
                        "a path component is " + std::to_string(part.size()) + " bytes long; the limit is " +
                            std::to_string(kMaxComponentBytes));
    }
    if (part.starts_with(kReservedPrefix)) {
      return path_error(
          ErrorCode::InvalidArgument, op, given,
          "names starting with \"" + std::string(kReservedPrefix) + "\" are reserved for the host");
    }
    components.emplace_back(part);
  }
  return WorkspacePath(std::move(components));
}

}  // namespace skillbox::capabilities
