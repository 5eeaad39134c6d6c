// The owners of QuickJS values, strings, atoms and property lists, and the rule they exist for: the host
// API leaks nothing. A leaked JSValue is invisible in a release build (only a debug QuickJS asserts in
// JS_FreeRuntime), so these tests count what the runtime holds instead.
#include "bindings/owners.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include "bindings/bridge.h"
#include "bindings/install.h"
#include "bus/messages.h"

namespace skillbox::bindings {
namespace {

struct Counts {
  int64_t objects = 0;      // objects on the GC list
  int64_t allocations = 0;  // live allocations of the runtime (strings, atoms, shapes, objects, ...)
  int64_t atoms = 0;
  bool operator==(const Counts&) const = default;
};

void PrintTo(const Counts& c, std::ostream* os) {
  *os << "{objects " << c.objects << ", allocations " << c.allocations << ", atoms " << c.atoms << "}";
}

// A global script's completion value.
Value eval(JSContext* ctx, std::string_view source) {
  const std::string code(source);
  return {ctx, JS_Eval(ctx, code.c_str(), code.size(), "<test>", JS_EVAL_TYPE_GLOBAL)};
}

// What `rt` holds once every unreachable cycle is collected.
Counts counts(JSRuntime* rt) {
  JS_RunGC(rt);
  JSMemoryUsage usage;
  JS_ComputeMemoryUsage(rt, &usage);
  return {usage.obj_count, usage.malloc_count, usage.atom_count};
}

// ---- the owners -----------------------------------------------------------------------------------

class Owners : public ::testing::Test {
 protected:
  Owners() : rt_(JS_NewRuntime()), ctx_(JS_NewContext(rt_)) {}
  ~Owners() override {
    JS_FreeContext(ctx_);
    JS_FreeRuntime(rt_);
  }
  Counts now() { return counts(rt_); }

  JSRuntime* rt_;
  JSContext* ctx_;
};

TEST_F(Owners, ValueFreesWhatItOwnsExactlyOnce) {
  const Counts before = now();
  {
    Value a(ctx_, JS_NewObject(ctx_));
    EXPECT_EQ(now().objects, before.objects + 1);
    Value b = std::move(a);  // one owner at a time
    EXPECT_TRUE(a.is_undefined());
    Value c = Value::dup(ctx_, b.get());
    b = Value(ctx_, JS_NewArray(ctx_));  // assigning over frees the old value (still held by c)
    EXPECT_EQ(now().objects, before.objects + 2);
  }
  EXPECT_EQ(now(), before);
}

TEST_F(Owners, ReleaseHandsOwnershipToTheCaller) {
  const Counts before = now();
  Value v(ctx_, JS_NewObject(ctx_));
  JSValue raw = v.release();
  EXPECT_TRUE(v.is_undefined());
  v.reset();  // owns nothing now: the object survives
  EXPECT_EQ(now().objects, before.objects + 1);
  {
    const Value global(ctx_, JS_GetGlobalObject(ctx_));
    JS_SetPropertyStr(ctx_, global.get(), "kept", raw);  // the consuming call takes the released reference
    const Atom kept(ctx_, "kept");
    JS_DeleteProperty(ctx_, global.get(), kept.get(), 0);
  }
  EXPECT_EQ(now().objects, before.objects);
}

TEST_F(Owners, DupGivesAConsumingCallItsOwnReference) {
  const Counts before = now();
  {
    const Value v(ctx_, JS_NewObject(ctx_));
    const Value holder(ctx_, JS_NewArray(ctx_));
    ASSERT_EQ(JS_SetPropertyUint32(ctx_, holder.get(), 0, v.dup()), 1);
  }
  EXPECT_EQ(now(), before);
}

TEST_F(Owners, RuntimeValueFreesThroughTheRuntime) {
  const Counts before = now();
  {
    RuntimeValue held(Value(ctx_, JS_NewObject(ctx_)));
    EXPECT_TRUE(JS_IsObject(held.get()));
    RuntimeValue moved = std::move(held);
    EXPECT_TRUE(JS_IsUndefined(held.get()));
    EXPECT_EQ(now().objects, before.objects + 1);
  }
  EXPECT_EQ(now(), before);
}

TEST_F(Owners, CStringHoldsTheBytesUntilDestroyed) {
  const Counts before = now();
  {
    const Value s(ctx_, JS_NewString(ctx_, "h\xC3\xA9llo"));
    CString text(ctx_, s.get());
    ASSERT_TRUE(text.ok());
    EXPECT_EQ(text.view(), "h\xC3\xA9llo");
    CString moved = std::move(text);
    EXPECT_FALSE(text.ok());
    EXPECT_EQ(moved.size(), 6u);
  }
  EXPECT_EQ(now(), before);
  {
    const Value thrower = eval(ctx_, "({ toString() { throw 1 } })");
    const CString text(ctx_, thrower.get());
    EXPECT_FALSE(text.ok());
    EXPECT_TRUE(text.view().empty());
    JS_FreeValue(ctx_, JS_GetException(ctx_));
  }
  EXPECT_EQ(now(), before);
}

TEST_F(Owners, AtomsAndPropertyListsAreFreed) {
  const Counts before = now();
  {
    const Value obj = eval(ctx_, "({ a_fresh_key: 1, another_fresh_key: 2, [Symbol('s')]: 3 })");
    ASSERT_TRUE(obj.is_object());
    const Atom atom(ctx_, "a_fresh_key");
    ASSERT_TRUE(atom.ok());
    EXPECT_EQ(JS_VALUE_GET_INT(property(ctx_, obj.get(), atom.get()).get()), 1);
    EXPECT_EQ(JS_VALUE_GET_INT(property(ctx_, obj.get(), "another_fresh_key").get()), 2);
    PropertyNames names;
    ASSERT_TRUE(names.list(ctx_, obj.get(), JS_GPN_STRING_MASK | JS_GPN_SYMBOL_MASK));
    EXPECT_EQ(names.size(), 3u);
    ASSERT_TRUE(names.list(ctx_, obj.get(), JS_GPN_STRING_MASK));  // listing again frees the first list
    EXPECT_EQ(names.size(), 2u);
    PropertyDescriptor desc;
    EXPECT_EQ(own_property(ctx_, obj.get(), atom.get(), desc), 1);
    EXPECT_EQ(JS_VALUE_GET_INT(desc.value.get()), 1);
    const Atom missing(ctx_, "missing");
    EXPECT_EQ(own_property(ctx_, obj.get(), missing.get(), desc), 0);
    const Atom key = Atom::of_value(ctx_, JS_NULL);  // ToPropertyKey(null) is "null"
    EXPECT_TRUE(key.ok());
  }
  EXPECT_EQ(now(), before);
}

TEST_F(Owners, AFailedListingIsEmpty) {
  const Value obj = eval(ctx_, "new Proxy({}, { ownKeys() { throw 1 } })");
  PropertyNames names;
  EXPECT_FALSE(names.list(ctx_, obj.get(), JS_GPN_STRING_MASK));
  EXPECT_EQ(names.size(), 0u);
  JS_FreeValue(ctx_, JS_GetException(ctx_));
}

// ---- the host API leaks nothing -------------------------------------------------------------------

// Answers every request at once, as the capabilities would: call_async settles its promise before it
// returns, through the binding's own reply decoder (so every decoder runs).
class AnsweringBridge final : public Bridge {
 public:
  size_t requests = 0;

  bus::Reply call(bus::Request request) override { return answer(request); }

  JSValue call_async(JSContext* ctx, bus::Request request, ReplyDecoder decode) override {
    bus::Reply reply = answer(request);
    JSValue funcs[2];
    Value promise(ctx, JS_NewPromiseCapability(ctx, funcs));
    if (promise.is_exception()) return JS_EXCEPTION;
    const Value resolve(ctx, funcs[0]);
    const Value reject(ctx, funcs[1]);
    Value settlement;
    bool fulfilled = false;
    if (const auto* error = std::get_if<bus::ErrorReply>(&reply)) {
      settlement = Value(ctx, make_host_error(ctx, *error));
    } else {
      settlement = Value(ctx, decode(ctx, reply));
      fulfilled = !settlement.is_exception();
      if (!fulfilled) settlement = Value(ctx, JS_GetException(ctx));
    }
    JSValueConst argv[] = {settlement.get()};
    const Value result(ctx, JS_Call(ctx, fulfilled ? resolve.get() : reject.get(), JS_UNDEFINED, 1, argv));
    return promise.release();
  }

 private:
  static bus::Bytes bytes(std::string_view s) { return {s.begin(), s.end()}; }

  bus::Reply answer(const bus::Request& request) {
    ++requests;
    return std::visit(
        [](const auto& r) -> bus::Reply {
          using T = std::decay_t<decltype(r)>;
          (void)r;
          if constexpr (std::is_same_v<T, bus::EnvGetRequest>) {
            return bus::OptionalStringReply{"granted"};
          } else if constexpr (std::is_same_v<T, bus::StoreGetRequest>) {
            return bus::OptionalStringReply{R"({"a":[1,2,{"b":"\u00e9"}]})"};
          } else if constexpr (std::is_same_v<T, bus::StoreDeleteRequest>) {
            return bus::BoolReply{true};
          } else if constexpr (std::is_same_v<T, bus::StoreKeysRequest>) {
            return bus::StringListReply{{"a", "b\xC3\xA9"}};
          } else if constexpr (std::is_same_v<T, bus::FsReadFileRequest>) {
            if (r.path == "missing") return bus::ErrorReply{bus::ErrorCode::NotFound, "no such file"};
            return bus::BytesReply{bytes("\xEF\xBB\xBFh\xC3\xA9llo \xFF")};
          } else if constexpr (std::is_same_v<T, bus::FsReaddirRequest>) {
            return bus::FsReaddirReply{
                {{"a.txt", bus::FsEntryType::file}, {"d", bus::FsEntryType::directory}}};
          } else if constexpr (std::is_same_v<T, bus::FsStatRequest>) {
            return bus::FsStatReply{bus::FsEntryType::file, 12, 1.5};
          } else if constexpr (std::is_same_v<T, bus::FsExistsRequest>) {
            return bus::BoolReply{true};
          } else if constexpr (std::is_same_v<T, bus::HttpRequest>) {
            bus::HttpResponseReply response;
            response.status = 200;
            response.status_text = "OK";
            response.headers = {{"content-type", "application/json"}, {"x-a", "1"}, {"x-a", "2"}};
            response.body = bytes(r.url.ends_with("/bad") ? "{not json" : R"({"x":[1,"\u00e9"]})");
            response.url = r.url;
            return response;
          } else {
            return bus::OkReply{};
          }
        },
        request);
  }
};

// Every host function, on its success paths and its error paths (hostile arguments, throwing getters
// and traps, refused replies, invalid JSON), with every kind of value the log formatter shows.
constexpr std::string_view kWorkload = R"JS(
const settled = [];
const note = (p) => p.then((v) => settled.push(v), (e) => settled.push(String(e)));
const attempt = (f) => { try { f(); } catch (e) { settled.push(String(e)); } };

log('fmt %s %d %i %f %j %o %O %c %% %x', 'a', 1.5, 2.5, 3.5, { a: 1 }, [1, 2], { b: { c: [1] } }, 'css');
console.info({ n: 1, s: 'x', big: 12n, sym: Symbol('s'), f: function named() {}, arrow: () => 1,
  d: new Date(0), e: new TypeError('t'), re: /x/g, ta: new Uint8Array([1, 2, 3]), f64: new Float64Array(2),
  ab: new ArrayBuffer(4), dv: new DataView(new ArrayBuffer(2)), m: new Map(), p: Promise.resolve(),
  deep: [[[[[[[[1]]]]]]]], neg: -0, nan: NaN, u: undefined, nul: null, holes: [1, , 3] });
const cycle = { list: [] }; cycle.self = cycle; cycle.list.push(cycle); console.warn(cycle);
console.error({ get bad() { throw new Error('getter') } }, { toJSON() { throw 1 } },
  { toJSON() { return this } }, { toJSON() { return { toJSON() { return 1 } } } },
  new Proxy({}, { ownKeys() { throw 2 } }), new Proxy([], { get() { throw 3 } }),
  Object.create(null), { [Symbol('k')]: 1, 'k\ud800': 2 }, new Error('plain'));
console.debug('lone \ud800', 'x'.repeat(20000), Symbol(), Symbol('\ud800'));
log('%s', { toString() { return 'never called' } }, '%d', 7n);

const te = new TextEncoder();
const td = new TextDecoder('UTF-8', { fatal: false, ignoreBOM: true });
td.decode(te.encode('h\u00e9llo \ud800 \ud83d\ude00'));
td.decode(new DataView(new ArrayBuffer(3)));
td.decode(new Uint8Array([0xE4, 0xB8]), { stream: true });
td.decode();
td.decode(new ArrayBuffer(2));
te.encodeInto('abc\ud83d\ude00', new Uint8Array(5));
te.encode(42);
attempt(() => new TextDecoder('latin1'));
attempt(() => new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array([0xFF])));
attempt(() => new TextDecoder('utf-8', { get fatal() { throw 4 } }));
attempt(() => TextEncoder.prototype.encode.call({}));
attempt(() => te.encodeInto('x', new Int8Array(1)));
class Sub extends TextDecoder {}
new Sub().decode(new Uint8Array([0x61]));
attempt(() => Reflect.construct(TextEncoder, [], new Proxy(function () {}, { get() { throw 5 } })));
Reflect.construct(TextDecoder, [], function () {}.bind());

atob(btoa('hello \u00ff'));
attempt(() => atob('*'));
attempt(() => btoa('\u0100'));

crypto.getRandomValues(new Uint32Array(4));
crypto.randomUUID();
attempt(() => crypto.getRandomValues(new Float32Array(1)));
attempt(() => crypto.getRandomValues(new Uint8Array(65537)));

env.get('NAME');
attempt(() => env.get(1));
attempt(() => env.get('\ud800'));
store.set('k', { a: [1, 2], s: 'x' });
store.get('k');
store.delete('k');
store.keys();
store.keys('p');
attempt(() => store.set('k', 1n));
attempt(() => store.set('k', () => 1));
attempt(() => store.set('k', { toJSON() { throw new Error('j') } }));
attempt(() => store.set('k'));

const fs = openhuman.fs;
note(fs.readFile('a.txt'));
note(fs.readFile('a.bin', { encoding: 'binary' }));
note(fs.writeFile('a.txt', 'text \ud800'));
note(fs.appendFile('a.txt', new Uint8Array(3)));
note(fs.readdir('.'));
note(fs.stat('a.txt'));
note(fs.exists('a.txt'));
note(fs.mkdir('d', { recursive: true }));
note(fs.remove('d'));
note(fs.rename('a', 'b'));
note(fs.readFile('missing'));
note(fs.readFile('x'.repeat(5000)));
note(fs.rename('a', 'y'.repeat(5000)));
attempt(() => fs.readFile(1));
attempt(() => fs.readFile('a', { encoding: 'latin1' }));
attempt(() => fs.mkdir('d', { get recursive() { throw 6 } }));
attempt(() => fs.writeFile('a', {}));

const http = openhuman.http;
note(http.get('https://x.example/', { headers: { 'X-A': '1', b: '2' }, responseType: 'json', timeoutMs: 1000 }));
note(http.get('https://x.example/bad', { responseType: 'json' }));
note(http.post('https://x.example/', 'body', { responseType: 'binary' }));
note(http.post('https://x.example/', new Uint8Array(2)));
note(http.request({ url: 'https://x.example/', method: 'PUT', body: 'b', headers: {} }));
attempt(() => http.request({}));
attempt(() => http.request(1));
attempt(() => http.request({ get body() { throw 7 } }));
attempt(() => http.get('u', { headers: { a: 1 } }));
attempt(() => http.get('u', { headers: new Proxy({}, { ownKeys() { throw 8 } }) }));
attempt(() => http.get('u', { headers: { get a() { throw 9 } } }));
attempt(() => http.get('u', { timeoutMs: 1.5 }));
attempt(() => http.get('u', { responseType: 'xml' }));
settled
)JS";

// Runs the workload `times` times in ctx, settling every promise; returns how many results it saw.
size_t run(JSContext* ctx, int times) {
  size_t results = 0;
  for (int i = 0; i < times; ++i) {
    const std::string code = "{" + std::string(kWorkload) + "}";
    const Value settled(ctx, JS_Eval(ctx, code.c_str(), code.size(), "<workload>", JS_EVAL_TYPE_GLOBAL));
    if (settled.is_exception()) {
      const Value e(ctx, JS_GetException(ctx));
      const CString text(ctx, e.get());
      ADD_FAILURE() << "the workload threw: " << (text.ok() ? text.data() : "?");
      return 0;
    }
    JSContext* job_ctx = nullptr;
    while (JS_ExecutePendingJob(JS_GetRuntime(ctx), &job_ctx) > 0) {
    }
    const Value length = property(ctx, settled.get(), "length");
    results = static_cast<size_t>(JS_VALUE_GET_INT(length.get()));
  }
  return results;
}

// A runtime with one installed context answering through `bridge`.
struct Installed {
  explicit Installed(Bridge& bridge) : rt(JS_NewRuntime()), ctx(JS_NewContext(rt)) {
    JS_SetContextOpaque(ctx, &bridge);
    installed = install_host_api(ctx);
  }
  ~Installed() {
    if (ctx != nullptr) JS_FreeContext(ctx);
    JS_FreeRuntime(rt);
  }
  Installed(const Installed&) = delete;
  Installed& operator=(const Installed&) = delete;
  // What the runtime still holds once the context is gone.
  Counts after_context() {
    JS_FreeContext(ctx);
    ctx = nullptr;
    return counts(rt);
  }

  JSRuntime* rt;
  JSContext* ctx;
  bool installed = false;
};

TEST(BindingsLeak, RepeatedCallsHoldNoMoreMemory) {
  AnsweringBridge bridge;
  Installed js(bridge);
  ASSERT_TRUE(js.installed);
  // Warm up: the first runs grow QuickJS's tables (shapes, atoms) to their working size.
  const size_t results = run(js.ctx, 5);
  EXPECT_EQ(results, 46u);  // every promise settled and every refusal was seen
  const Counts warm = counts(js.rt);
  EXPECT_EQ(run(js.ctx, 200), results);
  // One value, string or atom leaked per run would show as 200 more.
  EXPECT_EQ(counts(js.rt), warm);
  EXPECT_GT(bridge.requests, 200u * 20);
}

TEST(BindingsLeak, NothingOutlivesTheContext) {
  // The release-build form of the debug JS_FreeRuntime assertion (objects left on the GC list), made
  // stricter: once the context is freed, a runtime whose context ran the whole host API holds exactly
  // what one whose context ran nothing holds.
  AnsweringBridge bridge;
  Counts idle;
  {
    Installed js(bridge);
    ASSERT_TRUE(js.installed);
    idle = js.after_context();
  }
  Installed js(bridge);
  ASSERT_TRUE(js.installed);
  EXPECT_EQ(run(js.ctx, 3), 46u);
  const Counts left = js.after_context();
  EXPECT_EQ(left.objects, 0);
  EXPECT_EQ(left, idle);
}

}  // namespace
}  // namespace skillbox::bindings
