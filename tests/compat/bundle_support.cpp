// tests/compat/bundle_support.cpp — see bundle_support.h.
#include "compat/bundle_support.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace skillbox::testing {

namespace fs = std::filesystem;
using json = nlohmann::json;

Bundle::Bundle(const std::string& name, const std::string& grant_text) {
  std::string tmpl = (fs::temp_directory_path() / "skillbox-bundle-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  root_ = tmpl;
  dir_ = root_ / name;
  data_ = root_ / "data";
  // The bundles built from examples/openhuman/NAME/src by the build (tests/CMakeLists.txt).
  const fs::path built = fs::path(SKILLBOX_OPENHUMAN_BUNDLES_DIR) / name;
  if (!fs::exists(built / "index.js"))
    throw std::runtime_error(built.string() +
                             "/index.js is missing: the build makes it (cmake --build build --target "
                             "openhuman_bundles, scripts/build-bundles.sh)");
  fs::copy(built, dir_, fs::copy_options::recursive);
  if (!grant_text.empty()) write("skill.json", grant_text);
}

Bundle::~Bundle() {
  std::error_code ec;
  fs::remove_all(root_, ec);
}

Skill Bundle::skill() const {
  Result<Skill> s = load_skill(dir_);
  if (!s) {
    ADD_FAILURE() << s.error().message;
    throw std::runtime_error("bundle did not load");
  }
  return *s;
}

void Bundle::write(const std::string& name, const std::string& content) const {
  std::ofstream out(dir_ / name, std::ios::binary | std::ios::trunc);
  out << content;
}

std::string grants(const std::vector<std::string>& origins, const json& extra, const json& limits) {
  json allow = json::array();
  for (const std::string& o : origins) allow.push_back(o + "/");
  json permissions = {
      {"fs", {{"mode", "readwrite"}}},
      {"http", {{"allow", allow}, {"methods", {"GET", "POST"}}, {"allow_private_addresses", true}}}};
  for (const auto& [k, v] : extra.items()) permissions[k] = v;
  json doc = {{"permissions", permissions}};
  if (!limits.empty()) doc["limits"] = limits;
  return doc.dump();
}

HostOptions host(const fs::path& data_dir, std::optional<std::map<std::string, std::string>> env) {
  HostOptions h;
  h.data_dir = data_dir;
  h.env = std::move(env);
  return h;
}

RunResult call(Runner& runner, const Skill& skill, const std::string& export_name,
               const std::string& input_json) {
  return runner.run(
      Invocation{.skill = skill, .export_name = export_name, .input_json = input_json, .overrides = {}});
}

std::string describe_run(const RunResult& r) {
  std::string out = std::string(to_string(r.outcome));
  if (r.error) out += ": " + r.error->name + ": " + r.error->message;
  for (const LogEntry& l : r.logs) out += "\n  [log] " + l.message;
  return out;
}

json value_of(const RunResult& r) {
  if (r.outcome != Outcome::ok) {
    ADD_FAILURE() << describe_run(r);
    return nullptr;
  }
  return json::parse(r.value_json);
}

std::string all_file_bytes(const fs::path& dir) {
  std::string out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (ec) break;
    if (!it->is_regular_file(ec)) continue;
    std::ifstream in(it->path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    out += ss.str();
  }
  return out;
}

}  // namespace skillbox::testing
