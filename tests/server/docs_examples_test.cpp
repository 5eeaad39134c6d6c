// The curl examples of docs/server.md, run with the curl command against a real `skillbox serve`: every
// line of a ```sh block that starts with `curl` (with its `\` continuations) must get a 2xx answer.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "compat/bundle_support.h"
#include "serve_support.h"
#include "server/api_key.h"

namespace skillbox::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kKeyA = "docs-tenant-a-key-0123456789";
constexpr const char* kKeyB = "docs-tenant-b-key-0123456789";
constexpr const char* kOperatorKey = "docs-operator-key-0123456789";

/// Every `curl` command of the ```sh blocks of `markdown`, continuations joined.
std::vector<std::string> curl_examples(const std::string& markdown) {
  std::vector<std::string> out;
  std::istringstream in(markdown);
  bool in_sh = false;
  std::string pending;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("```")) {
      in_sh = line == "```sh";
      continue;
    }
    if (!in_sh) continue;
    if (!pending.empty()) {
      pending += " " + line;
    } else if (line.starts_with("curl ")) {
      pending = line;
    } else {
      continue;
    }
    if (pending.ends_with("\\")) {
      pending.pop_back();
      continue;
    }
    out.push_back(pending);
    pending.clear();
  }
  return out;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

TEST(ServerDocs, EveryCurlExampleGetsA2xxAnswer) {
  std::ifstream doc(SKILLBOX_SERVER_DOC);
  ASSERT_TRUE(doc) << SKILLBOX_SERVER_DOC;
  std::stringstream text;
  text << doc.rdbuf();
  const std::vector<std::string> examples = curl_examples(text.str());
  ASSERT_GE(examples.size(), 5u);

  TempDir tmp;
  for (const char* t : {"a", "b"}) {
    const fs::path skills = tmp.path() / t;
    write_skill(skills / "hello", "hello", "export default (input) => `hello ${input?.name ?? 'world'}`");
    write_skill(skills / "slow", "slow",
                "export default () => new Promise((r) => setTimeout(() => r('done'), 100))");
    write_skill(skills / "runaway", "runaway", "export function wait() { for (;;) {} }");
  }
  const Bundle notes("notes", grants({}));  // the bundle routes' examples
  fs::copy(notes.dir(), tmp.path() / "a" / "notes", fs::copy_options::recursive);
  write_file(tmp.path() / "serve.toml",
             "listen = [\"127.0.0.1:0\"]\nmetrics_key_sha256 = [\"" +
                 server::key_hash_hex(server::hash_api_key(kOperatorKey)) +
                 "\"]\n[tenants.a]\nkey_sha256 = [\"" + server::key_hash_hex(server::hash_api_key(kKeyA)) +
                 "\"]\nskills = \"a\"\ndata_dir = \"a-data\"\n"
                 "[tenants.a.code]\nallow_upload = true\nallow_inline = true\n[tenants.b]\nkey_sha256 = [\"" +
                 server::key_hash_hex(server::hash_api_key(kKeyB)) +
                 "\"]\nskills = \"b\"\ndata_dir = \"b-data\"\n");
  ServeProcess server({"--config", (tmp.path() / "serve.toml").string()});
  ASSERT_FALSE(server.url.empty());

  for (const std::string& example : examples) {
    // The docs' address becomes the test server's; --fail-with-body turns an HTTP error into exit 22.
    const std::string command = "export KEY=" + std::string(kKeyA) + " KEY_A=" + kKeyA + " KEY_B=" + kKeyB +
                                " OPERATOR_KEY=" + kOperatorKey + "; " +
                                replace_all(replace_all(example, "http://127.0.0.1:8080", server.url),
                                            "curl ", "curl -sS --noproxy '*' --fail-with-body ") +
                                " 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string out;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
    const int status = ::pclose(pipe);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << example << "\n" << out;
  }
}

}  // namespace
}  // namespace skillbox::testing
