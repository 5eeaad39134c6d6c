#include "engine/skill_files.h"

#include <gtest/gtest.h>

namespace skillbox::engine {
namespace {

std::string resolved(std::string_view importer, std::string_view spec) {
  auto r = resolve_specifier(importer, spec);
  return r ? *r : "ERROR: " + r.error().message;
}

TEST(ResolveSpecifier, RelativeSpecifiersResolveAgainstTheImporter) {
  EXPECT_EQ(resolved("index.js", "./a.js"), "a.js");
  EXPECT_EQ(resolved("lib/util.js", "./b.js"), "lib/b.js");
  EXPECT_EQ(resolved("lib/util.js", "../c.js"), "c.js");
  EXPECT_EQ(resolved("lib/deep/x.js", "../../d.js"), "d.js");
  EXPECT_EQ(resolved("lib/a.js", "./x/../y//z.js"), "lib/y/z.js");
  EXPECT_EQ(resolved("index.js", "./a\\b.js"), "a\\b.js");  // a backslash is a file-name character
}

TEST(ResolveSpecifier, EscapesAreRejectedWithAReason) {
  EXPECT_EQ(resolved("index.js", "../x.js"),
            "ERROR: cannot import '../x.js': it leads outside the skill folder");
  EXPECT_EQ(resolved("lib/a.js", "../../x.js"),
            "ERROR: cannot import '../../x.js': it leads outside the skill folder");
  EXPECT_EQ(resolved("lib/a.js", "./../../../etc/passwd"),
            "ERROR: cannot import './../../../etc/passwd': it leads outside the skill folder");
  EXPECT_EQ(resolved("index.js", "./x/../../y.js"),
            "ERROR: cannot import './x/../../y.js': it leads outside the skill folder");
}

TEST(ResolveSpecifier, BareAbsoluteAndUrlSpecifiersAreRejected) {
  for (const char* spec :
       {"std", "os", "lodash", "file:///etc/passwd", "http://example.com/x.js", "index.js", ".", ".."}) {
    std::string r = resolved("index.js", spec);
    EXPECT_NE(r.find("only files of the skill can be imported"), std::string::npos) << spec << " -> " << r;
  }
  EXPECT_NE(resolved("index.js", "/etc/passwd").find("absolute paths are not allowed"), std::string::npos);
  EXPECT_NE(resolved("index.js", "./").find("names a folder"), std::string::npos);
  EXPECT_NE(resolved("index.js", std::string_view("./a\0/../../x", 12)).find("NUL byte"), std::string::npos);
}

TEST(NormalizeRelative, ManifestEntryPaths) {
  EXPECT_EQ(*normalize_relative("index.js"), "index.js");
  EXPECT_EQ(*normalize_relative("./src//main.js"), "src/main.js");
  EXPECT_EQ(*normalize_relative("src/../main.js"), "main.js");
  EXPECT_FALSE(normalize_relative("/etc/passwd"));
  EXPECT_FALSE(normalize_relative("../index.js"));
  EXPECT_FALSE(normalize_relative("a/../.."));
  EXPECT_FALSE(normalize_relative(""));
  EXPECT_FALSE(normalize_relative("./"));
}

}  // namespace
}  // namespace skillbox::engine
