// `skillbox check` looks at the code too: every file compiles and every import resolves, without running
// anything; problems are `invalid` (exit 2) with file:line. Also the warning about private hosts in the
// allowlist and the message for a TypeScript entry.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace skillbox {
namespace {

namespace fs = std::filesystem;

struct Exec {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class CheckCode : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "skillbox-checkcode-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    tmp_ = tmpl;
    dir_ = tmp_ / "skill";
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(tmp_); }

  void file(const std::string& name, const std::string& text) {
    fs::create_directories((dir_ / name).parent_path());
    std::ofstream(dir_ / name) << text;
  }
  void manifest(const std::string& extra = "", const std::string& entry = "index.js") {
    file("skill.json", R"({"id": "c", "entry": ")" + entry + "\"" + extra + "}");
  }
  Exec check(const std::string& flags = "") {
    const std::string cmd = std::string("'") + SKILLBOX_CLI_PATH + "' check " + flags + " '" + dir_.string() +
                            "' >'" + (tmp_ / "out").string() + "' 2>'" + (tmp_ / "err").string() + "'";
    const int status = std::system(cmd.c_str());  // NOLINT(concurrency-mt-unsafe,cert-env33-c): a test
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(tmp_ / "out"), slurp(tmp_ / "err")};
  }

  fs::path tmp_;
  fs::path dir_;
};

TEST_F(CheckCode, ASyntaxErrorIsInvalidWithFileAndLine) {
  manifest();
  file("index.js", "export default () => {\n  return 1;\n  let = = 2;\n}\n");
  const Exec r = check();
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("index.js:3: SyntaxError"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("invalid"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(CheckCode, ADeclaredToolsExportMustBeOneTheModuleHas) {
  const std::string tool = R"(, "tools": [{"name": "get", "export": "fetchIt", "description": "d",
                                             "input_schema": {"type": "object"}}])";
  manifest(tool);
  file("index.js", "export function get() { return {}; }\n");
  const Exec missing = check();
  EXPECT_EQ(missing.exit_code, 2) << missing.out << missing.err;
  EXPECT_NE(
      missing.err.find("skill.json: tools[0].export: the entry module has no export \"fetchIt\"; export it, "
                       "or name one it has (its exports: get)"),
      std::string::npos)
      << missing.err;
  file("index.js", "export function fetchIt() { return {}; }\n");
  const Exec ok = check();
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("tools (skillbox mcp serves each as c__<name>)\n  get  runs fetchIt\n"),
            std::string::npos)
      << ok.out;
  const Exec json_out = check("--json");
  const nlohmann::json report = nlohmann::json::parse(json_out.out);
  EXPECT_EQ(report["manifest"]["tools"][0]["export"], "fetchIt") << json_out.out;
  EXPECT_EQ(report["manifest"]["tools"][0]["input_schema"], nlohmann::json({{"type", "object"}}));
}

TEST_F(CheckCode, ASyntaxErrorInAnImportedFileNamesThatFile) {
  manifest();
  file("index.js", "import { x } from './lib/util.js';\nexport default () => x;\n");
  file("lib/util.js", "export const x = 1;\nexport const y = (;\n");
  const Exec r = check();
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("lib/util.js:2: SyntaxError"), std::string::npos) << r.err;
}

TEST_F(CheckCode, AnImportThatDoesNotResolveIsInvalidWithTheImportLine) {
  manifest();
  file("index.js", "// helper\nimport { x } from './missing.js';\nexport default () => x;\n");
  const Exec r = check();
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("index.js:2:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("missing.js"), std::string::npos) << r.err;
}

TEST_F(CheckCode, ABareImportIsInvalid) {
  manifest();
  file("index.js", "import _ from 'lodash';\nexport default () => 1;\n");
  const Exec r = check();
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("index.js:1:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("lodash"), std::string::npos) << r.err;
}

TEST_F(CheckCode, ACommonJsFileIsInvalidAndSaysToUseExportAndImport) {
  manifest();
  file("index.js",
       "// a Node habit\nconst util = require('./util.js');\nmodule.exports = (input) => util(input);\n");
  Exec r = check();
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("index.js:2: this is a CommonJS file (require(...) at its top level)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("`export default function (input) { ... }`"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("`import { f } from './f.js'`"), std::string::npos) << r.err;

  // An imported module without exports that assigns exports.
  file("index.js", "import './lib/old.js';\nexport default () => 1;\n");
  file("lib/old.js", "\nexports.helper = () => 2;\n");
  r = check();
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("lib/old.js:2: this is a CommonJS file (exports.NAME"), std::string::npos) << r.err;
}

TEST_F(CheckCode, CommonJsLookalikesAreNotRefused) {
  manifest();
  // An ES module may use `module` as a name and mention require( in strings and comments.
  file("index.js",
       "// require('x') is not available\nconst module = { exports: 1 };\nconst s = \"require(\";\n"
       "export default () => [module.exports, s];\n");
  Exec r = check();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // A classic script with the universal-module guard runs as a script.
  file("index.js",
       "function run() { return 1; }\nif (typeof module === 'object') module.exports = { run };\n");
  r = check();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // A module that exports, whatever else it says at its top level.
  file("index.js", "export default () => 1;\nconst x = globalThis.require;\n");
  r = check();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_F(CheckCode, NothingRunsDuringTheCheck) {
  manifest(R"(, "permissions": {"fs": {"mode": "write"}})");
  // Top-level code that would loop forever or write a file if it ran.
  file("index.js", "for (;;) {}\nexport default () => 1;\n");
  const Exec r = check();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("skill    c"), std::string::npos) << r.out;
}

TEST_F(CheckCode, AValidSkillWithModulesPassesAndJsonListsNoProblems) {
  manifest();
  file("index.js", "import { twice } from './lib/math.js';\nexport default (n) => twice(n);\n");
  file("lib/math.js", "export const twice = (n) => n * 2;\n");
  const Exec r = check("--json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["valid"], true);
  EXPECT_TRUE(j["problems"].empty());
}

TEST_F(CheckCode, JsonListsEachProblemWithFileAndLine) {
  manifest();
  file("index.js", "export default () => {\n  return );\n};\n");
  const Exec r = check("--json");
  EXPECT_EQ(r.exit_code, 2);
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["valid"], false);
  ASSERT_EQ(j["problems"].size(), 1u) << r.out;
  EXPECT_EQ(j["problems"][0]["file"], "index.js");
  EXPECT_EQ(j["problems"][0]["line"], 2);
}

TEST_F(CheckCode, WarnsAboutPrivateHostsWithoutAllowPrivateAddresses) {
  manifest(
      R"(, "permissions": {"http": {"allow": ["http://127.0.0.1:8080/", "https://api.example.com/", "http://localhost/"]}})");
  file("index.js", "export default () => 1;\n");
  const Exec r = check();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: skill.json: permissions.http.allow: http://127.0.0.1:8080/"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("http://localhost/"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("allow_private_addresses"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("api.example.com"), std::string::npos) << r.err;

  manifest(
      R"(, "permissions": {"http": {"allow": ["http://127.0.0.1:8080/"], "allow_private_addresses": true}})");
  EXPECT_EQ(check().err.find("warning"), std::string::npos);
}

TEST_F(CheckCode, ATypeScriptEntrySaysHowToCompileIt) {
  manifest("", "index.ts");
  file("index.ts", "export default (x: number): number => x + 1;\n");
  const Exec r = check();
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("TypeScript"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("esbuild"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("skillbox init DIR --ts"), std::string::npos) << r.err;
}

TEST_F(CheckCode, ListsTheEntrysExportsWithoutRunningIt) {
  manifest();
  // Own exports, a renamed one, and `export *` (which never re-exports `default`); the top level would
  // throw if it ran.
  file("index.js",
       "export * from './lib/more.js';\nexport function greet() {}\nconst a = 1;\nexport { a as answer };\n"
       "throw new Error('ran');\nexport default () => 1;\n");
  file("lib/more.js", "export const extra = 2;\nexport default 3;\n");
  const Exec r = check();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("exports  answer, default, extra, greet\n"), std::string::npos) << r.out;

  const Exec j = check("--json");
  const auto out = nlohmann::json::parse(j.out, nullptr, false);
  ASSERT_FALSE(out.is_discarded()) << j.out;
  EXPECT_EQ(out["exports"], nlohmann::json::array({"answer", "default", "extra", "greet"})) << j.out;
}

TEST_F(CheckCode, AScriptEntrySaysItsExportsAreKnownWhenItRuns) {
  manifest();
  file("index.js", "function run(input) { return input; }\n");
  const Exec r = check();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("exports  (a classic script"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(check("--json").out, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_TRUE(j["exports"].is_null()) << j.dump();
}

TEST_F(CheckCode, AModuleWithoutExportsSaysSo) {
  manifest();
  file("index.js", "import './lib/side.js';\n");
  file("lib/side.js", "export const unused = 1;\n");
  const Exec r = check();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("exports  none"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace skillbox
