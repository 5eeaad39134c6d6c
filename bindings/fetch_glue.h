// bindings/fetch_glue.h — the JavaScript half of the WHATWG fetch (docs/http.md "fetch").
//
// Host code, compiled from this constant by install_fetch (bindings/fetch.cpp) into a context whose
// manifest sets permissions.http.fetch, before any skill code runs. It evaluates to a function
// (request, G): `request` is the C function behind `openhuman.http.request` (bindings/http.cpp, named
// "fetch" in its messages), G is globalThis. It captures what it uses while no skill code has run yet,
// defines Headers, Request, Response, AbortController, AbortSignal and fetch on G, and returns nothing.
//
// The glue enforces no boundary: it only reshapes calls. Every request goes through `request`, which
// checks its options in C++, and through the http capability's policy on the host side (allowlist,
// methods, caps, timeouts, redirects hop by hop, secrets at egress). The glue runs in the skill's own
// realm with the skill's own rights, so a skill that tampers with what the glue uses, or passes
// arguments whose getters throw, changes only its own results. Internal state lives in a WeakMap
// reached through captured functions, never in properties a skill can read or replace.
//
// Deviations from the Fetch Standard, each documented in docs/http.md "fetch": no streams (the body is
// read whole, under permissions.http.max_response_bytes, before the promise resolves; no `body`
// property); only `redirect: 'follow'`; no URL parsing here (`url` is the string given; the capability
// parses it); string conversion accepts primitives, not objects (as the other bindings do).
#pragma once

namespace skillbox::bindings {

inline constexpr char kFetchGlue[] = R"JS((function (request, G) {
'use strict';
const TE = G.TextEncoder, TD = G.TextDecoder, U8 = Uint8Array, P = Promise;
const setTimer = G.setTimeout, queueMicrotask_ = G.queueMicrotask;
const apply = Reflect.apply, defineProperty = Object.defineProperty, create = Object.create;
const ownKeys = Object.keys, isArray = Array.isArray, isView = ArrayBuffer.isView;
const JSONparse = JSON.parse, JSONstringify = JSON.stringify, iteratorSymbol = Symbol.iterator;
const abByteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength').get;
const abSlice = ArrayBuffer.prototype.slice, u8Slice = U8.prototype.slice, arraySort = Array.prototype.sort;
const slots = new WeakMap(), wmGet = WeakMap.prototype.get, wmSet = WeakMap.prototype.set;
const wmHas = WeakMap.prototype.has;
const reTest = RegExp.prototype.test, toLower = String.prototype.toLowerCase;
const toUpper = String.prototype.toUpperCase, replace = String.prototype.replace;
const promiseThen = P.prototype.then;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, BAD_VALUE = /[\0\r\n]/, EDGE_BLANKS = /^[\t\n\r ]+|[\t\n\r ]+$/g;
const HOST_ERRORS = ['PermissionDenied', 'InvalidArgument', 'PayloadTooLarge', 'Timeout', 'NetworkError',
                     'QuotaExceeded'];
const kInternal = {};  // constructor argument only the glue has

function define(obj, name, value) {
  defineProperty(obj, name, { value: value, writable: true, configurable: true, enumerable: false });
}
function tag(Ctor, name) {
  defineProperty(Ctor.prototype, Symbol.toStringTag, { value: name, configurable: true });
}
function kind(v) {
  if (v === null) return 'null';
  if (isArray(v)) return 'an array';
  const t = typeof v;
  return t === 'object' ? 'an object' : t === 'function' ? 'a function' : t === 'symbol' ? 'a symbol' : t;
}
function slot(obj, Ctor) {
  const s = obj !== null && (typeof obj === 'object' || typeof obj === 'function') ? apply(wmGet, slots, [obj]) : undefined;
  if (s === undefined || s.kind !== Ctor) throw new TypeError('Illegal invocation: not a ' + Ctor.name);
  return s;
}
function own(obj, Ctor, s) { s.kind = Ctor; apply(wmSet, slots, [obj, s]); return obj; }
// A string argument: primitives convert as String() does; objects (whose toString would be a hidden
// call) and symbols are refused.
function text(where, v) {
  const t = typeof v;
  if (t === 'string') return v;
  if (t === 'number' || t === 'boolean' || t === 'bigint' || v === null || v === undefined) return '' + v;
  throw new TypeError(where + ' must be a string; got ' + kind(v));
}
function domError(name, code, message) {
  const e = new Error(message);
  define(e, 'name', name);
  define(e, 'code', code);
  return e;
}

// ---- Headers ----
function headerName(where, v) {
  const name = text(where, v);
  if (!apply(reTest, TOKEN, [name])) throw new TypeError(where + ': "' + name.slice(0, 64) + '" is not a valid header name');
  return apply(toLower, name, []);
}
function headerValue(where, v) {
  const value = apply(replace, text(where, v), [EDGE_BLANKS, '']);
  if (apply(reTest, BAD_VALUE, [value])) throw new TypeError(where + ': a header value may not contain NUL, CR or LF');
  return value;
}
function writable(s, fn) {
  if (s.immutable) throw new TypeError('Headers.' + fn + ': these headers are immutable');
}
// [[name, value]] sorted by name, repeated names joined with ", " (the Standard's "sort and combine").
function combined(list) {
  const out = [];
  for (let i = 0; i < list.length; i++) {
    const [n, v] = list[i];
    let j = 0;
    while (j < out.length && out[j][0] !== n) j++;
    if (j === out.length) out[out.length] = [n, v];
    else out[j][1] += ', ' + v;
  }
  apply(arraySort, out, [function (a, b) { return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0; }]);
  return out;
}
function fillHeaders(h, init) {
  if (init === undefined) return;
  if (init === null || typeof init !== 'object') throw new TypeError('Headers: init must be a Headers, an array of [name, value] pairs or an object of strings; got ' + kind(init));
  const from = apply(wmHas, slots, [init]) ? apply(wmGet, slots, [init]) : undefined;
  if (from !== undefined && from.kind === Headers) {
    for (const [n, v] of from.list) h.append(n, v);
    return;
  }
  if (typeof init[iteratorSymbol] === 'function') {
    for (const pair of init) {
      if (pair === null || typeof pair !== 'object' || typeof pair[iteratorSymbol] !== 'function')
        throw new TypeError('Headers: each entry must be a [name, value] pair; got ' + kind(pair));
      const items = [];
      for (const x of pair) { items[items.length] = x; if (items.length > 2) break; }
      if (items.length !== 2) throw new TypeError('Headers: each entry must be a [name, value] pair of exactly two items');
      h.append(items[0], items[1]);
    }
    return;
  }
  for (const k of ownKeys(init)) h.append(k, init[k]);
}
class Headers {
  constructor(init) {
    own(this, Headers, { list: [], immutable: false });
    fillHeaders(this, init);
  }
  append(name, value) {
    const s = slot(this, Headers);
    const n = headerName('Headers.append: name', name), v = headerValue('Headers.append: value', value);
    writable(s, 'append');
    s.list[s.list.length] = [n, v];
  }
  delete(name) {
    const s = slot(this, Headers);
    const n = headerName('Headers.delete: name', name);
    writable(s, 'delete');
    const kept = [];
    for (const e of s.list) if (e[0] !== n) kept[kept.length] = e;
    s.list = kept;
  }
  get(name) {
    const s = slot(this, Headers);
    const n = headerName('Headers.get: name', name);
    let out = null;
    for (const [k, v] of s.list) if (k === n) out = out === null ? v : out + ', ' + v;
    return out;
  }
  getSetCookie() {
    const out = [];
    for (const [k, v] of slot(this, Headers).list) if (k === 'set-cookie') out[out.length] = v;
    return out;
  }
  has(name) {
    const s = slot(this, Headers);
    const n = headerName('Headers.has: name', name);
    for (const e of s.list) if (e[0] === n) return true;
    return false;
  }
  set(name, value) {
    const s = slot(this, Headers);
    const n = headerName('Headers.set: name', name), v = headerValue('Headers.set: value', value);
    writable(s, 'set');
    const kept = [];
    let placed = false;
    for (const e of s.list) {
      if (e[0] !== n) kept[kept.length] = e;
      else if (!placed) { kept[kept.length] = [n, v]; placed = true; }
    }
    if (!placed) kept[kept.length] = [n, v];
    s.list = kept;
  }
  forEach(callback, thisArg) {
    if (typeof callback !== 'function') throw new TypeError('Headers.forEach: callback must be a function; got ' + kind(callback));
    for (const [n, v] of combined(slot(this, Headers).list)) apply(callback, thisArg, [v, n, this]);
  }
  entries() { return combined(slot(this, Headers).list)[iteratorSymbol](); }
  keys() { const out = []; for (const e of combined(slot(this, Headers).list)) out[out.length] = e[0]; return out[iteratorSymbol](); }
  values() { const out = []; for (const e of combined(slot(this, Headers).list)) out[out.length] = e[1]; return out[iteratorSymbol](); }
  [Symbol.iterator]() { return this.entries(); }
}
tag(Headers, 'Headers');
function headersFrom(list, immutable) {
  const h = new Headers();
  const s = slot(h, Headers);
  s.list = list;
  s.immutable = immutable;
  return h;
}

// ---- bodies ----
// The bytes of a body init, copied now (as the Standard extracts it); `type` gets the Content-Type a
// string implies. null: no body.
function extractBody(where, body, type) {
  if (body === undefined || body === null) return null;
  if (typeof body === 'string') { type.value = 'text/plain;charset=UTF-8'; return new TE().encode(body); }
  if (isView(body)) return apply(u8Slice, new U8(body.buffer, body.byteOffset, body.byteLength), []);
  let isBuffer = false;
  try { apply(abByteLength, body, []); isBuffer = true; } catch (ignored) { /* not an ArrayBuffer */ }
  if (isBuffer) return new U8(apply(abSlice, body, [0]));
  throw new TypeError(where + ' must be a string, an ArrayBuffer, a typed array or a DataView (or null); got ' + kind(body));
}
function consume(s, fn) {
  const b = s.body;
  if (b.used) return P.reject(new TypeError(fn + ': the body has already been read (bodyUsed)'));
  if (s.signal !== null && slot(s.signal, AbortSignal).aborted) return P.reject(slot(s.signal, AbortSignal).reason);
  if (b.bytes === null) return P.resolve(new U8(0));
  b.used = true;
  const bytes = b.bytes;
  b.bytes = new U8(0);
  return P.resolve(bytes);
}
function readText(bytes) { return new TD().decode(bytes); }
function readJson(bytes) { return JSONparse(readText(bytes)); }
function readBuffer(bytes) { return bytes.buffer.byteLength === bytes.byteLength ? bytes.buffer : apply(abSlice, bytes.buffer, [bytes.byteOffset, bytes.byteOffset + bytes.byteLength]); }
function read(s, fn, map) { return apply(promiseThen, consume(s, fn), [map]); }
function cloneBody(s, fn) {
  if (s.body.used) throw new TypeError(fn + ': the body has already been read (bodyUsed)');
  return { bytes: s.body.bytes === null ? null : apply(u8Slice, s.body.bytes, []), used: false };
}

// ---- AbortController, AbortSignal ----
function newSignal() { return own(create(AbortSignal.prototype), AbortSignal, { aborted: false, reason: undefined, onabort: null, listeners: [], algorithms: [] }); }
function reportLater(e) { queueMicrotask_(function () { throw e; }); }
function signalAbort(signal, reason) {
  const s = slot(signal, AbortSignal);
  if (s.aborted) return;
  s.aborted = true;
  s.reason = reason === undefined ? domError('AbortError', 20, 'This operation was aborted') : reason;
  const algorithms = s.algorithms;
  s.algorithms = [];
  for (const f of algorithms) f();
  const event = { type: 'abort', target: signal, currentTarget: signal, isTrusted: true };
  const listeners = [];
  if (typeof s.onabort === 'function') listeners[0] = { fn: s.onabort };
  for (const l of s.listeners) listeners[listeners.length] = l;
  for (const l of listeners) {
    if (l.once) removeListener(s, l.fn);
    try {
      if (typeof l.fn === 'function') apply(l.fn, signal, [event]);
      else if (l.fn !== null && typeof l.fn === 'object' && typeof l.fn.handleEvent === 'function') l.fn.handleEvent(event);
    } catch (e) { reportLater(e); }  // as a browser reports a listener's error: it does not stop the others
  }
}
function removeListener(s, fn) {
  const kept = [];
  for (const l of s.listeners) if (l.fn !== fn) kept[kept.length] = l;
  s.listeners = kept;
}
function follow(signal, source) {
  const s = slot(source, AbortSignal);
  if (s.aborted) signalAbort(signal, s.reason);
  else s.algorithms[s.algorithms.length] = function () { signalAbort(signal, s.reason); };
}
class AbortSignal {
  constructor() { throw new TypeError('Illegal constructor: use new AbortController().signal, AbortSignal.abort() or AbortSignal.timeout()'); }
  get aborted() { return slot(this, AbortSignal).aborted; }
  get reason() { return slot(this, AbortSignal).reason; }
  get onabort() { return slot(this, AbortSignal).onabort; }
  set onabort(f) { slot(this, AbortSignal).onabort = typeof f === 'function' ? f : null; }
  throwIfAborted() { const s = slot(this, AbortSignal); if (s.aborted) throw s.reason; }
  addEventListener(type, listener, options) {
    const s = slot(this, AbortSignal);
    if (text('AbortSignal.addEventListener: type', type) !== 'abort' || listener === null || listener === undefined) return;
    for (const l of s.listeners) if (l.fn === listener) return;
    const once = options !== null && typeof options === 'object' && !!options.once;
    s.listeners[s.listeners.length] = { fn: listener, once: once };
  }
  removeEventListener(type, listener) {
    const s = slot(this, AbortSignal);
    if (text('AbortSignal.removeEventListener: type', type) === 'abort') removeListener(s, listener);
  }
  static abort(reason) { const signal = newSignal(); signalAbort(signal, reason); return signal; }
  static timeout(ms) {
    if (typeof ms !== 'number' || !(ms >= 0) || ms > 9007199254740991 || ms !== Math.floor(ms))
      throw new TypeError('AbortSignal.timeout: ms must be an integer from 0; got ' + (typeof ms === 'number' ? ms : kind(ms)));
    const signal = newSignal();
    setTimer(function () { signalAbort(signal, domError('TimeoutError', 23, 'The operation timed out after ' + ms + ' ms')); }, ms);
    return signal;
  }
  static any(signals) {
    const signal = newSignal();
    for (const source of signals) { slot(source, AbortSignal); follow(signal, source); }
    return signal;
  }
}
tag(AbortSignal, 'AbortSignal');
class AbortController {
  constructor() { own(this, AbortController, { signal: newSignal() }); }
  get signal() { return slot(this, AbortController).signal; }
  abort(reason) { signalAbort(slot(this, AbortController).signal, reason); }
}
tag(AbortController, 'AbortController');

// ---- Request ----
function requestInit(init) {
  if (init === undefined || init === null) return {};
  if (typeof init !== 'object' && typeof init !== 'function') throw new TypeError('fetch: init must be an object; got ' + kind(init));
  return init;
}
function method(v) {
  const m = text('Request: method', v);
  if (!apply(reTest, TOKEN, [m])) throw new TypeError('Request: "' + m.slice(0, 64) + '" is not a valid method');
  const upper = apply(toUpper, m, []);
  if (upper === 'CONNECT' || upper === 'TRACE' || upper === 'TRACK') throw new TypeError('Request: the method ' + upper + ' is forbidden');
  return ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT'].indexOf(upper) >= 0 ? upper : m;
}
function redirectMode(v) {
  const r = text('Request: redirect', v);
  if (r === 'follow') return r;
  if (r === 'manual' || r === 'error')
    throw new TypeError("Request: redirect '" + r + "' is not supported; skillbox follows redirects itself and checks each hop against permissions.http.allow (redirect: 'follow')");
  throw new TypeError("Request: redirect must be 'follow', 'manual' or 'error'; got '" + r.slice(0, 64) + "'");
}
class Request {
  constructor(input, init) {
    const from = input !== null && typeof input === 'object' && apply(wmHas, slots, [input]) ? apply(wmGet, slots, [input]) : undefined;
    const s = { url: '', method: 'GET', headers: null, body: { bytes: null, used: false }, signal: null, redirect: 'follow' };
    if (from !== undefined && from.kind === Request) {
      s.url = from.url; s.method = from.method; s.redirect = from.redirect;
      s.body = cloneBody(from, 'Request');
    } else if (typeof input === 'string') {
      s.url = input;
    } else {
      throw new TypeError('Request: input must be a URL string or a Request; got ' + kind(input));
    }
    const o = requestInit(init);
    // Read once each, in lexicographic order, as WebIDL reads a dictionary.
    const body = o.body, headers = o.headers, m = o.method, redirect = o.redirect, signal = o.signal;
    s.headers = new Headers(headers !== undefined ? headers : from !== undefined && from.kind === Request ? from.headers : undefined);
    if (m !== undefined) s.method = method(m);
    if (redirect !== undefined) s.redirect = redirectMode(redirect);
    if (signal !== undefined && signal !== null) { slot(signal, AbortSignal); s.signal = signal; }
    else if (signal === undefined && from !== undefined && from.kind === Request) s.signal = from.signal;
    if (body !== undefined) {
      const type = { value: null };
      s.body = { bytes: extractBody('Request: body', body, type), used: false };
      if (type.value !== null && !s.headers.has('content-type')) s.headers.set('content-type', type.value);
    }
    if (s.body.bytes !== null && (s.method === 'GET' || s.method === 'HEAD'))
      throw new TypeError('Request: a ' + s.method + ' request cannot have a body');
    if (s.signal === null) s.signal = newSignal();  // a Request always has one
    own(this, Request, s);
  }
  get url() { return slot(this, Request).url; }
  get method() { return slot(this, Request).method; }
  get headers() { return slot(this, Request).headers; }
  get signal() { return slot(this, Request).signal; }
  get redirect() { return slot(this, Request).redirect; }
  get bodyUsed() { return slot(this, Request).body.used; }
  text() { return read(slot(this, Request), 'Request.text', readText); }
  json() { return read(slot(this, Request), 'Request.json', readJson); }
  arrayBuffer() { return read(slot(this, Request), 'Request.arrayBuffer', readBuffer); }
  bytes() { return read(slot(this, Request), 'Request.bytes', function (b) { return b; }); }
  clone() { slot(this, Request); return new Request(this); }
}
tag(Request, 'Request');

// ---- Response ----
function responseInit(s, init) {
  if (init === undefined || init === null) return;
  if (typeof init !== 'object') throw new TypeError('Response: init must be an object; got ' + kind(init));
  const headers = init.headers, status = init.status, statusText = init.statusText;
  if (headers !== undefined) s.headers = new Headers(headers);
  if (status !== undefined) {
    if (typeof status !== 'number' || status !== Math.floor(status) || status < 200 || status > 599)
      throw new RangeError('Response: status must be an integer from 200 to 599; got ' + (typeof status === 'number' ? status : kind(status)));
    s.status = status;
  }
  if (statusText !== undefined) s.statusText = text('Response: statusText', statusText);
}
class Response {
  constructor(body, init) {
    if (body === kInternal) { own(this, Response, init); return; }
    const s = { status: 200, statusText: '', headers: new Headers(), url: '', redirected: false, type: 'default',
                body: { bytes: null, used: false }, signal: null };
    responseInit(s, init);
    const type = { value: null };
    s.body.bytes = extractBody('Response: body', body, type);
    if (s.body.bytes !== null && (s.status === 204 || s.status === 205 || s.status === 304))
      throw new TypeError('Response: a ' + s.status + ' response cannot have a body');
    if (type.value !== null && !s.headers.has('content-type')) s.headers.set('content-type', type.value);
    own(this, Response, s);
  }
  static json(data, init) {
    const t = JSONstringify(data);
    if (t === undefined) throw new TypeError('Response.json: the data cannot be serialized as JSON');
    const r = new Response(t, init);
    slot(r, Response).headers.set('content-type', 'application/json');
    return r;
  }
  static error() {
    return new Response(kInternal, { status: 0, statusText: '', headers: headersFrom([], true), url: '', redirected: false,
                                     type: 'error', body: { bytes: null, used: false }, signal: null });
  }
  get status() { return slot(this, Response).status; }
  get statusText() { return slot(this, Response).statusText; }
  get ok() { const st = slot(this, Response).status; return st >= 200 && st <= 299; }
  get headers() { return slot(this, Response).headers; }
  get url() { return slot(this, Response).url; }
  get redirected() { return slot(this, Response).redirected; }
  get type() { return slot(this, Response).type; }
  get bodyUsed() { return slot(this, Response).body.used; }
  text() { return read(slot(this, Response), 'Response.text', readText); }
  json() { return read(slot(this, Response), 'Response.json', readJson); }
  arrayBuffer() { return read(slot(this, Response), 'Response.arrayBuffer', readBuffer); }
  bytes() { return read(slot(this, Response), 'Response.bytes', function (b) { return b; }); }
  clone() {
    const s = slot(this, Response);
    const c = {};
    for (const k of ownKeys(s)) c[k] = s[k];
    c.body = cloneBody(s, 'Response.clone');
    c.headers = headersFrom(slot(s.headers, Headers).list.slice(), slot(s.headers, Headers).immutable);
    return new Response(kInternal, c);
  }
}
tag(Response, 'Response');

// ---- fetch ----
function withoutFragment(url) { const i = url.indexOf('#'); return i < 0 ? url : url.slice(0, i); }
function fromReply(r, requested, signal) {
  const list = [];
  for (const n of ownKeys(r.headers)) list[list.length] = [n, r.headers[n]];
  return new Response(kInternal, { status: r.status, statusText: r.statusText, headers: headersFrom(list, true),
                                   url: r.url, redirected: r.url !== withoutFragment(requested), type: 'basic',
                                   body: { bytes: r.body, used: false }, signal: signal });
}
// The Standard's "network error": a TypeError; the host error (name, code, message) is its `cause`.
function networkError(e) {
  if (e === null || typeof e !== 'object' || HOST_ERRORS.indexOf(e.name) < 0) return e;
  const t = new TypeError('fetch failed: ' + e.message + ' (' + e.name + ')');
  define(t, 'cause', e);
  return t;
}
function fetch(input, init) {
  return new P(function (resolve, reject) {
    const req = new Request(input, init);  // a throw here rejects
    const s = slot(req, Request), sig = slot(s.signal, AbortSignal);
    if (sig.aborted) { reject(sig.reason); return; }
    const options = create(null), headers = create(null);
    for (const [n, v] of combined(slot(s.headers, Headers).list)) headers[n] = v;
    options.url = s.url; options.method = s.method; options.headers = headers; options.responseType = 'binary';
    if (s.body.bytes !== null) options.body = s.body.bytes;
    let settled = false;
    const onAbort = function () { if (!settled) { settled = true; reject(sig.reason); } };
    sig.algorithms[sig.algorithms.length] = onAbort;
    const done = function () {
      settled = true;
      const kept = [];
      for (const f of sig.algorithms) if (f !== onAbort) kept[kept.length] = f;
      sig.algorithms = kept;
    };
    apply(promiseThen, request(options), [
      function (r) { if (!settled) { done(); resolve(fromReply(r, s.url, s.signal)); } },
      function (e) { if (!settled) { done(); reject(networkError(e)); } }]);
  });
}

define(G, 'Headers', Headers);
define(G, 'Request', Request);
define(G, 'Response', Response);
define(G, 'AbortController', AbortController);
define(G, 'AbortSignal', AbortSignal);
define(G, 'fetch', fetch);
}))JS";

}  // namespace skillbox::bindings
