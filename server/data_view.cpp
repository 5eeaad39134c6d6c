// server/data_view.cpp — see data_view.h.
#include "server/data_view.h"

#include <charconv>
#include <chrono>
#include <nlohmann/json.hpp>
#include <system_error>

#include "base/escape.h"
#include "base/json_text.h"
#include "base/utf8.h"
#include "bus/stop_token.h"
#include "state/data_layout.h"
#include "state/store_backend.h"
#include "state/workspace_backend.h"

namespace skillbox::server {
namespace {

using ojson = nlohmann::ordered_json;

/// How long a view waits for storage held by a run (the store's write lock): reads are short.
constexpr std::chrono::milliseconds kViewWait{5000};

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

HttpResponse ok_json(const ojson& body) {
  HttpResponse r;
  r.body = base::json_text::write(body);
  return r;
}

HttpResponse store_problem(const StoreError& e) {
  if (e.code == StoreErrc::invalid_argument) return error_response(400, "invalid_key", e.message);
  return error_response(500, "internal", "the store could not be read: " + e.message);
}

bool store_exists(const DataView& view) {
  if (!view.local) return true;
  std::error_code ec;
  return !view.data_dir.empty() &&
         std::filesystem::exists(state::DataLayout(view.data_dir).store_database(), ec);
}

StoreResult<std::unique_ptr<state::StoreSession>> open_store(const DataView& view) {
  if (!view.state.store) return StoreError{StoreErrc::io_error, "this tenant has no store"};
  StoreOpenOptions options;
  options.busy_timeout = kViewWait;
  options.create = false;
  return view.state.store->open_skill(view.id, StorePolicy{}, options);
}

/// The HTTP answer to a workspace error.
HttpResponse workspace_problem(const state::WorkspaceError& e, const std::string& shown) {
  using state::WorkspaceErrc;
  switch (e.code) {
    case WorkspaceErrc::not_found:
    case WorkspaceErrc::parent_missing:
    case WorkspaceErrc::not_a_directory:
      return error_response(404, "not_found", "no file or folder \"" + shown + "\" in the workspace");
    case WorkspaceErrc::symlink:
    case WorkspaceErrc::outside:
      return error_response(403, "forbidden",
                            "\"" + shown +
                                "\" goes through a symbolic link or out of the workspace; "
                                "links are never followed");
    case WorkspaceErrc::not_regular:
      return error_response(403, "forbidden", "\"" + shown + "\" is neither a file nor a folder");
    case WorkspaceErrc::invalid_path:
      return error_response(400, "invalid_path", "\"" + shown + "\" is not a workspace path");
    case WorkspaceErrc::refused:
      return error_response(422, "file_too_large",
                            "\"" + shown + "\" holds more than " + std::to_string(kMaxWorkspaceReadBytes) +
                                " bytes, the most a workspace read serves");
    default:
      return error_response(500, "internal", "the workspace could not be read");
  }
}

const char* type_name(bus::FsEntryType t) {
  switch (t) {
    case bus::FsEntryType::file:
      return "file";
    case bus::FsEntryType::directory:
      return "directory";
    default:
      return "other";
  }
}

/// The listing of the folder `path` (".": the root).
HttpResponse folder_listing(state::WorkspaceSession& ws, const std::string& path) {
  state::WorkspaceResult<std::vector<bus::FsDirEntry>> entries = ws.list(path);
  if (!entries) return workspace_problem(entries.error(), base::escape_text(path));
  ojson list = ojson::array();
  for (const bus::FsDirEntry& e : *entries) {
    // Names a skill wrote may be any bytes but '/' and NUL: shown escaped when they are not UTF-8.
    list.push_back(ojson{{"name", base::utf8::escape_invalid(e.name)}, {"type", type_name(e.type)}});
  }
  return ok_json(ojson{{"path", path}, {"entries", std::move(list)}});
}

}  // namespace

std::optional<std::string> percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const int hi = hex_value(text[i + 1]);
    const int lo = hex_value(text[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

std::optional<std::string> query_param(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    const size_t eq = pair.find('=');
    if (pair.substr(0, eq) == name)
      return percent_decode(eq == std::string_view::npos ? "" : pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

HttpResponse store_keys_response(const DataView& view, std::string_view query) {
  const std::string prefix = query_param(query, "prefix").value_or("");
  const std::string after = query_param(query, "after").value_or("");
  size_t limit = kDefaultKeyPage;
  if (const std::optional<std::string> text = query_param(query, "limit")) {
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), limit);
    if (ec != std::errc() || end != text->data() + text->size() || limit == 0 || limit > kMaxKeyPage) {
      return error_response(400, "invalid_request",
                            "limit: expected an integer from 1 to " + std::to_string(kMaxKeyPage));
    }
  }
  if (!store_exists(view)) return ok_json(ojson{{"keys", ojson::array()}, {"next", nullptr}});
  StoreResult<std::unique_ptr<state::StoreSession>> session = open_store(view);
  if (!session) return store_problem(session.error());
  StoreResult<std::vector<std::string>> keys = (*session)->keys(prefix);
  if (!keys) return store_problem(keys.error());
  ojson page = ojson::array();
  ojson next = nullptr;
  for (const std::string& k : *keys) {
    if (!after.empty() && k <= after) continue;  // sorted by UTF-8 bytes, as std::string compares
    if (page.size() == limit) {
      next = page.back();
      break;
    }
    page.push_back(k);
  }
  return ok_json(ojson{{"keys", std::move(page)}, {"next", std::move(next)}});
}

HttpResponse store_value_response(const DataView& view, std::string_view raw_key) {
  const std::optional<std::string> key = percent_decode(raw_key);
  if (!key || key->empty() || !base::utf8::is_valid(*key) || key->find('\0') != std::string::npos) {
    return error_response(400, "invalid_key",
                          "the key must be percent-encoded UTF-8, not empty, without NUL (%00)");
  }
  const auto missing = [&] {
    return error_response(404, "not_found",
                          "no key \"" + base::escape_text(key->substr(0, 200)) + "\" in the store");
  };
  if (!store_exists(view)) return missing();
  StoreResult<std::unique_ptr<state::StoreSession>> session = open_store(view);
  if (!session) return store_problem(session.error());
  StoreResult<std::optional<std::string>> value = (*session)->get(*key);
  if (!value) return store_problem(value.error());
  if (!*value) return missing();
  ojson out;
  out["key"] = *key;
  out["value"] = base::json_text::parse_ordered(**value);
  return ok_json(out);
}

HttpResponse workspace_response(const DataView& view, std::string_view raw_path) {
  while (raw_path.ends_with('/')) raw_path.remove_suffix(1);
  const std::optional<std::string> decoded = percent_decode(raw_path);
  if (!decoded || !base::utf8::is_valid(*decoded)) {
    return error_response(400, "invalid_path", "the path must be percent-encoded UTF-8");
  }
  const std::string path = decoded->empty() ? "." : *decoded;
  const std::string shown = base::escape_text(path.substr(0, 200));
  if (!state::is_workspace_path(path)) {
    return error_response(400, "invalid_path",
                          "\"" + shown +
                              "\" is not a workspace path: relative, '/' between names, no \".\", "
                              "\"..\", empty name or NUL");
  }
  std::error_code ec;
  if (view.local &&
      (view.data_dir.empty() ||
       !std::filesystem::is_directory(state::DataLayout(view.data_dir).workspace_dir(view.id), ec))) {
    // Never written: nothing to show, and nothing is created to show it.
    if (path == ".") return ok_json(ojson{{"path", path}, {"entries", ojson::array()}});
    return error_response(404, "not_found", "no file or folder \"" + shown + "\" in the workspace");
  }
  if (!view.state.workspace) return error_response(500, "internal", "this tenant has no workspace storage");
  const bus::StopToken stop(bus::StopToken::Clock::now() + kViewWait);
  state::WorkspaceResult<std::unique_ptr<state::WorkspaceSession>> ws =
      view.state.workspace->open(view.id, /*writable=*/false, stop);
  if (!ws) return workspace_problem(ws.error(), shown);
  state::WorkspaceResult<state::WorkspaceStat> st = (*ws)->stat(path);
  if (!st) return workspace_problem(st.error(), shown);
  if (st->type == bus::FsEntryType::directory) return folder_listing(**ws, path);
  bus::Bytes bytes;
  state::WorkspaceResult<void> read = (*ws)->read_file(
      path, [](uint64_t size) { return size <= kMaxWorkspaceReadBytes; }, bytes);
  if (!read) return workspace_problem(read.error(), shown);
  HttpResponse r;
  r.body.assign(bytes.begin(), bytes.end());
  r.content_type = "application/octet-stream";
  return r;
}

}  // namespace skillbox::server
