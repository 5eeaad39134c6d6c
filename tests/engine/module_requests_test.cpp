// What a source file imports, as QuickJS's parser reads it (engine patch 0021), without running it.
#include "engine/module_requests.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace skillbox::engine {
namespace {

using Specifiers = std::vector<std::string>;

ModuleRequests module_requests(const std::string& source, const Limits& limits = {}) {
  ModuleRequestParser parser(limits);
  return parser.module("m.js", source);
}

TEST(ModuleRequests, DeclarationsAndLiteralDynamicImportsInSourceOrderEachOnce) {
  const ModuleRequests r = module_requests(
      "import a from './a.js';\n"
      "import './side.js';\n"
      "import * as ns from '../up/ns.js';\n"
      "export { x } from './x.js';\n"
      "export * from './star.js';\n"
      "export * as named from './named.js';\n"
      "import { again } from './a.js';\n"
      "export default async () => [await import('./lazy.js'), await import( /* c */ './lazy.js' )];\n"
      "function later() { return import(\"./inner.js\"); }\n"
      "import bare from 'lodash';\n");
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.specifiers, (Specifiers{"./a.js", "./side.js", "../up/ns.js", "./x.js", "./star.js",
                                      "./named.js", "./lazy.js", "./inner.js", "lodash"}));
}

/// `body` and then `import './after.js'` parses to the end, with that import its only request.
void expect_only_the_import_after(const std::string& body) {
  const ModuleRequests r = module_requests(body + "import './after.js';\n");
  EXPECT_TRUE(r.complete) << body;
  EXPECT_EQ(r.specifiers, Specifiers{"./after.js"}) << body;
}

TEST(ModuleRequests, LookalikesAreNotRequests) {
  expect_only_the_import_after(
      "// import a from './comment.js';\n"
      "/* import('./block.js') */\n"
      "const s = \"import b from './string.js'\";\n"
      "const t = `import('./template.js') ${s} ${`import('./nested.js')`}`;\n"
      "const re = /import\\('.\\/regexp.js'\\)/g;\n"
      "const o = { import: './property.js' };\n"
      "export default () => [s, t, re, o.import];\n");
}

TEST(ModuleRequests, WhatARunCompilesParsesToTheEnd) {
  // Literals the parser builds values for as it reads them (a regexp, a BigInt, a tagged template's
  // strings), and newer syntax: a file that compiles in a run parses here, so the import after them
  // is found.
  expect_only_the_import_after(
      "const re = /a(?<name>b)+/gu;\n"
      "const big = 12345678901234567890123n * 2n;\n"
      "const tag = String.raw`x${1}\\n`;\n"
      "const opt = globalThis?.a?.b ?? 0;\n"
      "class K { #p = 1; static s = 2; get p() { return this.#p; } }\n"
      "async function* gen() { for await (const x of []) yield x; }\n"
      "const { a, ...rest } = { a: 1, b: 2 };\n"
      "label: for (;;) { break label; }\n");
}

TEST(ModuleRequests, ComputedDynamicImportsCannotBeKnown) {
  const ModuleRequests r = module_requests(
      "const n = 'x';\n"
      "export default () => [import(n), import('./a.js' + n), import(`./b.js`), import('./c.js')];\n");
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.specifiers, Specifiers{"./c.js"});
}

TEST(ModuleRequests, ASyntaxErrorKeepsTheRequestsBeforeIt) {
  const ModuleRequests r = module_requests("import a from './a.js';\nconst = 1;\nimport b from './b.js';\n");
  EXPECT_FALSE(r.complete);
  EXPECT_EQ(r.specifiers, Specifiers{"./a.js"});
}

TEST(ModuleRequests, TheEntryIsParsedAsTheSessionCompilesIt) {
  ModuleRequestParser parser{Limits{}};
  // A classic script: only dynamic imports.
  ModuleRequests script = parser.entry("index.js", "function run() { return import('./a.js'); }\n");
  EXPECT_TRUE(script.complete);
  EXPECT_EQ(script.specifiers, Specifiers{"./a.js"});
  // Not a script (an import declaration further down): a module.
  ModuleRequests late =
      parser.entry("index.js", "const x = 1;\nimport b from './b.js';\nexport default b;\n");
  EXPECT_TRUE(late.complete);
  EXPECT_EQ(late.specifiers, Specifiers{"./b.js"});
  // A .cjs entry is always a script: its import declaration is a syntax error.
  ModuleRequests cjs = parser.entry("index.cjs", "import c from './c.js';\n");
  EXPECT_FALSE(cjs.complete);
  EXPECT_TRUE(cjs.specifiers.empty());
}

TEST(ModuleRequests, NestingBeyondTheStackLimitEndsTheParseNotTheHost) {
  std::string nested(200'000, '[');
  nested += std::string(200'000, ']');
  Limits limits;
  limits.stack_bytes = Limits::kMinStackBytes;
  const ModuleRequests r = module_requests("import './a.js';\nexport default " + nested + ";\n", limits);
  EXPECT_FALSE(r.complete);
  EXPECT_EQ(r.specifiers, Specifiers{"./a.js"});
}

TEST(ModuleRequests, AFileLargerThanTheHeapLimitEndsTheParse) {
  std::string big = "import './a.js';\nexport const s = [";
  for (int i = 0; i < 200'000; ++i) big += "'s" + std::to_string(i) + "',";
  big += "];\n";
  Limits limits;
  limits.memory_bytes = Limits::kMinMemoryBytes;
  const ModuleRequests r = module_requests(big, limits);
  EXPECT_FALSE(r.complete);
  EXPECT_EQ(r.specifiers, Specifiers{"./a.js"});
  // The same parser parses the next file as if nothing happened: each parse frees what it built.
  ModuleRequestParser parser(limits);
  EXPECT_FALSE(parser.module("big.js", big).complete);
  EXPECT_EQ(parser.module("small.js", "import './b.js';").specifiers, Specifiers{"./b.js"});
}

}  // namespace
}  // namespace skillbox::engine
