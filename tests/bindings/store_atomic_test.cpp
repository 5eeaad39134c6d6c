// `store.increment` and `store.compareAndSet` from real skills, in the suite's isolation mode (the suite
// runs once in-process and once with SKILLBOX_TEST_ISOLATION=process): many invocations at once lose no
// update, arguments are checked as documented (docs/store.md "Concurrency"), quotas apply.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "capabilities/store/store_test_util.h"
#include "skill_fixture.h"
#include "skillbox/skillbox.h"

namespace skillbox {
namespace {

using testing::describe;
using testing::TempSkill;

class StoreAtomics : public ::testing::Test {
 protected:
  StoreAtomics() : skill_({}) {
    options_.data_dir = data_.path();
    skill_.manifest().id = "counter";
  }

  /// Runs `body` (an async function body with `input`) as the skill's default export, once.
  RunResult run(const std::string& body, StorePolicy policy = {}) {
    skill_.write("index.js", "export default async function (input) {\n" + body + "\n}");
    skill_.manifest().permissions.store = policy;
    testing::TestRunner runner(options_);
    return testing::run(runner, skill_, "null");
  }
  std::string ok(const std::string& body, StorePolicy policy = {}) {
    const RunResult r = run(body, policy);
    EXPECT_EQ(r.outcome, Outcome::ok) << describe(r);
    return r.value_json;
  }

  /// 8 threads each run `body` 50 times as separate invocations on one runner; the number of runs that
  /// did not end ok.
  int hammer(const std::string& body) {
    skill_.write("index.js", "export default async function (input) {\n" + body + "\n}");
    testing::TestRunner runner(options_);
    std::atomic<int> failed{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < 50; ++i) {
          const RunResult r = testing::run(runner, skill_, "null");
          if (r.outcome != Outcome::ok) {
            if (failed.fetch_add(1) == 0) ADD_FAILURE() << describe(r);
          }
        }
      });
    }
    for (auto& t : threads) t.join();
    return failed.load();
  }

  testing::TempDir data_;
  HostOptions options_;
  TempSkill skill_;
};

TEST_F(StoreAtomics, EightThreadsOfFiftyIncrementsEndAtExactly400) {
  EXPECT_EQ(hammer("store.increment('visits')"), 0);
  EXPECT_EQ(ok("return store.get('visits')"), "400");
}

TEST_F(StoreAtomics, EightThreadsOfFiftyCompareAndSetLoopsEndAtExactly400) {
  EXPECT_EQ(hammer("for (;;) {"
                   "  const n = store.get('visits');"
                   "  if (store.compareAndSet('visits', n, (n ?? 0) + 1)) return;"
                   "}"),
            0);
  EXPECT_EQ(ok("return store.get('visits')"), "400");
}

TEST_F(StoreAtomics, IncrementReturnsTheNewValue) {
  EXPECT_EQ(
      ok("return [store.increment('n'), store.increment('n', 41), store.increment('n', -50),"
         " store.increment('f', 0.1), store.increment('f', 0.2), store.get('f'), store.increment('z', -0),"
         " Object.is(store.get('z'), 0), store.increment('big', 2 ** 53), store.increment('big', 1)]"),
      "[1,42,-8,0.1,0.30000000000000004,0.30000000000000004,0,true,9007199254740992,9007199254740992]");
}

TEST_F(StoreAtomics, IncrementChecksItsArguments) {
  const std::string result = ok(
      "const tried = (f) => { try { return 'returned ' + f() } catch (e) { return e.name + ': ' + e.message "
      "} };"
      "store.set('s', 'text');"
      "return [tried(() => store.increment('n', '1')), tried(() => store.increment('n', NaN)),"
      " tried(() => store.increment('n', Infinity)), tried(() => store.increment('n', -Infinity)),"
      " tried(() => store.increment('n', {valueOf() { return 1 }})), tried(() => store.increment('n', 1n)),"
      " tried(() => store.increment('n', null)), tried(() => store.increment()),"
      " tried(() => store.increment('s')), tried(() => store.increment('')),"
      " tried(() => store.increment('n', undefined)), store.get('s')]");
  EXPECT_EQ(
      result,
      R"(["TypeError: store.increment: delta must be a number, got string",)"
      R"("RangeError: store.increment: delta must be a finite number",)"
      R"("RangeError: store.increment: delta must be a finite number",)"
      R"("RangeError: store.increment: delta must be a finite number",)"
      R"("TypeError: store.increment: delta must be a number, got object",)"
      R"("TypeError: store.increment: delta must be a number, got bigint",)"
      R"("TypeError: store.increment: delta must be a number, got null",)"
      R"("TypeError: store.increment: 1 argument required, but only 0 present",)"
      R"("InvalidArgument: store.increment: key \"s\" holds a string, not a number; nothing was changed",)"
      R"("InvalidArgument: store key is empty; use a non-empty string",)"
      R"("returned 1","text"])");
}

TEST_F(StoreAtomics, IncrementOverflowAndQuotaChangeNothing) {
  StorePolicy policy;
  policy.max_keys = 1;
  EXPECT_EQ(
      ok("store.increment('a', Number.MAX_VALUE);"
         "const tried = (f) => { try { return f() } catch (e) { return e.name } };"
         "return [tried(() => store.increment('a', Number.MAX_VALUE)), tried(() => store.increment('b')),"
         " store.get('a') === Number.MAX_VALUE, store.keys()]",
         policy),
      R"(["InvalidArgument","QuotaExceeded",true,["a"]])");
}

TEST_F(StoreAtomics, CompareAndSetSemantics) {
  EXPECT_EQ(ok("return [store.compareAndSet('k', undefined, {a: 1, b: [2]}),"  // missing: sets
               " store.compareAndSet('k', undefined, 0),"                      // exists now
               " store.compareAndSet('k', {b: [2], a: 1}, 'next'),"            // member order does not count
               " store.get('k'),"
               " store.compareAndSet('k', 'other', 1),"
               " store.compareAndSet('k', 'next', undefined),"  // deletes
               " store.get('k') === undefined,"
               " store.compareAndSet('k', null, 1),"                 // null is not absence
               " store.compareAndSet('k', undefined, undefined)]"),  // absent, stays absent
            R"([true,false,true,"next",false,true,true,false,true])");
  EXPECT_EQ(ok("const tried = (f) => { try { return f() } catch (e) { return e.name + ': ' + e.message } };"
               "return [tried(() => store.compareAndSet('k', 1)), tried(() => store.compareAndSet('k', () => "
               "1, 1)),"
               " tried(() => store.compareAndSet('k', undefined, 10n)), store.keys()]"),
            R"(["TypeError: store.compareAndSet: 3 arguments required, but only 2 present",)"
            R"("TypeError: store.compareAndSet: expected must be a value JSON can represent, got function",)"
            R"js("TypeError: store.compareAndSet: value cannot be stored as JSON (see the cause)",[]])js");
  StorePolicy policy;
  policy.max_keys = 1;
  EXPECT_EQ(ok("store.set('a', 1); try { store.compareAndSet('b', undefined, 1) } catch (e) {"
               " return [e.name, store.compareAndSet('a', 1, 2), store.get('a')] }",
               policy),
            R"(["QuotaExceeded",true,2])");
}

TEST_F(StoreAtomics, OpenhumanStoreHasThemToo) {
  EXPECT_EQ(ok("return [typeof store.increment, typeof openhuman.store.compareAndSet]"),
            R"(["function","function"])");
}

}  // namespace
}  // namespace skillbox
