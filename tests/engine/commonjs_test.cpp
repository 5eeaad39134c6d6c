// engine/commonjs.h: what counts as a top-level use of CommonJS, and what never does.
#include "engine/commonjs.h"

#include <gtest/gtest.h>

#include <string>

namespace skillbox::engine {
namespace {

TEST(CommonJs, TopLevelUsesAreFoundWithTheirLine) {
  auto use = find_commonjs_use("const x = 1;\nmodule.exports = function (input) { return x; };\n");
  ASSERT_TRUE(use);
  EXPECT_EQ(use->line, 2u);
  EXPECT_EQ(use->what, "module.exports");

  use = find_commonjs_use("// helpers\nconst fs = require('fs');\n");
  ASSERT_TRUE(use);
  EXPECT_EQ(use->line, 2u);
  EXPECT_EQ(use->what, "require(...)");

  use = find_commonjs_use("\n\nexports.run = async (input) => input;\n");
  ASSERT_TRUE(use);
  EXPECT_EQ(use->line, 3u);
  EXPECT_EQ(use->what, "exports.NAME");

  use = find_commonjs_use("exports['run'] = () => 1;");
  ASSERT_TRUE(use);
  EXPECT_EQ(use->what, "exports[...]");

  // The first of several, by line.
  use = find_commonjs_use("const a = require('./a');\nmodule.exports = a;\n");
  ASSERT_TRUE(use);
  EXPECT_EQ(use->line, 1u);
}

TEST(CommonJs, CommentsStringsTemplatesAndRegexpsAreNotCode) {
  EXPECT_FALSE(find_commonjs_use("// module.exports = f\n/* require('x') */\nfunction run() {}\n"));
  EXPECT_FALSE(find_commonjs_use("const s = \"require('x')\"; const t = 'module.exports = 1';\n"));
  EXPECT_FALSE(find_commonjs_use("const s = `module.exports ${1 + 2} exports.x require(`;\n"));
  EXPECT_FALSE(find_commonjs_use("const r = /require\\(/g; const q = /[/]module.exports/;\n"));
  EXPECT_FALSE(find_commonjs_use("const s = 'it\\'s require(\\'x\\')';\n"));
  // A division is not a regular expression: the code after it is still seen.
  auto use = find_commonjs_use("const half = 4 / 2; const b = (1) / 2;\nmodule.exports = half;\n");
  ASSERT_TRUE(use);
  EXPECT_EQ(use->line, 2u);
  // Code inside a template's `${...}` at the top level is nested, like a block.
  EXPECT_FALSE(find_commonjs_use("const s = `a ${ `b ${'c'}` } d`;\nfunction run() {}\n"));
  // Lines are counted through multi-line comments and templates.
  use = find_commonjs_use("/*\n\n*/\nconst t = `\n`;\nexports.x = 1;\n");
  ASSERT_TRUE(use);
  EXPECT_EQ(use->line, 6u);
}

TEST(CommonJs, PropertiesDeclaredNamesAndNestedUsesAreNotTopLevelUses) {
  EXPECT_FALSE(find_commonjs_use("const m = {}; m.require('x'); obj.module.exports = 1; a?.exports.b;\n"));
  EXPECT_FALSE(find_commonjs_use("var module = { exports: {} };\nmodule.exports = 1;\n"));
  EXPECT_FALSE(find_commonjs_use("function require(n) { return n; }\nrequire('x');\n"));
  // Hoisted: a declaration after the use makes it the file's own name too.
  EXPECT_FALSE(find_commonjs_use("require('x');\nfunction require(n) { return n; }\n"));
  // Inside a function body, a use does not run as the file loads.
  EXPECT_FALSE(find_commonjs_use("function run() {\n  return require('x');\n}\n"));
  // The universal-module pattern tests for the names: it runs as a classic script.
  EXPECT_FALSE(find_commonjs_use(
      "function run() { return 1; }\nif (typeof module !== 'undefined') module.exports = { run };\n"));
}

TEST(CommonJs, MalformedAndHugeInputEndsTheScanQuietly) {
  EXPECT_FALSE(find_commonjs_use(""));
  EXPECT_FALSE(find_commonjs_use("'unterminated"));
  EXPECT_FALSE(find_commonjs_use("`unterminated ${"));
  EXPECT_FALSE(find_commonjs_use("/* unterminated"));
  EXPECT_FALSE(find_commonjs_use("}}}}"));
  EXPECT_FALSE(find_commonjs_use(std::string("a\0b", 3)));
  // Nesting of templates past the bound: the scan stops and reports nothing.
  std::string deep;
  for (size_t i = 0; i <= kMaxTemplateNesting; ++i) deep += "`${";
  deep += "require('x')";
  EXPECT_FALSE(find_commonjs_use(deep));
  // Longer than the bound: not looked at.
  std::string big(kMaxCommonJsScanBytes, ' ');
  big += "module.exports = 1;";
  EXPECT_FALSE(find_commonjs_use(big));
  // A hashbang line is not code.
  auto use = find_commonjs_use("#!/usr/bin/env node\nmodule.exports = 1;\n");
  ASSERT_TRUE(use);
  EXPECT_EQ(use->line, 2u);
}

}  // namespace
}  // namespace skillbox::engine
