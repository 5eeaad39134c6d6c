// Tests of Skill::parse_manifest: the whole skill.json schema, its defaults and its error messages.
#include <gtest/gtest.h>

#include <string>

#include "base/utf8.h"
#include "skillbox/skillbox.h"

namespace skillbox {
namespace {

// Found by fuzz/manifest.cpp: the JSON parser's message quotes the bytes it last read, and cuts a
// multi-byte character where the syntax error starts, so the error carried half a UTF-8 sequence. The
// text is valid UTF-8 (invalid text is refused before parsing); variants use 2-, 3- and 4-byte
// characters where a value should start.
TEST(ParseManifest, SyntaxErrorMessagesAreValidUtf8WhateverTheBytes) {
  for (const std::string& text :
       {std::string("{\"id\":\xde\x87{\n \"id\": \"w\"\"} "), std::string("{\"id\":\xc3\xa9}"),
        std::string("{\"id\":\xe2\x82\xac}"), std::string("{\"id\":\xf0\x9f\x98\x80}")}) {
    auto m = Skill::parse_manifest(text);
    ASSERT_FALSE(m.ok());
    EXPECT_TRUE(base::utf8::is_valid(m.error().message)) << m.error().message;
    EXPECT_NE(m.error().message.find("skill.json: invalid JSON at line 1"), std::string::npos)
        << m.error().message;
  }
}

// ---- good manifests -------------------------------------------------------------------------------

TEST(ParseManifest, MinimalManifestGetsTheDesignDefaults) {
  Result<Manifest> m = Skill::parse_manifest(R"({"id": "hello", "entry": "index.js"})");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->id, "hello");
  EXPECT_EQ(m->name, "hello");  // defaults to the id
  EXPECT_EQ(m->version, "0.0.0");
  EXPECT_EQ(m->entry, "index.js");
  // The documented defaults (docs/manifest.md): 32 MiB, 10,000,000 steps, 512 KiB stack, 5000 ms.
  EXPECT_EQ(m->limits.memory_bytes, 32ull * 1024 * 1024);
  EXPECT_EQ(m->limits.steps, 10'000'000u);
  EXPECT_EQ(m->limits.stack_bytes, 512ull * 1024);
  EXPECT_EQ(m->limits.timeout_ms, 5000u);
  // Deny by default.
  EXPECT_EQ(m->permissions.fs.mode, FsMode::none);
  EXPECT_TRUE(m->permissions.http.allow.empty());
  EXPECT_EQ(m->permissions.http.methods, std::vector<std::string>{"GET"});
  EXPECT_FALSE(m->permissions.http.allow_private_addresses);
  EXPECT_TRUE(m->permissions.env.empty());
  EXPECT_EQ(m->permissions.store.quota_bytes, 1024u * 1024);
  EXPECT_EQ(m->permissions.store.max_keys, 10'000u);
}

TEST(ParseManifest, TheDesignExampleParsesWithEveryValue) {
  Result<Manifest> m = Skill::parse_manifest(R"({
    "id": "weather", "name": "Weather", "version": "1.0.0", "entry": "index.js",
    "limits": { "memory_mb": 32, "steps": 10000000, "stack_kb": 512, "timeout_ms": 5000 },
    "permissions": {
      "fs":    { "mode": "readwrite", "quota_bytes": 10485760, "max_files": 1000 },
      "http":  { "allow": ["https://api.example.com/v1/", "https://*.example.org/"],
                 "methods": ["GET", "POST"], "max_request_bytes": 1048576, "max_response_bytes": 10485760,
                 "timeout_ms": 10000, "max_redirects": 5, "allow_private_addresses": false },
      "env":   ["WEATHER_API_KEY"],
      "store": { "quota_bytes": 1048576, "max_keys": 10000 }
    }
  })");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->name, "Weather");
  EXPECT_EQ(m->version, "1.0.0");
  EXPECT_EQ(m->permissions.fs.mode, FsMode::readwrite);
  EXPECT_EQ(m->permissions.fs.quota_bytes, 10485760u);
  EXPECT_EQ(m->permissions.fs.max_files, 1000u);
  EXPECT_EQ(m->permissions.http.allow,
            (std::vector<std::string>{"https://api.example.com/v1/", "https://*.example.org/"}));
  EXPECT_EQ(m->permissions.http.methods, (std::vector<std::string>{"GET", "POST"}));
  EXPECT_EQ(m->permissions.http.max_request_bytes, 1048576u);
  EXPECT_EQ(m->permissions.http.max_response_bytes, 10485760u);
  EXPECT_EQ(m->permissions.http.timeout_ms, 10000u);
  EXPECT_EQ(m->permissions.http.max_redirects, 5u);
  EXPECT_EQ(m->permissions.env, std::vector<std::string>{"WEATHER_API_KEY"});
}

TEST(ParseManifest, LimitUnitsBecomeBytesAndMilliseconds) {
  Result<Manifest> m = Skill::parse_manifest(
      R"({"id": "a", "entry": "a.js", "limits": {"memory_mb": 4096, "stack_kb": 16, "steps": 1, "timeout_ms": 600000}})");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->limits.memory_bytes, 4096ull * 1024 * 1024);
  EXPECT_EQ(m->limits.stack_bytes, 16ull * 1024);
  EXPECT_EQ(m->limits.steps, 1u);
  EXPECT_EQ(m->limits.timeout_ms, 600000u);
}

TEST(ParseManifest, WholeNumbersWrittenAsFloatsAreIntegers) {
  Result<Manifest> m =
      Skill::parse_manifest(R"({"id": "a", "entry": "a.js", "limits": {"steps": 1e7, "memory_mb": 64.0}})");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->limits.steps, 10'000'000u);
  EXPECT_EQ(m->limits.memory_bytes, 64ull * 1024 * 1024);
}

TEST(ParseManifest, ExtraPermissionKeysOfPolicyHAreRead) {
  Result<Manifest> m = Skill::parse_manifest(R"({"id": "a", "entry": "a.js", "permissions": {
      "fs": {"mode": "read", "max_file_bytes": 4096},
      "http": {"max_concurrent": 2, "max_requests": 7, "allow_private_addresses": true},
      "store": {"max_value_bytes": 100}}})");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->permissions.fs.mode, FsMode::read);
  EXPECT_EQ(m->permissions.fs.max_file_bytes, 4096u);
  EXPECT_EQ(m->permissions.http.max_concurrent, 2u);
  EXPECT_EQ(m->permissions.http.max_requests, 7u);
  EXPECT_TRUE(m->permissions.http.allow_private_addresses);
  EXPECT_EQ(m->permissions.store.max_value_bytes, 100u);
}

TEST(ParseManifest, FetchIsOffByDefaultAndOnWhenAsked) {
  Result<Manifest> off = Skill::parse_manifest(R"({"id": "a", "entry": "a.js"})");
  ASSERT_TRUE(off.ok()) << off.error().message;
  EXPECT_FALSE(off->permissions.http.fetch);
  Result<Manifest> on = Skill::parse_manifest(
      R"({"id": "a", "entry": "a.js", "permissions": {"http": {"fetch": true, "allow": ["https://a.example/"]}}})");
  ASSERT_TRUE(on.ok()) << on.error().message;
  EXPECT_TRUE(on->permissions.http.fetch);
  Result<Manifest> no =
      Skill::parse_manifest(R"({"id": "a", "entry": "a.js", "permissions": {"http": {"fetch": false}}})");
  ASSERT_TRUE(no.ok()) << no.error().message;
  EXPECT_FALSE(no->permissions.http.fetch);
}

TEST(ParseManifest, EntryAndAllowEntriesAreNormalized) {
  Result<Manifest> m =
      Skill::parse_manifest(R"({"id": "a", "entry": "./src/./main.mjs", "permissions": {"http": {
      "allow": ["HTTPS://API.Example.COM:443", "http://localhost:8080/v1/%2fx", "http://[0:0::1]:80/"]}}})");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->entry, "src/main.mjs");
  EXPECT_EQ(m->permissions.http.allow,
            (std::vector<std::string>{"https://api.example.com/", "http://localhost:8080/v1/%2Fx",
                                      "http://[::1]/"}));
}

TEST(ParseManifest, UnicodeNamesAndAByteOrderMarkAreFine) {
  Result<Manifest> m = Skill::parse_manifest(
      "\xEF\xBB\xBF{\"id\": \"meteo\", \"name\": \"M\xC3\xA9t\xC3\xA9o \xE2\x98\x80\", \"entry\": \"a.js\"}");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->name, "M\xC3\xA9t\xC3\xA9o \xE2\x98\x80");
}

TEST(ParseManifest, EmptyListsAreAllowedAndGrantNothing) {
  Result<Manifest> m = Skill::parse_manifest(
      R"({"id": "a", "entry": "a.js", "permissions": {"http": {"allow": [], "methods": []}, "env": []}})");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_TRUE(m->permissions.http.allow.empty());
  EXPECT_TRUE(m->permissions.http.methods.empty());
}

// ---- bad manifests: each with the exact message a user sees ------------------------------------------

struct BadManifest {
  const char* label;
  std::string json;
  std::string message;
};

/// A valid manifest with `extra` spliced in as further top-level members.
std::string with(const std::string& extra) {
  return R"({"id": "demo", "entry": "index.js", )" + extra + "}";
}

std::vector<BadManifest> bad_manifests() {
  return {
      {"syntax error", R"({"id": "demo",)",
       "skill.json: invalid JSON at line 1, column 15: syntax error while parsing object key - unexpected "
       "end of input; "
       "expected string literal"},
      {"top level is not an object", R"(["demo"])",
       "skill.json: expected a JSON object at the top level, got an array"},
      {"duplicate top-level key", R"({"id": "demo", "entry": "index.js", "id": "other"})",
       "skill.json: id: duplicate key; a key may appear only once per object"},
      {"duplicate nested key", with(R"("permissions": {"fs": {"mode": "read", "mode": "readwrite"}})"),
       "skill.json: permissions.fs.mode: duplicate key; a key may appear only once per object"},
      {"unknown top-level key", with(R"("description": "x")"),
       "skill.json: description: unknown key; expected one of id, name, version, entry, limits, permissions, "
       "$schema, tools"},
      {"unknown key with a suggestion", with(R"("limits": {"memory_MB": 8})"),
       "skill.json: limits.memory_MB: unknown key; expected one of memory_mb, steps, stack_kb, timeout_ms "
       "(did you "
       "mean \"memory_mb\"?)"},
      {"unknown key that is not an identifier", with(R"("bad key\n": 1)"),
       "skill.json: \"bad key\\n\": unknown key; expected one of id, name, version, entry, limits, "
       "permissions, $schema, tools"},
      {"$schema that is not a string", with(R"("$schema": 1)"),
       "skill.json: \"$schema\": expected a string (the URL or path of a JSON Schema, for editors), got 1"},
      {"missing id", R"({"entry": "index.js"})",
       "skill.json: id: missing required key; add \"id\": a short name such as \"weather\" (1 to 64 "
       "characters "
       "from a-z, 0-9, '.', '_' and '-', starting with a letter or digit)"},
      {"upper-case id", R"({"id": "Weather", "entry": "index.js"})",
       "skill.json: id: expected 1 to 64 characters from a-z, 0-9, '.', '_' and '-', starting with a letter "
       "or "
       "digit, got \"Weather\""},
      {"id starting with a dot", R"({"id": ".hidden", "entry": "index.js"})",
       "skill.json: id: expected 1 to 64 characters from a-z, 0-9, '.', '_' and '-', starting with a letter "
       "or "
       "digit, got \".hidden\""},
      {"id of the wrong type", R"({"id": 42, "entry": "index.js"})",
       "skill.json: id: expected 1 to 64 characters from a-z, 0-9, '.', '_' and '-', starting with a letter "
       "or "
       "digit, got 42"},
      {"id too long", R"({"id": ")" + std::string(65, 'a') + R"(", "entry": "index.js"})",
       "skill.json: id: expected 1 to 64 characters from a-z, 0-9, '.', '_' and '-', starting with a letter "
       "or "
       "digit, got \"" +
           std::string(48, 'a') + "...\""},
      {"missing entry", R"({"id": "demo"})",
       "skill.json: entry: missing required key; add \"entry\": the skill's main file, such as \"index.js\""},
      {"entry escaping the folder", R"({"id": "demo", "entry": "lib/../../outside.js"})",
       "skill.json: entry: expected a relative path to a file inside the skill folder, such as \"index.js\", "
       "got "
       "\"lib/../../outside.js\" ('..' is not allowed)"},
      {"absolute entry", R"({"id": "demo", "entry": "/etc/passwd"})",
       "skill.json: entry: expected a relative path to a file inside the skill folder, such as \"index.js\", "
       "got "
       "\"/etc/passwd\" (absolute paths are not allowed)"},
      {"entry with backslashes", R"({"id": "demo", "entry": "src\\main.js"})",
       "skill.json: entry: expected a relative path to a file inside the skill folder, such as \"index.js\", "
       "got "
       "\"src\\\\main.js\" (use '/' between folders, not '\\')"},
      {"entry with a NUL", R"({"id": "demo", "entry": "index.js\u0000.png"})",
       "skill.json: entry: expected a relative path to a file inside the skill folder, such as \"index.js\", "
       "got "
       "\"index.js\\u0000.png\" (control characters are not allowed)"},
      {"entry naming a folder", R"({"id": "demo", "entry": "lib/"})",
       "skill.json: entry: expected a relative path to a file inside the skill folder, such as \"index.js\", "
       "got "
       "\"lib/\" (empty path segments ('//' or a trailing '/') are not allowed)"},
      {"memory as a word", with(R"("limits": {"memory_mb": "lots"})"),
       "skill.json: limits.memory_mb: expected an integer from 1 to 4096, got \"lots\""},
      {"memory above the host ceiling", with(R"("limits": {"memory_mb": 5000})"),
       "skill.json: limits.memory_mb: expected an integer from 1 to 4096, got 5000"},
      {"zero memory", with(R"("limits": {"memory_mb": 0})"),
       "skill.json: limits.memory_mb: expected an integer from 1 to 4096, got 0"},
      {"negative steps", with(R"("limits": {"steps": -1})"),
       "skill.json: limits.steps: expected an integer from 1 to 1000000000000, got -1"},
      {"fractional steps", with(R"("limits": {"steps": 1.5})"),
       "skill.json: limits.steps: expected an integer from 1 to 1000000000000, got 1.5"},
      {"stack below the minimum", with(R"("limits": {"stack_kb": 8})"),
       "skill.json: limits.stack_kb: expected an integer from 16 to 4096, got 8"},
      {"timeout above the ceiling", with(R"("limits": {"timeout_ms": 600001})"),
       "skill.json: limits.timeout_ms: expected an integer from 1 to 600000, got 600001"},
      {"timeout as a boolean", with(R"("limits": {"timeout_ms": true})"),
       "skill.json: limits.timeout_ms: expected an integer from 1 to 600000, got true"},
      {"limits not an object", with(R"("limits": [32])"),
       "skill.json: limits: expected an object, got an array"},
      {"unknown permission", with(R"("permissions": {"network": {}})"),
       "skill.json: permissions.network: unknown key; expected one of fs, http, env, store"},
      {"unknown fs mode", with(R"("permissions": {"fs": {"mode": "rw"}})"),
       "skill.json: permissions.fs.mode: expected one of \"none\", \"read\", \"write\", \"readwrite\", got "
       "\"rw\""},
      {"fs quota above the ceiling", with(R"("permissions": {"fs": {"quota_bytes": 1e12}})"),
       "skill.json: permissions.fs.quota_bytes: expected an integer from 0 to 17179869184, got "
       "1000000000000.0"},
      {"http allow not a list", with(R"("permissions": {"http": {"allow": "https://api.example.com/"}})"),
       "skill.json: permissions.http.allow: expected an array of URL prefixes like "
       "[\"https://api.example.com/v1/\"], "
       "got \"https://api.example.com/\""},
      {"http allow with another scheme",
       with(R"("permissions": {"http": {"allow": ["ftp://files.example.com/"]}})"),
       "skill.json: permissions.http.allow[0]: expected a URL prefix \"http(s)://host[:port]/path\", got "
       "\"ftp://files.example.com/\" (the scheme must be http or https)"},
      {"http allow with userinfo",
       with(
           R"("permissions": {"http": {"allow": ["https://ok.example/", "https://ok.example@evil.example/"]}})"),
       "skill.json: permissions.http.allow[1]: expected a URL prefix \"http(s)://host[:port]/path\", got "
       "\"https://ok.example@evil.example/\" (user names and passwords ('@') are not allowed)"},
      {"http allow with a wildcard inside the host",
       with(R"("permissions": {"http": {"allow": ["https://api.*.example.com/"]}})"),
       "skill.json: permissions.http.allow[0]: expected a URL prefix \"http(s)://host[:port]/path\", got "
       "\"https://api.*.example.com/\" ('*' is only allowed as a whole leading label, as in "
       "https://*.example.org/)"},
      {"http allow with a wildcard over a top-level domain",
       with(R"("permissions": {"http": {"allow": ["https://*.com/"]}})"),
       "skill.json: permissions.http.allow[0]: expected a URL prefix \"http(s)://host[:port]/path\", got "
       "\"https://*.com/\" (a wildcard must be followed by at least two labels, as in *.example.org)"},
      {"http allow with a query",
       with(R"("permissions": {"http": {"allow": ["https://api.example.com/v1?key=1"]}})"),
       "skill.json: permissions.http.allow[0]: expected a URL prefix \"http(s)://host[:port]/path\", got "
       "\"https://api.example.com/v1?key=1\" (query strings and fragments ('?', '#') are not allowed)"},
      {"http allow with a short IPv4 spelling",
       with(R"("permissions": {"http": {"allow": ["http://127.1/"]}})"),
       "skill.json: permissions.http.allow[0]: expected a URL prefix \"http(s)://host[:port]/path\", got "
       "\"http://127.1/\" (write IPv4 addresses as four decimal numbers without leading zeros, like "
       "192.0.2.1)"},
      {"http allow with a bad port",
       with(R"("permissions": {"http": {"allow": ["https://api.example.com:99999/"]}})"),
       "skill.json: permissions.http.allow[0]: expected a URL prefix \"http(s)://host[:port]/path\", got "
       "\"https://api.example.com:99999/\" (the port must be a number from 1 to 65535)"},
      {"http allow listed twice",
       with(R"("permissions": {"http": {"allow": ["https://a.example/", "HTTPS://A.EXAMPLE:443/"]}})"),
       "skill.json: permissions.http.allow[1]: same as allow[0] (\"https://a.example/\"); list each prefix "
       "once"},
      {"lower-case method", with(R"("permissions": {"http": {"methods": ["get"]}})"),
       "skill.json: permissions.http.methods[0]: expected one of GET, HEAD, POST, PUT, PATCH, DELETE, "
       "OPTIONS, got "
       "\"get\" (methods are upper case)"},
      {"CONNECT method", with(R"("permissions": {"http": {"methods": ["GET", "CONNECT"]}})"),
       "skill.json: permissions.http.methods[1]: expected one of GET, HEAD, POST, PUT, PATCH, DELETE, "
       "OPTIONS, got "
       "\"CONNECT\" (CONNECT and TRACE are never granted)"},
      {"method listed twice", with(R"("permissions": {"http": {"methods": ["GET", "POST", "GET"]}})"),
       "skill.json: permissions.http.methods[2]: \"GET\" is listed twice; list each method once"},
      {"private addresses as a string", with(R"("permissions": {"http": {"allow_private_addresses": "no"}})"),
       "skill.json: permissions.http.allow_private_addresses: expected true or false, got \"no\""},
      {"fetch as a string",
       with(R"("permissions": {"http": {"allow": ["https://a.example/"], "fetch": "yes"}})"),
       "skill.json: permissions.http.fetch: expected true or false, got \"yes\""},
      {"fetch without an allow entry", with(R"("permissions": {"http": {"fetch": true}})"),
       "skill.json: permissions.http.fetch: fetch is true but permissions.http.allow lists no URL prefix; "
       "every "
       "fetch would be refused: add the prefixes fetch may reach, or leave fetch out"},
      {"too many redirects", with(R"("permissions": {"http": {"max_redirects": 21}})"),
       "skill.json: permissions.http.max_redirects: expected an integer from 0 to 20, got 21"},
      {"env name with '='", with(R"("permissions": {"env": ["API_KEY=secret"]})"),
       "skill.json: permissions.env[0]: expected an environment variable name (letters, digits and '_', not "
       "starting "
       "with a digit, at most 128 characters), got \"API_KEY=secret\""},
      {"env name with a NUL", with(R"("permissions": {"env": ["HOME\u0000PATH"]})"),
       "skill.json: permissions.env[0]: expected an environment variable name (letters, digits and '_', not "
       "starting "
       "with a digit, at most 128 characters), got \"HOME\\u0000PATH\""},
      {"empty env name", with(R"("permissions": {"env": ["A", ""]})"),
       "skill.json: permissions.env[1]: expected an environment variable name (letters, digits and '_', not "
       "starting "
       "with a digit, at most 128 characters), got \"\""},
      {"env not a list", with(R"("permissions": {"env": {"API_KEY": true}})"),
       "skill.json: permissions.env: expected an array of environment variable names like [\"API_KEY\"], got "
       "an "
       "object"},
      {"env name listed twice", with(R"("permissions": {"env": ["API_KEY", "API_KEY"]})"),
       "skill.json: permissions.env[1]: \"API_KEY\" is listed twice; list each name once"},
      {"negative store keys", with(R"("permissions": {"store": {"max_keys": -5}})"),
       "skill.json: permissions.store.max_keys: expected an integer from 0 to 1000000, got -5"},
      {"name with a terminal escape", with(R"("name": "\u001b[2JHello")"),
       "skill.json: name: expected a string of 1 to 128 bytes without control characters, got "
       "\"\\u001b[2JHello\""},
      {"version with a space", with(R"("version": "1.0 beta")"),
       "skill.json: version: expected a version like \"1.0.0\" (1 to 64 characters from A-Z, a-z, 0-9, '.', "
       "'+' and "
       "'-', starting with a letter or digit), got \"1.0 beta\""},
      {"deep nesting", with(R"("x": )" + std::string(40, '[') + std::string(40, ']')),
       "skill.json: x" +
           [] {
             std::string path;
             for (int i = 0; i < 31; ++i) path += "[0]";
             return path;
           }() +
           ": nested deeper than 32 levels"},
      {"invalid UTF-8", "{\"id\": \"demo\", \"name\": \"caf\xC3\", \"entry\": \"index.js\"}",
       "skill.json: not valid UTF-8 at byte 27; save the file as UTF-8"},
      {"overlong UTF-8 slash",
       "{\"id\": \"demo\", \"entry\": \"..\xC0\xAF"
       "a.js\"}",
       "skill.json: not valid UTF-8 at byte 27; save the file as UTF-8"},
      {"manifest too large", with(R"("name": ")" + std::string(70000, 'x') + "\""),
       "skill.json: larger than 65536 bytes; a manifest is a small JSON object (see docs/manifest.md)"},
      {"several problems at once",
       R"({"id": "A", "limits": {"steps": 0}, "permissions": {"fs": {"mode": 1}}})",
       "skill.json: id: expected 1 to 64 characters from a-z, 0-9, '.', '_' and '-', starting with a letter "
       "or "
       "digit, got \"A\"\n"
       "skill.json: entry: missing required key; add \"entry\": the skill's main file, such as \"index.js\"\n"
       "skill.json: limits.steps: expected an integer from 1 to 1000000000000, got 0\n"
       "skill.json: permissions.fs.mode: expected one of \"none\", \"read\", \"write\", \"readwrite\", got "
       "1"},
  };
}

TEST(ParseManifest, EveryBadManifestIsRejectedWithItsExactMessage) {
  const auto cases = bad_manifests();
  ASSERT_GE(cases.size(), 20u);
  for (const BadManifest& c : cases) {
    SCOPED_TRACE(c.label);
    Result<Manifest> m = Skill::parse_manifest(c.json);
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.error().message, c.message);
  }
}

TEST(ParseManifest, AGoodManifestStillParsesAfterBadOnes) {
  for (const BadManifest& c : bad_manifests()) ASSERT_FALSE(Skill::parse_manifest(c.json).ok()) << c.label;
  EXPECT_TRUE(Skill::parse_manifest(R"({"id": "hello", "entry": "index.js"})").ok());
}

TEST(ParseManifest, ProblemsBeyondTwentyAreCounted) {
  std::string json = R"({"id": "demo", "entry": "index.js", "permissions": {"env": [)";
  for (int i = 0; i < 25; ++i) json += std::string(i ? "," : "") + "\"" + std::to_string(i) + "BAD\"";
  json += "]}}";
  Result<Manifest> m = Skill::parse_manifest(json);
  ASSERT_FALSE(m.ok());
  const std::string& msg = m.error().message;
  EXPECT_EQ(std::count(msg.begin(), msg.end(), '\n'), 20);
  EXPECT_TRUE(msg.ends_with("\nskill.json: ... and 5 more problems")) << msg;
}

TEST(ParseManifest, MessagesNeverCarryRawControlOrNonAsciiBytes) {
  // A hostile manifest must not be able to drive the terminal of the person running `skillbox check`.
  Result<Manifest> m = Skill::parse_manifest(
      "{\"id\": \"\\u001b]0;pwned\\u0007\xE2\x80\xAE\", \"entry\": \"index.js\", \"\\u001b[2J\": 1}");
  ASSERT_FALSE(m.ok());
  for (char c : m.error().message) {
    const auto b = static_cast<unsigned char>(c);
    EXPECT_TRUE(b == '\n' || (b >= 0x20 && b < 0x7F)) << "byte " << int(b) << " in " << m.error().message;
  }
}

TEST(ParseManifest, MutatedManifestsAreAcceptedOrRejectedWithAMessageNeverACrash) {
  // Deterministic byte mutations of a full manifest: every result is a Manifest or a message in the
  // documented style, and a clean manifest still parses afterwards.
  const std::string base = R"({"id": "weather", "name": "Weather", "version": "1.0.0", "entry": "index.js",
    "limits": {"memory_mb": 32, "steps": 10000000, "stack_kb": 512, "timeout_ms": 5000},
    "permissions": {"fs": {"mode": "readwrite", "quota_bytes": 10485760, "max_files": 1000},
      "http": {"allow": ["https://api.example.com/v1/", "https://*.example.org/"], "methods": ["GET", "POST"]},
      "env": ["WEATHER_API_KEY"], "store": {"quota_bytes": 1048576, "max_keys": 10000}}})";
  static constexpr char kAlphabet[] = "{}[]\":,.-+eE0123456789aAzZ*@/\\ \x00\x7f\xc3\xa9\xff";
  const std::string alphabet(kAlphabet, sizeof kAlphabet - 1);  // keeps the NUL
  uint64_t state = 0x9E3779B97F4A7C15ull;
  const auto next = [&state] {  // xorshift64: reproducible without <random>'s platform differences
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  size_t accepted = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string text = base;
    const int edits = 1 + static_cast<int>(next() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = next() % text.size();
      const char c = alphabet[next() % alphabet.size()];
      switch (next() % 3) {
        case 0:
          text[at] = c;
          break;
        case 1:
          text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), c);
          break;
        default:
          text.erase(at, 1 + next() % 8);
          break;
      }
    }
    Result<Manifest> m = Skill::parse_manifest(text);
    if (m.ok()) {
      ++accepted;
      continue;
    }
    ASSERT_TRUE(m.error().message.starts_with("skill.json: ")) << text << "\n-> " << m.error().message;
  }
  EXPECT_GT(accepted, 0u);  // some mutations (inside strings, digits) stay valid
  EXPECT_TRUE(Skill::parse_manifest(base).ok());
}

}  // namespace
}  // namespace skillbox
