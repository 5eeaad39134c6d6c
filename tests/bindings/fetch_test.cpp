// The WHATWG fetch (bindings/fetch.cpp, bindings/fetch_glue.h) from JavaScript: real skills run by the
// suite's runner (in-process or worker) against the loopback test server, so every request goes
// through the glue, the http binding, the bus and the http capability.
#include "bindings/fetch.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "http_js_fixture.h"
#include "skill_fixture.h"
#include "support/http_test_server.h"

namespace skillbox::bindings {
namespace {

using json = nlohmann::json;
using skillbox::testing::HttpTestServer;

HttpPolicy with_fetch(const HttpTestServer& server) {
  HttpPolicy p = skillbox::testing::loopback(server);
  p.fetch = true;
  return p;
}

std::string header_of(const skillbox::testing::RecordedRequest& r, const std::string& name) {
  for (const auto& [n, v] : r.headers)
    if (n == name) return v;
  return "(absent)";
}

class FetchTest : public skillbox::testing::HttpJsTest {};

constexpr const char* kTypes =
    "return ['fetch', 'Headers', 'Request', 'Response', 'AbortController', 'AbortSignal', 'XMLHttpRequest']"
    ".map((n) => typeof globalThis[n]);";

TEST_F(FetchTest, AbsentByDefaultEvenWithNetworkAccess) {
  HttpPolicy p = with_fetch(server);
  p.fetch = false;
  EXPECT_EQ(value_of(run_js(kTypes, p)), json({"undefined", "undefined", "undefined", "undefined",
                                               "undefined", "undefined", "undefined"}));
}

TEST_F(FetchTest, PresentWhenTheManifestAsksButNoXmlHttpRequest) {
  EXPECT_EQ(value_of(run_js(kTypes, with_fetch(server))),
            json({"function", "function", "function", "function", "function", "function", "undefined"}));
}

TEST_F(FetchTest, GetResolvesWithAResponse) {
  const json v = value_of(run_js(R"JS(
    const res = await fetch(BASE + '/json', {headers: {'X-Test': 'yes'}});
    const before = res.bodyUsed;
    const body = await res.json();
    let again;
    try { await res.text(); again = 'read twice'; } catch (e) { again = e instanceof TypeError; }
    return {isResponse: res instanceof Response, tag: Object.prototype.toString.call(res),
            status: res.status, ok: res.ok, statusText: res.statusText, url: res.url,
            redirected: res.redirected, type: res.headers.get('Content-Type'), before, after: res.bodyUsed,
            body, again, headersImmutable: (() => { try { res.headers.set('x', '1'); return false; }
                                                   catch (e) { return e instanceof TypeError; } })()};
  )JS",
                                 with_fetch(server)));
  EXPECT_EQ(v["isResponse"], true);
  EXPECT_EQ(v["tag"], "[object Response]");
  EXPECT_EQ(v["status"], 200);
  EXPECT_EQ(v["ok"], true);
  EXPECT_EQ(v["statusText"], "OK");
  EXPECT_EQ(v["url"], server.url("/json"));
  EXPECT_EQ(v["redirected"], false);
  EXPECT_EQ(v["type"], "application/json");
  EXPECT_EQ(v["before"], false);
  EXPECT_EQ(v["after"], true);
  EXPECT_EQ(v["body"], json({{"ok", true}, {"n", 42}, {"s", "caf\xc3\xa9"}}));
  EXPECT_EQ(v["again"], true);
  EXPECT_EQ(v["headersImmutable"], true);
  const auto seen = server.recorded();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "GET");
  EXPECT_EQ(header_of(seen[0], "x-test"), "yes");
}

TEST_F(FetchTest, PostBodiesAndHeadersReachTheServerAsSent) {
  const json v = value_of(run_js(R"JS(
    const h = new Headers([['X-Multi', 'a']]);
    h.append('x-multi', 'b');
    const a = await fetch(BASE + '/echo', {method: 'post', headers: h, body: 'caf\u00e9'});
    const b = await fetch(new Request(BASE + '/echo', {method: 'PUT', body: new Uint8Array([1, 2, 127])}));
    const c = await fetch(BASE + '/echo', {method: 'POST', body: new Uint16Array([0x4241]).buffer,
                                           headers: {'content-type': 'application/x-test'}});
    const d = await fetch(BASE + '/echo', {method: 'POST', body: new DataView(new Uint8Array([0x43, 0x44, 0x45]).buffer, 1, 2)});
    return [(await a.json()).method, (await b.json()).method, (await c.arrayBuffer()).byteLength > 0, await d.text() !== ''];
  )JS",
                                 with_fetch(server)));
  EXPECT_EQ(v, json({"POST", "PUT", true, true}));
  const auto seen = server.recorded();
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].method, "POST") << "standard methods are upper-cased";
  EXPECT_EQ(seen[0].body, "caf\xc3\xa9");
  EXPECT_EQ(header_of(seen[0], "x-multi"), "a, b");
  EXPECT_EQ(header_of(seen[0], "content-type"), "text/plain;charset=UTF-8");
  EXPECT_EQ(seen[1].method, "PUT");
  EXPECT_EQ(seen[1].body, std::string("\x01\x02\x7f", 3));
  EXPECT_EQ(header_of(seen[1], "content-type"), "(absent)") << "bytes get no implied Content-Type";
  EXPECT_EQ(seen[2].body, "AB");
  EXPECT_EQ(header_of(seen[2], "content-type"), "application/x-test");
  EXPECT_EQ(seen[3].body, "DE") << "a DataView sends only the bytes it views";
}

TEST_F(FetchTest, ErrorStatusesResolveWithOkFalseAndTheirBody) {
  const json v = value_of(run_js(R"JS(
    const nf = await fetch(BASE + '/status?code=404&type=application/json&body=%7B%22error%22%3A%22nope%22%7D');
    const ise = await fetch(BASE + '/status?code=500');
    let parse;
    try { await ise.json(); parse = 'parsed'; } catch (e) { parse = e.name; }
    return [nf.ok, nf.status, nf.statusText, await nf.json(), ise.ok, ise.status, parse];
  )JS",
                                 with_fetch(server)));
  EXPECT_EQ(v, json({false, 404, "Custom Reason", {{"error", "nope"}}, false, 500, "SyntaxError"}));
}

TEST_F(FetchTest, RefusalsRejectWithATypeErrorWhoseCauseIsTheHostError) {
  const json v = value_of(run_js(R"JS(
    const out = [];
    for (const [url, init] of [['http://evil.example/', undefined], [BASE + '/plain', {method: 'PATCH'}]]) {
      try { await fetch(url, init); out.push('resolved'); }
      catch (e) { out.push([e instanceof TypeError, e.cause && e.cause.name, e.cause && e.cause.code,
                            e.message.includes('PermissionDenied')]); }
    }
    return out;
  )JS",
                                 with_fetch(server)));
  EXPECT_EQ(v,
            json({{true, "PermissionDenied", "EACCES", true}, {true, "PermissionDenied", "EACCES", true}}));
  EXPECT_EQ(server.requests(), 0u);
}

TEST_F(FetchTest, RedirectsAreFollowedAndEachHopChecked) {
  const json v = value_of(run_js(R"JS(
    const ok = await fetch(BASE + '/chain?n=2');
    let refused;
    try { await fetch(BASE + '/redirect?to=http%3A%2F%2F169.254.169.254%2Flatest'); refused = 'resolved'; }
    catch (e) { refused = [e instanceof TypeError, e.cause.name]; }
    let manual;
    try { await fetch(BASE + '/plain', {redirect: 'manual'}); manual = 'resolved'; }
    catch (e) { manual = [e instanceof TypeError, e.message.includes("'follow'")]; }
    return [ok.status, ok.redirected, ok.url, await ok.text(), refused, manual];
  )JS",
                                 with_fetch(server)));
  EXPECT_EQ(
      v,
      json({200, true, server.url("/chain?n=0"), "end of chain", {true, "PermissionDenied"}, {true, true}}));
}

TEST_F(FetchTest, AbortBeforeTheRequestSendsNothing) {
  const json v = value_of(run_js(R"JS(
    const c = new AbortController();
    c.abort();
    const out = [];
    try { await fetch(BASE + '/plain', {signal: c.signal}); out.push('resolved'); }
    catch (e) { out.push([e.name, e.code, e instanceof Error, c.signal.aborted]); }
    try { await fetch(BASE + '/plain', {signal: AbortSignal.abort('mine')}); out.push('resolved'); }
    catch (e) { out.push(e); }
    return out;
  )JS",
                                 with_fetch(server)));
  EXPECT_EQ(v, json({{"AbortError", 20, true, true}, "mine"}));
  EXPECT_EQ(server.requests(), 0u);
}

TEST_F(FetchTest, AbortDuringTheRequestRejectsAtOnce) {
  const json v = value_of(run_js(R"JS(
    const c = new AbortController();
    const events = [];
    c.signal.addEventListener('abort', (e) => events.push(e.type));
    setTimeout(() => c.abort(), 50);
    const out = [];
    try { await fetch(BASE + '/hang', {signal: c.signal}); out.push('resolved'); }
    catch (e) { out.push(e.name); }
    try { await fetch(BASE + '/hang', {signal: AbortSignal.timeout(50)}); out.push('resolved'); }
    catch (e) { out.push(e.name); }
    return [out, events];
  )JS",
                                 with_fetch(server)));
  EXPECT_EQ(v, json({{"AbortError", "TimeoutError"}, {"abort"}}));
}

TEST_F(FetchTest, HostileArgumentsRejectWithErrorsAndSendNothing) {
  const json v = value_of(run_js(R"JS(
    const boom = new Error('boom');
    const revoked = Proxy.revocable({}, {}); revoked.revoke();
    const attempts = [
      () => fetch(Symbol('url')),
      () => fetch({toString() { return BASE + '/plain'; }}),
      () => fetch(BASE + '/plain', new Proxy({}, {get() { throw boom; }})),
      () => fetch(BASE + '/plain', {get method() { throw boom; }}),
      () => fetch(BASE + '/plain', 'GET'),
      () => fetch(BASE + '/echo', {method: 'POST', body: {a: 1}}),
      () => fetch(BASE + '/plain', {headers: {'x-a': Symbol('v')}}),
      () => fetch(BASE + '/plain', {headers: {'bad name': 'v'}}),
      () => fetch(BASE + '/plain', {headers: {'x-a': 'a\r\nInjected: 1'}}),
      () => fetch(BASE + '/plain', {headers: revoked.proxy}),
      () => fetch(BASE + '/plain', {headers: [['only-one']]}),
      () => fetch(BASE + '/plain', {body: 'x'}),
      () => fetch(BASE + '/plain', {method: 'TRACE'}),
      () => fetch(BASE + '/plain', {signal: {aborted: true}}),
      () => fetch(BASE + '/plain', {headers: {host: 'evil.example'}}),
    ];
    const out = [];
    for (const f of attempts) {
      try { await f(); out.push('resolved'); }
      catch (e) { out.push(e === boom ? 'boom' : e instanceof TypeError ? 'TypeError' : String(e)); }
    }
    const illegal = [];
    for (const f of [() => Headers.prototype.get.call({}, 'a'), () => Response.prototype.text.call(Object.create(Response.prototype)),
                     () => new AbortSignal(), () => Object.getOwnPropertyDescriptor(Request.prototype, 'url').get.call(new Headers())]) {
      try { f(); illegal.push('ran'); } catch (e) { illegal.push(e instanceof TypeError); }
    }
    return [out, illegal, typeof fetch(BASE + '/plain', 7).then];
  )JS",
                                 with_fetch(server)));
  EXPECT_EQ(v[0], json({"TypeError", "TypeError", "boom", "boom", "TypeError", "TypeError", "TypeError",
                        "TypeError", "TypeError", "TypeError", "TypeError", "TypeError", "TypeError",
                        "TypeError", "TypeError"}));
  EXPECT_EQ(v[1], json({true, true, true, true}));
  EXPECT_EQ(v[2], "function") << "fetch never throws synchronously";
  EXPECT_EQ(server.requests(), 0u);
}

TEST_F(FetchTest, TheResponseBodyCapStillApplies) {
  HttpPolicy p = with_fetch(server);
  p.max_response_bytes = 1000;
  const json v = value_of(run_js(R"JS(
    const small = await fetch(BASE + '/bytes?n=1000');
    try { await fetch(BASE + '/bytes?n=5000'); return 'resolved'; }
    catch (e) { return [(await small.text()).length, e instanceof TypeError, e.cause.name]; }
  )JS",
                                 p));
  EXPECT_EQ(v, json({1000, true, "PayloadTooLarge"}));
}

TEST_F(FetchTest, HeadersAreCaseInsensitiveSortedAndJoined) {
  const json v = value_of(run_js(R"JS(
    const h = new Headers({'B-Two': '2', 'a-one': ' 1 '});
    h.append('A-ONE', 'again');
    h.set('c', 'x'); h.set('C', 'y');
    const seen = [];
    h.forEach((value, name) => seen.push(name + '=' + value));
    const copy = new Headers(h);
    copy.delete('b-two');
    return {get: h.get('a-One'), has: [h.has('B-TWO'), h.has('nope')], missing: h.get('nope'),
            entries: [...h], keys: [...h.keys()], values: [...h.values()], seen, copy: [...copy],
            fromMap: [...new Headers(new Map([['k', 'v']]))], number: new Headers({n: 5}).get('n'),
            res: [...(await fetch(BASE + '/headers')).headers].filter(([n]) => n.startsWith('x-'))};
  )JS",
                                 with_fetch(server)));
  EXPECT_EQ(v["get"], "1, again");
  EXPECT_EQ(v["has"], json({true, false}));
  EXPECT_EQ(v["missing"], nullptr);
  EXPECT_EQ(v["entries"], json::parse(R"([["a-one", "1, again"], ["b-two", "2"], ["c", "y"]])"));
  EXPECT_EQ(v["keys"], json({"a-one", "b-two", "c"}));
  EXPECT_EQ(v["values"], json({"1, again", "2", "y"}));
  EXPECT_EQ(v["seen"], json({"a-one=1, again", "b-two=2", "c=y"}));
  EXPECT_EQ(v["copy"], json::parse(R"([["a-one", "1, again"], ["c", "y"]])"));
  EXPECT_EQ(v["fromMap"], json::parse(R"([["k", "v"]])"));
  EXPECT_EQ(v["number"], "5");
  EXPECT_EQ(v["res"], json::parse(R"([["x-mixed-case", "Yes"], ["x-multi", "a, b"], ["x-one", "1"]])"));
}

TEST_F(FetchTest, RequestAndResponseCanBeBuiltAndRead) {
  const json v = value_of(run_js(R"JS(
    const req = new Request(BASE + '/x#frag', {method: 'POST', body: '{"a":1}', headers: {'content-type': 'application/json'}});
    const copy = req.clone();
    const res = new Response('hi', {status: 201, statusText: 'Made', headers: {'x-a': 'b'}});
    const j = Response.json({k: [1]});
    let range;
    try { new Response('', {status: 99}); range = 'built'; } catch (e) { range = e.name; }
    return [req.url, req.method, req.headers.get('content-type'), await req.json(), req.bodyUsed,
            await copy.text(), res.status, res.ok, res.statusText, await res.text(), res.headers.get('x-a'),
            j.headers.get('content-type'), await j.json(), range];
  )JS",
                                 with_fetch(server)));
  EXPECT_EQ(
      v, json::parse(R"([")" + server.url("/x#frag") +
                     R"(", "POST", "application/json", {"a": 1}, true, "{\"a\":1}", 201, true, "Made", "hi",
                           "b", "application/json", {"k": [1]}, "RangeError"])"));
}

}  // namespace
}  // namespace skillbox::bindings
