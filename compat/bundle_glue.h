// compat/bundle_glue.h — the JavaScript half of the OpenHuman bundle API (docs/openhuman.md).
//
// Host code, compiled from this constant into every bundle's context before the bundle runs. It
// evaluates to a function (N, G): N holds the natives of compat/bundle_flavor.cpp, G is globalThis.
// It captures what it uses (the v1 bindings, JSON, Promise, ...) while no bundle code has run yet,
// takes the v1-only globals off G, defines the OpenHuman globals, and returns the driver: {drive, failed},
// drive an async function (kind, name, input) running the lifecycle (init, start, the calls, stop),
// failed(message) the value to report beside the error when a call threw.
//
// The glue enforces no boundary: it only reshapes calls. Every request it makes goes through a
// binding that checks its arguments in C++ and through the capability's policy on the host side, so
// a bundle that tampers with prototypes the glue uses can change only its own results.
#pragma once

namespace skillbox::compat {

inline constexpr char kBundleGlue[] = R"JS((function (N, G) {
'use strict';
const JSONstringify = JSON.stringify, JSONparse = JSON.parse, isArray = Array.isArray, Str = String;
const ObjectKeys = Object.keys, defineProperty = Object.defineProperty, freeze = Object.freeze;
const TE = G.TextEncoder, TD = G.TextDecoder, U8 = Uint8Array, fromCharCode = String.fromCharCode;
const console_ = G.console;
const store = G.store, env = G.env, v1atob = G.atob, v1btoa = G.btoa;
// The WHATWG fetch of bindings/fetch_glue.h, installed before this glue: the bundle's fetch is it.
const webFetch = G.fetch;
// The v1-only globals are not part of a bundle's API.
delete G.openhuman; delete G.store; delete G.env;

function define(obj, name, value) {
  defineProperty(obj, name, { value: value, writable: true, configurable: true, enumerable: false });
}
function fail(Ctor, message) { return new Ctor(message); }

// ---- globals ----
define(G, 'self', G);
define(G, 'window', G);
define(G, 'global', G);
define(G, '__skillId', N.skillId);

// OpenHuman's base64: btoa encodes the UTF-8 bytes of the string, atob decodes to a UTF-8 string.
define(G, 'btoa', function btoa(text) {
  const bytes = new TE().encode(Str(text));
  let binary = '';
  for (let i = 0; i < bytes.length; i += 8192) binary += fromCharCode.apply(null, bytes.subarray(i, i + 8192));
  return v1btoa(binary);
});
define(G, 'atob', function atob(data) {
  const binary = v1atob(data);
  const bytes = new U8(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return new TD().decode(bytes);
});

// ---- state: the store capability ----
define(G, 'state', {
  get(key) { const v = store.get(key); return v === undefined ? null : v; },
  set(key, value) { store.set(key, value === undefined ? null : value); },
  setPartial(values) {
    if (values === null || typeof values !== 'object') throw fail(TypeError, 'state.setPartial: expected an object of keys and values');
    for (const k of ObjectKeys(values)) store.set(k, values[k] === undefined ? null : values[k]);
  },
  delete(key) { store.delete(key); },
  keys() { return store.keys(); },
});

// ---- net.fetch (synchronous) and fetch (a Promise) ----
function timeoutMs(fn, t) {
  if (t === undefined || t === null) return 30000;
  if (typeof t !== 'number' || !(t > 0) || t !== t) throw fail(TypeError, fn + ': options.timeout must be a positive number of seconds');
  // Seconds; bundles that pass milliseconds (10000) are read as such above 600 (docs/openhuman.md).
  const ms = t > 600 ? t : t * 1000;
  return Math.max(1, Math.min(600000, Math.ceil(ms)));
}
function bodyOf(body) {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof U8) return body;
  return JSONstringify(body);
}
function requestOptions(fn, url, options) {
  const o = options === undefined || options === null ? {} : options;
  if (typeof o !== 'object') throw fail(TypeError, fn + ': options must be an object');
  return { url: url, method: o.method === undefined ? 'GET' : o.method, headers: o.headers,
           body: bodyOf(o.body), timeoutMs: timeoutMs(fn, o.timeout) };
}
function syncResponse(r) {
  return { status: r.status, statusText: r.statusText, headers: r.headers, body: r.body };
}
define(G, 'net', {
  fetch(url, options) { return syncResponse(N.fetchSync(requestOptions('net.fetch', url, options))); },
});
// OpenHuman's fetch is the WHATWG one but for the body: a value that is not a string or bytes is
// JSON-stringified. `timeout` is checked as net.fetch checks it, then the policy's timeout applies.
define(G, 'fetch', function fetch(url, options) {
  let init;
  try {
    const r = requestOptions('fetch', url, options);
    init = { method: r.method, headers: r.headers, body: r.body };
  } catch (e) { return Promise.reject(e); }
  return webFetch(url, init);
});

// ---- data: the workspace (fs capability) ----
define(G, 'data', {
  read(name) { return N.read(name); },
  write(name, text) { N.write(name, text); },
});

// ---- platform ----
function emit(type, fields) { N.event(type, JSONstringify(fields)); }
define(G, 'platform', {
  os() { return 'linux'; },
  env(name) { const v = env.get(name); return v === undefined ? null : v; },
  notify(title, body) { emit('notify', { title: Str(title), body: body === undefined ? '' : Str(body) }); },
});

// ---- inert stubs ----
let cronWarned = false;
function cronWarn() {
  if (cronWarned) return;
  cronWarned = true;
  console_.warn('cron: scheduling is the host\'s job in skillbox; this registration is reported as an event and nothing runs on a schedule');
}
define(G, 'cron', {
  register(id, expr) { cronWarn(); emit('cron.register', { id: Str(id), expr: Str(expr) }); return false; },
  unregister(id) { cronWarn(); emit('cron.unregister', { id: Str(id) }); return false; },
  list() { return []; },
});
define(G, 'skills', {
  list() { return []; },
  callTool() { throw fail(Error, 'skills.callTool: a bundle cannot call another skill in skillbox; each skill runs in its own sandbox'); },
});
define(G, 'memory', {
  insert(entry) {
    if (entry === null || typeof entry !== 'object') throw fail(TypeError, 'memory.insert: expected an object {title, content, ...}');
    emit('memory.insert', entry);
    return true;
  },
});

// ---- db: the skill's own SQLite database ----
function params(fn, list) {
  if (list === undefined || list === null) return '[]';
  if (!isArray(list)) throw fail(TypeError, fn + ': params must be an array');
  const out = [];
  for (let i = 0; i < list.length; i++) {
    const v = list[i];
    if (v === undefined || v === null) out.push(null);
    else if (typeof v === 'object') out.push(JSONstringify(v));
    else if (typeof v === 'bigint') out.push(Str(v));
    else out.push(v);
  }
  return JSONstringify(out);
}
let kvReady = false;
function kvTable() {
  if (kvReady) return;
  N.db(0, 'CREATE TABLE IF NOT EXISTS __skillbox_kv (key TEXT PRIMARY KEY, value TEXT NOT NULL)', '[]');
  kvReady = true;
}
define(G, 'db', {
  exec(sql, list) { return JSONparse(N.db(0, sql, params('db.exec', list))); },
  get(sql, list) { return JSONparse(N.db(1, sql, params('db.get', list))); },
  all(sql, list) { return JSONparse(N.db(2, sql, params('db.all', list))); },
  kvGet(key) {
    kvTable();
    const row = JSONparse(N.db(1, 'SELECT value FROM __skillbox_kv WHERE key = ?', JSONstringify([Str(key)])));
    if (row === null) return null;
    return typeof row.value === 'string' ? JSONparse(row.value) : row.value;
  },
  kvSet(key, value) {
    kvTable();
    const text = JSONstringify(value === undefined ? null : value);
    N.db(0, 'INSERT INTO __skillbox_kv (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
         JSONstringify([Str(key), text]));
  },
});

// ---- oauth / auth: placeholders only; the host puts the real values into allowed requests ----
function credential(kind) { const t = N.credential(kind, false); return t === null ? null : JSONparse(t); }
define(G, 'oauth', {
  getCredential() { return credential(0); },
  fetch(path, options) {
    const c = credential(0);
    if (c === null) throw fail(Error, 'oauth.fetch: no OAuth credential for this skill; the operator supplies it (--credentials FILE)');
    const o = options === undefined || options === null ? {} : options;
    if (typeof o !== 'object') throw fail(TypeError, 'oauth.fetch: options must be an object');
    const headers = {};
    if (o.headers !== undefined && o.headers !== null) for (const k of ObjectKeys(o.headers)) headers[k] = o.headers[k];
    headers['Authorization'] = 'Bearer ' + c.accessToken;
    const r = N.fetchSync({ url: Str(c.baseUrl) + Str(path), method: o.method === undefined ? 'GET' : o.method,
                            headers: headers, body: bodyOf(o.body), timeoutMs: timeoutMs('oauth.fetch', o.timeout) });
    return { status: r.status, headers: r.headers, body: r.body };
  },
  revoke() {
    const c = credential(0);
    N.credential(0, true);
    emit('oauth.revoke', { credentialId: c === null ? null : c.credentialId });
    return true;
  },
});
define(G, 'auth', { getCredential() { return credential(1); } });

// ---- the lifecycle ----
const HOOKS = ['onCronTrigger', 'onSetupStart', 'onSetupSubmit', 'onSetupCancel', 'onListOptions', 'onSetOption',
               'onSessionStart', 'onSessionEnd', 'onRpc', 'onOAuthComplete', 'onOAuthRevoked', 'onAuthRevoked',
               'onDisconnect', 'onSync', 'onPing', 'onError'];
function theSkill() {
  const holder = G.__skill;
  const skill = holder !== null && typeof holder === 'object' && holder.default !== undefined ? holder.default : holder;
  if (skill === null || typeof skill !== 'object')
    throw fail(TypeError, 'the bundle did not set globalThis.__skill = { default: skill }; is this an OpenHuman bundle built with the footer? (docs/openhuman.md "The entry")');
  return skill;
}
function lookup(skill, name) {
  const f = skill[name] || G[name];
  return typeof f === 'function' ? f : undefined;
}
function toolsOf(skill) { const t = skill.tools || G.tools; return isArray(t) ? t : []; }
function schemaOf(tool) {
  if (tool.inputSchema !== undefined) return tool.inputSchema;
  return tool.input_schema === undefined ? null : tool.input_schema;
}
function listTools(skill) {
  const out = [];
  for (const t of toolsOf(skill)) {
    if (t === null || typeof t !== 'object') continue;
    out.push({ name: Str(t.name), description: t.description === undefined ? '' : Str(t.description), input_schema: schemaOf(t) });
  }
  return out;
}
function toolResult(value) {
  const text = value !== null && typeof value === 'object' ? JSONstringify(value) : Str(value);
  return { content: [{ type: 'text', text: text }], is_error: false };
}
// What failed() reports beside an error outcome: set when a call (not init, start or stop) threw.
let failure = null;
async function runCall(skill, call) {
  if (call.tool !== undefined) {
    const name = Str(call.tool);
    const tools = toolsOf(skill);
    let tool;
    for (const t of tools) if (t !== null && typeof t === 'object' && t.name === name) { tool = t; break; }
    if (tool === undefined) {
      const names = listTools(skill).map(function (t) { return t.name; }).join(', ');
      throw fail(TypeError, 'the bundle has no tool named "' + name + '"; its tools are: ' + (names || '(none)'));
    }
    if (typeof tool.execute !== 'function') throw fail(TypeError, 'tool "' + name + '" has no execute function');
    return toolResult(await tool.execute(call.args === undefined ? {} : call.args));
  }
  const name = Str(call.hook);
  if (HOOKS.indexOf(name) < 0)
    throw fail(TypeError, 'unknown hook "' + name + '"; init, start and stop run on every invocation, and the hooks that can be called are: ' + HOOKS.join(', '));
  const f = lookup(skill, name);
  if (f === undefined) return null;
  const out = await f.call(skill, call.args);
  return out === undefined ? null : out;
}
async function drive(kind, name, input) {
  const skill = theSkill();
  if (kind === 'tools') return listTools(skill);
  let calls;
  if (kind === 'tool') calls = [{ tool: name, args: input === null ? undefined : input }];
  else if (kind === 'hook') calls = [{ hook: name, args: input === null ? undefined : input }];
  else {
    if (!isArray(input)) throw fail(TypeError, 'a sequence is a JSON array of {"tool": NAME, "args": ...} or {"hook": NAME, "args": ...}');
    calls = input;
    for (let i = 0; i < calls.length; i++) {
      const c = calls[i];
      if (c === null || typeof c !== 'object' || (typeof c.tool !== 'string') === (typeof c.hook !== 'string'))
        throw fail(TypeError, 'sequence[' + i + ']: expected {"tool": NAME, "args": ...} or {"hook": NAME, "args": ...}');
    }
  }
  const init = lookup(skill, 'init');
  if (init) await init.call(skill);
  const start = lookup(skill, 'start');
  if (start) await start.call(skill, { oauth: credential(0), auth: credential(1) });
  const results = [];
  let failed = false, error, failedCall;
  try {
    for (const c of calls) { failedCall = c; results.push(await runCall(skill, c)); }
  } catch (e) { failed = true; error = e; }
  const stop = lookup(skill, 'stop');
  if (failed) {
    failure = { sequence: kind === 'sequence', results: results, tool: failedCall.tool !== undefined };
    // stop() still runs; the failing call's error is the one reported (an error of stop is dropped).
    if (stop) { try { await stop.call(skill); } catch (ignored) { /* the call's error wins */ } }
    throw error;
  }
  if (stop) await stop.call(skill);
  return kind === 'sequence' ? results : results[0];
}
// Beside an error outcome (Flavor::value_on_error): a failing tool's ToolResult with is_error true
// and the error's message (as the host described it for RunResult::error); in a sequence, the results
// of the calls before it, then that ToolResult (none for a failing hook). Nothing when the failure
// was not in a call.
function failedValue(message) {
  if (failure === null) return undefined;
  const out = failure.results;
  if (failure.tool) out[out.length] = { content: [{ type: 'text', text: Str(message) }], is_error: true };
  if (failure.sequence) return out;
  return failure.tool ? out[0] : undefined;
}
return { drive: drive, failed: failedValue };
}))JS";

}  // namespace skillbox::compat
