// openhuman.http from JavaScript: real skills run by the in-process runner against the loopback test
// servers (tests/support/http_test_server.h), so every test goes through the binding, the engine's
// bridge and event loop, the bus and the http capability.
#include "bindings/http.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "http_js_fixture.h"
#include "skill_fixture.h"
#include "support/http_test_server.h"

namespace skillbox::bindings {
namespace {

using json = nlohmann::json;
using skillbox::testing::loopback;

class HttpBindingTest : public skillbox::testing::HttpJsTest {};

TEST_F(HttpBindingTest, GetResolvesToAPlainJsonSerializableObject) {
  const RunResult r = run_js(R"JS(
    const res = await openhuman.http.get(BASE + '/plain');
    return {res, plain: Object.getPrototypeOf(res) === Object.prototype,
            keys: Object.keys(res), headersPlain: Object.getPrototypeOf(res.headers) === Object.prototype,
            roundTrip: JSON.stringify(JSON.parse(JSON.stringify(res))) === JSON.stringify(res)};
  )JS",
                             loopback(server));
  const json v = value_of(r);
  EXPECT_EQ(v["res"]["status"], 200);
  EXPECT_EQ(v["res"]["statusText"], "OK");
  EXPECT_EQ(v["res"]["body"], "hello from the test server");
  EXPECT_EQ(v["res"]["url"], server.url("/plain"));
  EXPECT_EQ(v["res"]["headers"]["content-type"], "text/plain");
  EXPECT_EQ(v["res"]["headers"]["content-length"], "26");
  EXPECT_EQ(v["keys"], json({"status", "statusText", "headers", "body", "url"}));
  EXPECT_EQ(v["plain"], true);
  EXPECT_EQ(v["headersPlain"], true);
  EXPECT_EQ(v["roundTrip"], true);
  EXPECT_EQ(r.usage.http_bytes_in, 26u);
}

TEST_F(HttpBindingTest, HeadersAreLowerCasedAndRepeatedOnesJoined) {
  const json v =
      value_of(run_js("return (await openhuman.http.get(BASE + '/headers')).headers;", loopback(server)));
  EXPECT_EQ(v["x-one"], "1");
  EXPECT_EQ(v["x-multi"], "a, b");
  EXPECT_EQ(v["x-mixed-case"], "Yes");
  EXPECT_EQ(v["set-cookie"], "a=1; Path=/");
}

TEST_F(HttpBindingTest, ResponseTypesGiveTextBytesOrParsedJson) {
  const json v = value_of(run_js(R"JS(
    const text = await openhuman.http.get(BASE + '/json');
    const parsed = await openhuman.http.get(BASE + '/json', {responseType: 'json'});
    const bin = await openhuman.http.request({url: BASE + '/binary', responseType: 'binary'});
    const utf8 = await openhuman.http.get(BASE + '/text?body=%EF%BB%BFcaf%C3%A9%FF');
    return {text: text.body, parsed: parsed.body, isU8: bin.body instanceof Uint8Array,
            len: bin.body.length, sum: bin.body.reduce((a, b) => a + b, 0), last: bin.body[255],
            utf8: utf8.body};
  )JS",
                                 loopback(server)));
  EXPECT_EQ(v["text"], R"({"ok":true,"n":42,"s":"caf\u00e9"})");
  EXPECT_EQ(v["parsed"], json({{"ok", true}, {"n", 42}, {"s", "caf\xc3\xa9"}}));
  EXPECT_EQ(v["isU8"], true);
  EXPECT_EQ(v["len"], 256);
  EXPECT_EQ(v["sum"], 255 * 256 / 2);
  EXPECT_EQ(v["last"], 255);
  // Text is UTF-8 decoded as fetch does: BOM dropped, invalid bytes become U+FFFD.
  EXPECT_EQ(v["utf8"], "caf\xc3\xa9\xef\xbf\xbd");
}

TEST_F(HttpBindingTest, InvalidJsonRejectsWithASyntaxErrorNamingTheUrl) {
  const json v = value_of(run_js(R"JS(
    try { await openhuman.http.get(BASE + '/plain', {responseType: 'json'}); return 'resolved'; }
    catch (e) { return [e instanceof SyntaxError, e.name, e.message]; }
  )JS",
                                 loopback(server)));
  EXPECT_EQ(v[0], true);
  EXPECT_EQ(v[1], "SyntaxError");
  EXPECT_EQ(v[2].get<std::string>().rfind("openhuman.http: the response from " + server.url("/plain") +
                                              " (HTTP 200 OK) is not valid JSON (responseType 'json'): ",
                                          0),
            0u)
      << v[2];

  // An error page: the status is in the message, so the skill's author sees why there was no JSON.
  const json page = value_of(run_js(R"JS(
    try { await openhuman.http.get(BASE + '/no-such-route', {responseType: 'json'}); return 'resolved'; }
    catch (e) { return e.message; }
  )JS",
                                    loopback(server)));
  EXPECT_NE(
      page.get<std::string>().find(server.url("/no-such-route") + " (HTTP 404 Not Found) is not valid JSON"),
      std::string::npos)
      << page;
}

// As types/skillbox.d.ts says: an error status resolves, with responseType 'json' too when the body is JSON.
TEST_F(HttpBindingTest, ErrorStatusesResolveAndAJsonErrorBodyIsParsed) {
  const json v = value_of(run_js(R"JS(
    const r = await openhuman.http.get(BASE + '/status?code=404&type=application/json&body=%7B%22e%22%3A1%7D',
                                       {responseType: 'json'});
    const t = await openhuman.http.get(BASE + '/status?code=500');
    return [r.status, r.statusText, r.body, t.status, t.body];
  )JS",
                                 loopback(server)));
  EXPECT_EQ(v, json({404, "Custom Reason", {{"e", 1}}, 500, "status 500"}));
}

TEST_F(HttpBindingTest, SecurityDeeplyNestedJsonIsACatchableError) {
  // JSON.parse('['.repeat(1e5) + ...) of docs/security.md, arriving over the network.
  const json v = value_of(run_js(R"JS(
    try { await openhuman.http.get(BASE + '/deep?n=100000', {responseType: 'json'}); return 'parsed'; }
    catch (e) { return [e instanceof Error, e.name]; }
  )JS",
                                 loopback(server)));
  EXPECT_EQ(v[0], true) << v;
  // The next invocation behaves normally.
  EXPECT_EQ(
      value_of(run_js("return (await openhuman.http.get(BASE + '/deep?n=3', {responseType: 'json'})).body;",
                      loopback(server))),
      json::parse("[[[]]]"));
}

TEST_F(HttpBindingTest, PostAndRequestSendBodiesAndHeaders) {
  const RunResult r = run_js(R"JS(
    const echo = async (p) => JSON.parse((await p).body);
    const a = await echo(openhuman.http.post(BASE + '/echo', 'h\u00e9llo'));
    const b = await echo(openhuman.http.post(BASE + '/echo', new Uint8Array([1, 2, 3]), {headers: {'X-Bin': 'yes'}}));
    const c = await echo(openhuman.http.request({method: 'put', url: BASE + '/echo', body: '{"a":1}',
                                                 headers: {'Content-Type': 'application/json'}, timeoutMs: 5000}));
    const d = await echo(openhuman.http.post(BASE + '/echo'));
    const h = (x, n) => (x.headers.find(p => p[0] === n) || [])[1];
    return [[a.method, a.body, h(a, 'Content-Type')], [b.method, b.body.length, h(b, 'Content-Type'), h(b, 'X-Bin')],
            [c.method, c.body, h(c, 'Content-Type')], [d.method, d.body, h(d, 'Content-Length')]];
  )JS",
                             loopback(server));
  const json v = value_of(r);
  EXPECT_EQ(v[0], json({"POST", "h\xc3\xa9llo", "text/plain;charset=UTF-8"}));
  EXPECT_EQ(v[1], json({"POST", 3, nullptr, "yes"}));
  EXPECT_EQ(v[2], json({"PUT", "{\"a\":1}", "application/json"}));
  EXPECT_EQ(v[3], json({"POST", "", "0"}));
  EXPECT_EQ(r.usage.http_bytes_out, 6u + 3u + 7u);
}

TEST_F(HttpBindingTest, HttpErrorStatusesResolve) {
  const json v = value_of(
      run_js("const r = await openhuman.http.get(BASE + '/status?code=503'); return [r.status, r.body];",
             loopback(server)));
  EXPECT_EQ(v, json({503, "status 503"}));
}

TEST_F(HttpBindingTest, FailuresRejectWithHostErrorsOfTheSkillsRealm) {
  HttpPolicy p = loopback(server);
  p.max_response_bytes = 100;
  p.max_redirects = 1;
  const json v = value_of(run_js(R"JS(
    const outcome = async (p) => {
      try { await p; return 'resolved'; }
      catch (e) { return [e instanceof Error, Object.getPrototypeOf(e) === Error.prototype, e.name, e.code, e.message]; }
    };
    return [
      await outcome(openhuman.http.get('https://elsewhere.example/')),
      await outcome(openhuman.http.get(BASE + '/hang', {timeoutMs: 200})),
      await outcome(openhuman.http.get(BASE + '/bytes?n=101&chunked=1')),
      await outcome(openhuman.http.get(BASE + '/chain?n=2')),
      await outcome(openhuman.http.get('file:///etc/passwd')),
      await outcome(openhuman.http.request({method: 'PATCH', url: BASE + '/echo', body: 'x'})),
      await outcome(openhuman.http.get(BASE + '/plain', {headers: {'X-A': 'a\r\nHost: evil'}})),
    ];
  )JS",
                                 p));
  ASSERT_EQ(v.size(), 7u) << v;
  EXPECT_EQ(v[0], json({true, true, "PermissionDenied", "EACCES",
                        "http: https://elsewhere.example/ is not in permissions.http.allow"}));
  EXPECT_EQ(v[1],
            json({true, true, "Timeout", "ETIMEDOUT",
                  "http: request timed out after 200 ms (timeoutMs, at most permissions.http.timeout_ms)"}));
  EXPECT_EQ(v[2][2], "PayloadTooLarge");
  EXPECT_EQ(v[2][3], "E2BIG");
  EXPECT_EQ(v[3], json({true, true, "NetworkError", "ENET",
                        "http: too many redirects (permissions.http.max_redirects is 1)"}));
  EXPECT_EQ(v[4][2], "PermissionDenied");
  EXPECT_EQ(v[5], json({true, true, "PermissionDenied", "EACCES",
                        "http: method PATCH is not in permissions.http.methods"}));
  EXPECT_EQ(v[6][2], "InvalidArgument");
}

TEST_F(HttpBindingTest, SecurityNetworkCasesFromJavaScript) {
  HttpPolicy p = loopback(server);
  const std::string port = std::to_string(server.port());
  p.allow = {"http://127.0.0.1:" + port + "/", "http://169.254.169.254/"};
  p.allow_private_addresses = false;
  const RunResult r = run_js(R"JS(
    const port = BASE.split(':')[2];
    const names = async (urls) => Promise.all(urls.map(u => openhuman.http.get(u).then(() => 'resolved', e => e.name)));
    return await names([
      'http://allowed.example\\@evil.example/', 'http://allowed.example@evil.example/',
      'http://evil.example#@allowed.example/', 'http://allowed.example.evil.example/',
      'http://' + '@'.repeat(100000) + 'allowed.example/',
      `http://2130706433:${port}/`, `http://0x7f000001:${port}/`, `http://0177.0.0.1:${port}/`,
      `http://127.1:${port}/`, `http://0:${port}/`, `http://[::ffff:127.0.0.1]:${port}/`,
      'http://169.254.169.254/latest/meta-data/',
      ` ${BASE}/plain`, `\t${BASE}/plain`, `${BASE}/pl\r\nain`, `${BASE}/plain\0`,
      'file:///etc/passwd', 'gopher://127.0.0.1:70/', 'ftp://127.0.0.1/',
    ]);
  )JS",
                             p);
  const json v = value_of(r);
  const json expected = {"InvalidArgument",  "PermissionDenied", "PermissionDenied", "PermissionDenied",
                         "InvalidArgument",  "PermissionDenied", "PermissionDenied", "PermissionDenied",
                         "PermissionDenied", "PermissionDenied", "PermissionDenied", "PermissionDenied",
                         "InvalidArgument",  "InvalidArgument",  "InvalidArgument",  "InvalidArgument",
                         "PermissionDenied", "PermissionDenied", "PermissionDenied"};
  EXPECT_EQ(v, expected);
  // Nothing reached the server, and the next invocation works.
  EXPECT_EQ(value_of(run_js("return (await openhuman.http.get(BASE + '/plain')).body;", loopback(server))),
            "hello from the test server");
  EXPECT_EQ(server.connections(), 1u);
}

TEST_F(HttpBindingTest, SecurityHostileArgumentsBecomeRealmErrorsAndNothingIsSent) {
  const json v = value_of(run_js(R"JS(
    let conversions = 0, trapped = 0;
    const converting = {toString() { conversions++; return BASE + '/plain'; }, valueOf() { conversions++; return 1; },
                        [Symbol.toPrimitive]() { conversions++; return BASE + '/plain'; }};
    const recurse = () => Object.getPrototypeOf(hostile);
    const hostile = new Proxy({}, {getPrototypeOf() { return recurse(); }, get() { trapped++; throw new Error('trap'); },
                                   ownKeys() { throw new Error('keys'); }, getOwnPropertyDescriptor() { throw 1; }});
    const revoked = Proxy.revocable({}, {}); revoked.revoke();
    const values = [hostile, revoked.proxy, converting, Symbol('s'), 42, null, undefined, [BASE + '/plain'],
                    new Uint8Array(4), () => BASE, new Proxy(function () {}, {})];
    const realm = [Error, TypeError, RangeError, SyntaxError, InternalError].map(C => C.prototype);
    const bad = [];
    const check = (label, f) => {
      let p;
      try { p = f(); } catch (e) {
        if (!(e instanceof Error) || !realm.includes(Object.getPrototypeOf(e))) bad.push(label + ': ' + String(e));
        return;
      }
      if (!(p instanceof Promise)) bad.push(label + ': not a promise');
      return p.then(() => bad.push(label + ': resolved'), e => {
        if (!(e instanceof Error)) bad.push(label + ': rejected with a non-Error');
      });
    };
    const pending = [];
    values.forEach((h, i) => {
      pending.push(check('get url ' + i, () => openhuman.http.get(h)));
      pending.push(check('get opts ' + i, () => openhuman.http.get('x:', h)));
      pending.push(check('post body ' + i, () => openhuman.http.post(BASE + '/echo', h, {timeoutMs: 0})));
      pending.push(check('request ' + i, () => openhuman.http.request(h)));
      pending.push(check('request url ' + i, () => openhuman.http.request({url: h})));
      pending.push(check('request method ' + i, () => openhuman.http.request({url: 'x:', method: h})));
      pending.push(check('request headers ' + i, () => openhuman.http.request({url: 'x:', headers: h})));
      pending.push(check('header value ' + i, () => openhuman.http.get('x:', {headers: {a: h}})));
      pending.push(check('timeoutMs ' + i, () => openhuman.http.get('x:', {timeoutMs: h})));
      pending.push(check('responseType ' + i, () => openhuman.http.get('x:', {responseType: h})));
    });
    for (const t of [-1, 0, 1.5, NaN, Infinity, 2 ** 53, '100'])
      pending.push(check('timeoutMs ' + String(t), () => openhuman.http.get(BASE + '/plain', {timeoutMs: t})));
    pending.push(check('responseType xml', () => openhuman.http.get(BASE + '/plain', {responseType: 'xml'})));
    pending.push(check('lone surrogate', () => openhuman.http.get(BASE + '/\uD800')));
    pending.push(check('no args', () => openhuman.http.get()));
    pending.push(check('request no url', () => openhuman.http.request({})));
    await Promise.all(pending);
    // Options are read once each, in order, and a getter's exception surfaces as a TypeError cause.
    const reads = [];
    const opts = {get headers() { reads.push('headers'); return {}; }, get responseType() { reads.push('responseType'); return 'text'; },
                  get timeoutMs() { reads.push('timeoutMs'); return 1000; }};
    const ok = await openhuman.http.get(BASE + '/plain', opts);
    let cause;
    try { openhuman.http.get(BASE + '/plain', {get headers() { throw new RangeError('mine'); }}); }
    catch (e) { cause = [e.name, e.cause instanceof RangeError]; }
    return {bad, conversions, reads, status: ok.status, cause};
  )JS",
                                 loopback(server)));
  EXPECT_EQ(v["bad"], json::array());
  EXPECT_EQ(v["conversions"], 0);
  EXPECT_EQ(v["reads"], json({"headers", "responseType", "timeoutMs"}));
  EXPECT_EQ(v["status"], 200);
  EXPECT_EQ(v["cause"], json({"TypeError", true}));
  EXPECT_EQ(server.requests(), 1u);  // only the one well-formed request
}

TEST_F(HttpBindingTest, RequestsOverlapWhileTheEventLoopRuns) {
  HttpPolicy p = loopback(server);
  p.max_concurrent = 4;
  const json v = value_of(run_js(R"JS(
    const bodies = await Promise.all([1, 2, 3, 4].map(() => openhuman.http.get(BASE + '/barrier?n=4')));
    return bodies.map(b => b.body);
  )JS",
                                 p));
  EXPECT_EQ(v, json({"met 4", "met 4", "met 4", "met 4"}));
  EXPECT_EQ(server.peak_in_flight(), 4u);
}

TEST_F(HttpBindingTest, PendingRequestsAreCancelledWhenTheRunEnds) {
  // The second request completes only once the first is held by the server (a barrier of two), so
  // the first is certainly in flight when the run ends.
  const std::string start_hanging =
      "openhuman.http.get(BASE + '/barrier?n=2&then=hang');\n"
      "await openhuman.http.get(BASE + '/barrier?n=2');\n";
  const RunResult r = run_js(start_hanging + "return 'done';", loopback(server));
  EXPECT_EQ(r.outcome, Outcome::ok) << skillbox::testing::describe(r);
  EXPECT_EQ(r.value_json, "\"done\"");
  EXPECT_TRUE(server.wait_until([&] { return server.client_closes() == 1; }))
      << "the connection must be closed";
  // Still awaited when the deadline passes: the run ends as timeout and the connection is closed too.
  const RunResult t = run_js(start_hanging + "await new Promise(() => {});", loopback(server), 5000);
  EXPECT_EQ(t.outcome, Outcome::timeout) << skillbox::testing::describe(t);
  EXPECT_TRUE(server.wait_until([&] { return server.client_closes() == 2; }));
}

}  // namespace
}  // namespace skillbox::bindings
