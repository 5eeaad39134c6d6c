// openhuman.fs through JS: skills run by the in-process runner, the workspace checked from the test.
// Covers the API, the Workspace section of docs/security.md through JS, and the hostile-argument
// cases (Proxies, getters, toString tricks) against every fs function.
//
// As in tests/capabilities/fs/workspace_test.cpp, mutation attempts go through decoy symlinks into the
// test's temporary directory, never towards the real /etc (these tests run as root on CI).
#include "bindings/fs.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "skill_fixture.h"
#include "skillbox/skillbox.h"

namespace skillbox {
namespace {

namespace fs = std::filesystem;
using testing::describe;
using testing::TempSkill;

std::string read_host(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_host(const fs::path& p, std::string_view content) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << content;
}

class FsBindingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "skillbox-fsjs-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    HostOptions options;
    options.data_dir = data();
    options.env = std::map<std::string, std::string>{};
    runner_ = std::make_unique<skillbox::testing::TestRunner>(std::move(options));
    skill_ = std::make_unique<TempSkill>(std::initializer_list<std::pair<const std::string, std::string>>{});
    skill_->manifest().id = "test-skill";
  }
  void TearDown() override {
    runner_.reset();
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  fs::path data() const { return root_ / "data"; }
  fs::path ws() const { return data() / "skills" / "test-skill" / "workspace"; }
  fs::path outside() const { return root_ / "outside"; }
  void prepare() { fs::create_directories(ws()); }

  /// Runs `body` as the body of the skill's async default export (`input` in scope) with `policy`.
  RunResult run(const std::string& body, FsMode mode = FsMode::readwrite, FsPolicy policy = {},
                const std::string& input = "null") {
    const std::string source =
        "const fs = openhuman.fs;\nexport default async function (input) {\n" + body + "\n}\n";
    // One skill folder per test (the data directory binds the id whose workspace ws() names to one
    // folder, docs/manifest.md "Identity"); each run gets its own entry file and manifest copy, so
    // concurrent runs share nothing but the folder.
    const std::string entry = "run-" + std::to_string(next_entry_++) + ".js";
    skill_->write(entry, source);
    Manifest manifest = skill_->manifest();
    manifest.entry = entry;
    policy.mode = mode;
    manifest.permissions.fs = policy;
    return runner_->run(
        {.skill = Skill(skill_->dir(), manifest), .export_name = "", .input_json = input, .overrides = {}});
  }

  /// Runs `body` and expects outcome ok with `value_json`.
  void expect_value(const std::string& body, const std::string& value_json, FsMode mode = FsMode::readwrite) {
    const RunResult r = run(body, mode);
    EXPECT_EQ(r.outcome, Outcome::ok) << describe(r);
    EXPECT_EQ(r.value_json, value_json) << body;
  }

  /// The next invocation in the same process behaves normally.
  void expect_next_invocation_works() {
    expect_value(
        "await fs.writeFile('next.txt', 'fine'); const t = await fs.readFile('next.txt');"
        " await fs.remove('next.txt'); return t;",
        "\"fine\"");
  }

  fs::path root_;
  std::unique_ptr<skillbox::testing::TestRunner> runner_;
  std::unique_ptr<TempSkill> skill_;  // id "test-skill", made in SetUp
  std::atomic<unsigned> next_entry_{0};
};

// JS helper, prepended to snippets: the outcome of a promise as a short string.
constexpr const char* kSettle = R"JS(
  const settle = async (f) => {
    try { const v = await f(); return 'ok ' + JSON.stringify(v); }
    catch (e) {
      if (!(e instanceof Error)) return 'non-Error ' + String(e);
      if (Object.getPrototypeOf(Object.getPrototypeOf(e)) !== Error.prototype &&
          Object.getPrototypeOf(e) !== Error.prototype) return 'foreign ' + e.name;
      return e.name + (e.code ? ' ' + e.code : '') + ': ' + e.message;
    }
  };
)JS";

// ---- the API ----------------------------------------------------------------------------------------

TEST_F(FsBindingTest, WriteReadAppendAndStatWithTheFileSystemChecked) {
  const RunResult r = run(R"JS(
    await fs.writeFile('hello.txt', 'h\u00e9llo \u{1F4DD}');
    await fs.writeFile('bin.dat', new Uint8Array([0, 1, 255, 10]));
    await fs.appendFile('log.txt', 'one\n');
    await fs.appendFile('log.txt', new Uint8Array([0x74, 0x77, 0x6f, 0x0a]));
    const bin = await fs.readFile('bin.dat', {encoding: 'binary'});
    const st = await fs.stat('hello.txt');
    return {
      text: await fs.readFile('hello.txt'),
      explicit: await fs.readFile('hello.txt', {encoding: 'utf8'}),
      isU8: bin instanceof Uint8Array, bin: Array.from(bin),
      log: await fs.readFile('log.txt', null),
      stat: [st.type, st.size, typeof st.mtimeMs, Math.abs(Date.now() - st.mtimeMs) < 600000],
      dirStat: await fs.stat('.'),
      exists: [await fs.exists('hello.txt'), await fs.exists('nope')],
    };
  )JS");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_NE(r.value_json.find(R"("text":"héllo 📝","explicit":"héllo 📝")"), std::string::npos) << r.value_json;
  EXPECT_NE(r.value_json.find(R"("isU8":true,"bin":[0,1,255,10],"log":"one\ntwo\n")"), std::string::npos);
  EXPECT_NE(r.value_json.find(R"("stat":["file",11,"number",true])"), std::string::npos) << r.value_json;
  EXPECT_NE(r.value_json.find(R"("dirStat":{"type":"directory","size":0,"mtimeMs":)"), std::string::npos);
  EXPECT_NE(r.value_json.find(R"("exists":[true,false])"), std::string::npos);
  EXPECT_EQ(read_host(ws() / "hello.txt"), "h\xc3\xa9llo \xf0\x9f\x93\x9d");
  EXPECT_EQ(read_host(ws() / "bin.dat"), std::string("\0\1\xff\n", 4));
  EXPECT_EQ(read_host(ws() / "log.txt"), "one\ntwo\n");
}

TEST_F(FsBindingTest, DirectoriesReaddirRemoveAndRename) {
  expect_value(
      R"JS(
    await fs.mkdir('a/b/c', {recursive: true});
    await fs.mkdir('d');
    await fs.writeFile('a/b/f.txt', 'x');
    await fs.writeFile('z.txt', 'z');
    const listing = await fs.readdir('.');
    await fs.rename('z.txt', 'd/z.txt');
    await fs.remove('a', {recursive: true});
    return [listing, await fs.readdir('d'), await fs.exists('a')];
  )JS",
      R"([[{"name":"a","type":"directory"},{"name":"d","type":"directory"},{"name":"z.txt","type":"file"}],)"
      R"([{"name":"z.txt","type":"file"}],false])");
  EXPECT_EQ(read_host(ws() / "d" / "z.txt"), "z");
  EXPECT_FALSE(fs::exists(ws() / "a"));
}

TEST_F(FsBindingTest, ReaddirObjectsAreOrdinaryObjectsOfTheSkill) {
  // Properties are defined, not assigned: setters planted on Object.prototype never run.
  expect_value(R"JS(
    let ran = 0;
    Object.defineProperty(Object.prototype, 'name', {set() { ran++; }, configurable: true});
    Object.defineProperty(Object.prototype, 'type', {set() { ran++; }, configurable: true});
    globalThis.Uint8Array = function () { ran++; };
    await fs.writeFile('a', 'x');
    const [entry] = await fs.readdir('.');
    const bytes = await fs.readFile('a', {encoding: 'binary'});
    return [ran, entry.name, Object.getPrototypeOf(entry) === Object.prototype, bytes.length];
  )JS",
               R"([0,"a",true,1])");
}

TEST_F(FsBindingTest, HostErrorsRejectWithNameCodeAndMessage) {
  expect_value(
      std::string(kSettle) + R"JS(
    return [
      await settle(() => fs.readFile('missing.txt')),
      await settle(() => fs.mkdir('x/y')),
      await settle(async () => { await fs.mkdir('d'); return fs.mkdir('d'); }),
      await settle(async () => { await fs.writeFile('d/f', ''); return fs.remove('d'); }),
      await settle(() => fs.readdir('d/f')),
      await settle(() => fs.readFile('')),
    ];
  )JS",
      R"(["NotFound ENOENT: readFile \"missing.txt\": no such file or directory",)"
      R"("NotFound ENOENT: mkdir \"x/y\": the parent directory does not exist",)"
      R"("AlreadyExists EEXIST: mkdir \"d\": already exists",)"
      R"("NotEmpty ENOTEMPTY: remove \"d\": the directory is not empty; pass {recursive: true} to remove it",)"
      R"("InvalidArgument EINVAL: readdir \"d/f\": not a directory",)"
      R"("InvalidArgument EINVAL: readFile \"\": path is empty; use \".\" for the workspace root"])");
}

TEST_F(FsBindingTest, TextEncodingRules) {
  prepare();
  write_host(ws() / "bad.txt",
             "a\xff"
             "b\xe2\x82"
             "c");
  write_host(ws() / "bom.txt", "\xef\xbb\xbfx");
  expect_value(R"JS(
    await fs.writeFile('lone.txt', 'x\uD800y');  // a lone surrogate in data becomes U+FFFD
    const bad = await fs.readFile('bad.txt');     // invalid UTF-8 reads as U+FFFD
    const bom = await fs.readFile('bom.txt');     // a BOM is kept, like Node's readFile
    return [bad === 'a\uFFFDb\uFFFDc', bom.length, bom.charCodeAt(0) === 0xFEFF,
            Array.from(await fs.readFile('lone.txt', {encoding: 'binary'}))];
  )JS",
               "[true,2,true,[120,239,191,189,121]]");
}

// ---- modes ------------------------------------------------------------------------------------------

constexpr const char* kEveryCall = R"JS(
  const calls = {
    readFile: p => fs.readFile(p), writeFile: p => fs.writeFile(p, 'x'), appendFile: p => fs.appendFile(p, 'x'),
    readdir: p => fs.readdir(p), stat: p => fs.stat(p), exists: p => fs.exists(p), mkdir: p => fs.mkdir(p),
    mkdirRecursive: p => fs.mkdir(p, {recursive: true}), remove: p => fs.remove(p),
    removeRecursive: p => fs.remove(p, {recursive: true}), renameFrom: p => fs.rename(p, 'renamed.txt'),
    renameTo: p => fs.rename('a.txt', p),
  };
  const reads = new Set(['readFile', 'readdir', 'stat', 'exists']);
)JS";

TEST_F(FsBindingTest, ModesRefuseWithTheManifestKey) {
  prepare();
  write_host(ws() / "a.txt", "original");
  const std::string body = std::string(kSettle) + kEveryCall + R"JS(
    const out = {};
    for (const [name, call] of Object.entries(calls)) out[name] = await settle(() => call('a.txt'));
    return out;
  )JS";
  // read: every mutation refused, naming the key.
  RunResult r = run(body, FsMode::read);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  for (const char* name : {"writeFile", "appendFile", "mkdir", "remove", "rename"}) {
    const std::string expected =
        std::string("PermissionDenied EACCES: permissions.fs.mode is \\\"read\\\"; ") + name +
        " needs \\\"write\\\" or \\\"readwrite\\\"";
    EXPECT_NE(r.value_json.find(expected), std::string::npos) << name << "\n" << r.value_json;
  }
  EXPECT_NE(r.value_json.find(R"("readFile":"ok \"original\"")"), std::string::npos) << r.value_json;
  EXPECT_EQ(read_host(ws() / "a.txt"), "original");
  // write: reads, listings, stats and exists refused.
  r = run(body, FsMode::write);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  for (const char* name : {"readFile", "readdir", "stat", "exists"}) {
    const std::string expected = std::string("\"") + name +
                                 "\":\"PermissionDenied EACCES: permissions.fs.mode is \\\"write\\\"; " +
                                 name + " needs \\\"read\\\" or \\\"readwrite\\\"\"";
    EXPECT_NE(r.value_json.find(expected), std::string::npos) << name << "\n" << r.value_json;
  }
  // none: everything refused; no folder is even created for the skill.
  fs::remove_all(data());
  r = run(body, FsMode::none);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  size_t refusals = 0;
  for (size_t pos = 0;
       (pos = r.value_json.find("permissions.fs.mode is \\\"none\\\"", pos)) != std::string::npos; ++pos)
    ++refusals;
  EXPECT_EQ(refusals, 12u) << r.value_json;
  EXPECT_FALSE(fs::exists(data()));
  expect_next_invocation_works();
}

// ---- docs/security.md: Workspace, through JS ------------------------------------------------------

class FsSecurityTest : public FsBindingTest {
 protected:
  void SetUp() override {
    FsBindingTest::SetUp();
    prepare();
    write_host(ws() / "a.txt", "inside");
    ASSERT_EQ(symlink("/etc", (ws() / "l1").c_str()), 0);
    ASSERT_EQ(symlink("../../", (ws() / "l2").c_str()), 0);
    ASSERT_EQ(symlink("/etc/passwd", (ws() / "l3").c_str()), 0);
    fs::create_directories(outside());
    write_host(outside() / "passwd", "decoy");
    ASSERT_EQ(symlink(outside().c_str(), (ws() / "m1").c_str()), 0);
    ASSERT_EQ(symlink("../../../../outside", (ws() / "m2").c_str()), 0);
    ASSERT_EQ(symlink((outside() / "passwd").c_str(), (ws() / "m3").c_str()), 0);
    passwd_ = read_host("/etc/passwd");
  }
  void expect_untouched() {
    EXPECT_EQ(read_host("/etc/passwd"), passwd_);
    EXPECT_EQ(read_host(outside() / "passwd"), "decoy");
    EXPECT_EQ(std::distance(fs::directory_iterator(outside()), fs::directory_iterator()), 1);
    EXPECT_EQ(read_host(ws() / "a.txt"), "inside");
    EXPECT_FALSE(fs::exists(data() / "skills" / "test-skill" / "a.txt"));
    EXPECT_FALSE(fs::exists(data() / "a.txt"));
  }
  std::string passwd_;
};

TEST_F(FsSecurityTest, SymlinksTraversalEtcPasswdAndNulThroughEveryFunction) {
  const RunResult r = run(std::string(kSettle) + kEveryCall + R"JS(
    const readPaths = ['l1', 'l1/passwd', 'l2', 'l2/etc/passwd', 'l3'];
    const writePaths = ['m1', 'm1/passwd', 'm1/new', 'm2', 'm2/passwd', 'm3'];
    const traversal = ['../x', 'a/../../x', '/etc/passwd', '//etc/passwd', '////etc/passwd', './../x',
                       'a/./..//../x'];
    const unexpected = [];
    let checked = 0;
    const expect = async (name, path, want) => {
      const got = await settle(() => calls[name](path));
      checked++;
      if (!got.startsWith(want)) unexpected.push(name + '(' + JSON.stringify(path) + ') -> ' + got);
    };
    for (const name of Object.keys(calls)) {
      for (const p of reads.has(name) ? readPaths : writePaths) await expect(name, p, 'PermissionDenied EACCES');
      for (const p of traversal) await expect(name, p, 'PermissionDenied EACCES');
      await expect(name, 'notes.txt\0/../../../etc/passwd', 'InvalidArgument EINVAL');
      await expect(name, 'a.txt\uD800', 'InvalidArgument EINVAL');
    }
    // Two-path: both sides are checked.
    const renames = [await settle(() => fs.rename('a.txt', '../a.txt')),
                     await settle(() => fs.rename('../a.txt', 'a.txt'))];
    // Spellings that are ordinary names stay inside.
    const inside = [await settle(() => fs.readFile('..\\..\\x')), await settle(() => fs.readFile('C:\\x')),
                    await settle(() => fs.readFile('~/x'))];
    await fs.writeFile('..\\..\\x', 'plain name');
    return {unexpected, checked, renames, inside};
  )JS");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_NE(r.value_json.find(R"("unexpected":[],"checked":176)"), std::string::npos) << r.value_json;
  EXPECT_NE(r.value_json.find(
                R"("renames":["PermissionDenied EACCES: rename \"../a.txt\": path leaves the workspace",)"
                R"("PermissionDenied EACCES: rename \"../a.txt\": path leaves the workspace"])"),
            std::string::npos)
      << r.value_json;
  EXPECT_NE(r.value_json.find(R"("inside":["NotFound ENOENT)"), std::string::npos) << r.value_json;
  EXPECT_EQ(read_host(ws() / "..\\..\\x"), "plain name");
  expect_untouched();
  expect_next_invocation_works();
}

TEST_F(FsSecurityTest, NonStringPathsAreTypeErrorsAndNeverConverted) {
  const RunResult r = run(std::string(kSettle) + R"JS(
    let conversions = 0;
    const tricky = {
      toString() { conversions++; return 'a.txt'; }, valueOf() { conversions++; return 'a.txt'; },
      [Symbol.toPrimitive]() { conversions++; return 'a.txt'; },
    };
    const paths = [new TextEncoder().encode('a.txt'), ['a.txt'], tricky, new String('a.txt'), 42, null,
                   undefined, Symbol('a.txt'), {path: 'a.txt'}];
    const fns = ['readFile', 'writeFile', 'appendFile', 'readdir', 'stat', 'exists', 'mkdir', 'remove'];
    const results = new Set();
    let calls = 0;
    for (const f of fns) for (const p of paths) {
      calls++;
      try { fs[f](p, 'x'); results.add('returned'); }
      catch (e) { results.add(e instanceof TypeError && e.constructor === TypeError ? 'TypeError' : 'other ' + e); }
    }
    for (const p of paths) for (const args of [[p, 'b.txt'], ['a.txt', p]]) {
      calls++;
      try { fs.rename(...args); results.add('returned'); }
      catch (e) { results.add(e instanceof TypeError ? 'TypeError' : 'other ' + e); }
    }
    let message;
    try { fs.readFile(new Uint8Array(1)); } catch (e) { message = e.message; }
    return [[...results], conversions, calls, message];
  )JS");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json,
            R"([["TypeError"],0,90,"openhuman.fs.readFile: path must be a string, got Uint8Array"])");
  expect_untouched();
  expect_next_invocation_works();
}

TEST_F(FsSecurityTest, HostileArgumentsAgainstEveryFunction) {
  // Proxies with throwing or recursing traps, revoked proxies, throwing getters, conversions: in every
  // argument position of every function. Allowed: a TypeError/Error of the skill's realm (thrown or as
  // a rejection) or an ordinary result. Never a host crash, a non-Error, a foreign error or a call of
  // toString/valueOf/toPrimitive.
  const RunResult r = run(R"JS(
    let conversions = 0;
    const recurse = () => Object.getPrototypeOf(hostileProxy);
    const hostileProxy = new Proxy({}, {
      getPrototypeOf() { return recurse(); }, get() { throw new Error('get trap'); },
      getOwnPropertyDescriptor() { throw 1; }, has() { throw 1; }, ownKeys() { throw 1; },
    });
    const revocable = Proxy.revocable({}, {}); revocable.revoke();
    const converting = {
      toString() { conversions++; return 'a.txt'; }, valueOf() { conversions++; return 1; },
      [Symbol.toPrimitive]() { conversions++; return 'a.txt'; },
    };
    const throwingGetters = { get encoding() { throw 2; }, get recursive() { throw null; } };
    const sneakyGetters = { get encoding() { conversions -= 100; return 'binary'; },
                            get recursive() { return 'yes'; } };
    const hostile = [hostileProxy, revocable.proxy, converting, throwingGetters, sneakyGetters, Symbol('s'),
                     new Proxy(new Uint8Array(4), {}), new Proxy(function () {}, {}), new Int8Array(2),
                     new DataView(new ArrayBuffer(2)), [1, 2], () => 'a.txt'];
    const fns = ['readFile', 'writeFile', 'appendFile', 'readdir', 'stat', 'exists', 'mkdir', 'remove', 'rename'];
    const realm = [Error, TypeError, RangeError].map(C => C.prototype);
    const bad = [];
    let settled = 0, rejected = 0, thrown = 0;
    const check = (what, e) => {
      const proto = typeof e === 'object' && e !== null ? Object.getPrototypeOf(e) : null;
      if (!(e instanceof Error) || !realm.includes(proto)) bad.push(what + ': ' + String(e && e.name));
    };
    for (const f of fns) for (const h of hostile) for (let pos = 0; pos < 3; pos++) {
      const args = ['h.txt', 'data', {}]; args[pos] = h;
      const what = f + ' arg ' + pos;
      let p;
      try { p = fs[f](...args); } catch (e) { thrown++; check(what, e); continue; }
      try { await p; settled++; } catch (e) { rejected++; check(what, e); }
    }
    return JSON.stringify({bad, conversions, thrown: thrown > 0, rejected: rejected > 0, settled: settled > 0});
  )JS");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  // sneakyGetters.encoding is read once per readFile call that gets it as options (positions 1): -100.
  EXPECT_EQ(r.value_json,
            R"("{\"bad\":[],\"conversions\":-100,\"thrown\":true,\"rejected\":true,\"settled\":true}")");
  expect_untouched();
  expect_next_invocation_works();
}

TEST_F(FsSecurityTest, OptionsAreReadOnceAndStrictlyTyped) {
  expect_value(
      std::string(kSettle) + R"JS(
    let reads = 0;
    const opts = { get encoding() { reads++; return 'binary'; } };
    const bytes = await fs.readFile('a.txt', opts);
    const trapped = [];
    const proxy = new Proxy({recursive: true}, { get(t, k) { trapped.push(String(k)); return t[k]; } });
    await fs.mkdir('p/q', proxy);
    const errors = [];
    for (const call of [() => fs.readFile('a.txt', {encoding: 'latin1'}), () => fs.readFile('a.txt', 'utf8'),
                        () => fs.mkdir('r/s', {recursive: 1}), () => fs.remove('p', {recursive: 'yes'}),
                        () => fs.readFile('a.txt', {get encoding() { throw new RangeError('boom'); }})]) {
      try { call(); errors.push('no throw'); } catch (e) { errors.push(e.name + ': ' + e.message); }
    }
    return [reads, bytes instanceof Uint8Array, trapped, errors];
  )JS",
      R"([1,true,["recursive"],["TypeError: openhuman.fs.readFile: options.encoding must be one of \"utf8\", )"
      R"(\"binary\", got \"latin1\"","TypeError: openhuman.fs.readFile: options must be an object, got string",)"
      R"("TypeError: openhuman.fs.mkdir: options.recursive must be a boolean, got number",)"
      R"("TypeError: openhuman.fs.remove: options.recursive must be a boolean, got string",)"
      R"("TypeError: openhuman.fs.readFile: reading options.encoding threw an exception"]])");
}

TEST_F(FsSecurityTest, ALoopingGetterEndsAsALimitAndTheNextRunIsNormal) {
  const RunResult r = run("await fs.readFile('a.txt', { get encoding() { for (;;) {} } });");
  EXPECT_TRUE(r.outcome == Outcome::step_limit || r.outcome == Outcome::timeout) << describe(r);
  expect_untouched();
  expect_next_invocation_works();
}

TEST_F(FsSecurityTest, DataMustBeAStringOrAUint8Array) {
  expect_value(R"JS(
    let conversions = 0;
    const converting = { toString() { conversions++; return 'x'; } };
    const out = [];
    for (const d of [undefined, null, 42, converting, new Int8Array(1), new DataView(new ArrayBuffer(1)),
                     new ArrayBuffer(1), [1], new String('x'), new Proxy(new Uint8Array(1), {})]) {
      try { await fs.writeFile('d.txt', d); out.push('accepted'); } catch (e) { out.push(e.name); }
    }
    // A view's own bytes are written, not its whole buffer.
    await fs.writeFile('view.txt', new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]).subarray(2, 5));
    return [conversions, [...new Set(out)], Array.from(await fs.readFile('view.txt', {encoding: 'binary'}))];
  )JS",
               R"([0,["TypeError"],[3,4,5]])");
  EXPECT_FALSE(fs::exists(ws() / "d.txt"));
}

TEST_F(FsSecurityTest, OverlongPathsAreRefusedWithoutBeingCopied) {
  std::string a_prefix;
  for (int i = 0; i < 100; ++i) a_prefix += "a/";
  expect_value(
      std::string(kSettle) + R"JS(
    return [await settle(() => fs.readFile('a/'.repeat(3000))),
            await settle(() => fs.rename('a.txt', 'b'.repeat(5000)))];
  )JS",
      R"(["InvalidArgument EINVAL: readFile \")" + a_prefix +
          R"(...\": path is 6000 bytes long; the limit is 4096","InvalidArgument EINVAL: rename \")" +
          std::string(200, 'b') + R"(...\": path is 5000 bytes long; the limit is 4096"])");
}

// ---- concurrency and the example skill ----------------------------------------------------------------

TEST_F(FsBindingTest, ConcurrentInvocationsWritingTheSameFileNeverTearIt) {
  const std::string a(40000, 'a');
  const std::string b(30001, 'b');
  auto writer = [&](char c, int size) {
    return "for (let i = 0; i < 25; i++) await fs.writeFile('shared.txt', '" + std::string(1, c) +
           "'.repeat(" + std::to_string(size) + "));";
  };
  std::thread t1([&] { EXPECT_EQ(run(writer('a', 40000)).outcome, Outcome::ok); });
  std::thread t2([&] { EXPECT_EQ(run(writer('b', 30001)).outcome, Outcome::ok); });
  const RunResult r = run(R"JS(
    const seen = new Set();
    for (let i = 0; i < 200; i++) {
      let t;
      try { t = await fs.readFile('shared.txt'); } catch (e) { seen.add(e.name); continue; }
      seen.add(t === 'a'.repeat(40000) ? 'a' : t === 'b'.repeat(30001) ? 'b' : 'torn ' + t.length);
    }
    return [...seen].filter(s => s.startsWith('torn'));
  )JS",
                          FsMode::read);
  t1.join();
  t2.join();
  EXPECT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, "[]");
  const std::string final_content = read_host(ws() / "shared.txt");
  EXPECT_TRUE(final_content == a || final_content == b);
}

TEST_F(FsBindingTest, NotesExampleKeepsNotesAcrossInvocations) {
  const fs::path example = fs::path(SKILLBOX_SOURCE_DIR) / "examples" / "skills" / "notes";
  std::ifstream in(example / "index.js");
  std::stringstream source;
  source << in.rdbuf();
  ASSERT_FALSE(source.str().empty());
  TempSkill skill({{"index.js", source.str()}});
  skill.manifest().id = "test-skill";                        // the id ws() names
  skill.manifest().permissions.fs.mode = FsMode::readwrite;  // as examples/skills/notes/skill.json grants
  auto call = [&](const std::string& input) { return testing::run(*runner_, skill, input); };

  RunResult r = call(R"({"add": "buy milk"})");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"({"added":1,"count":1,"notes":[{"id":1,"text":"buy milk"}],"historyBytes":8})");
  r = call(R"({"add": "call Ada"})");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  r = call("null");
  EXPECT_EQ(
      r.value_json,
      R"({"count":2,"notes":[{"id":1,"text":"buy milk"},{"id":2,"text":"call Ada"}],"historyBytes":16})");
  r = call(R"({"remove": 1})");
  EXPECT_EQ(r.value_json, R"({"count":1,"notes":[{"id":2,"text":"call Ada"}],"historyBytes":26})");
  EXPECT_EQ(read_host(ws() / "notes" / "0002.txt"), "call Ada");
  EXPECT_EQ(read_host(ws() / "history.log"), "added 1\nadded 2\nremoved 1\n");
  r = call(R"({"remove": 7})");
  EXPECT_EQ(r.outcome, Outcome::error);
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->message, "there is no note 7");
}

}  // namespace
}  // namespace skillbox
