"use strict";
var __skill_bundle = (() => {
  var __defProp = Object.defineProperty;
  var __getOwnPropDesc = Object.getOwnPropertyDescriptor;
  var __getOwnPropNames = Object.getOwnPropertyNames;
  var __hasOwnProp = Object.prototype.hasOwnProperty;
  var __export = (target, all) => {
    for (var name in all)
      __defProp(target, name, { get: all[name], enumerable: true });
  };
  var __copyProps = (to, from, except, desc) => {
    if (from && typeof from === "object" || typeof from === "function") {
      for (let key of __getOwnPropNames(from))
        if (!__hasOwnProp.call(to, key) && key !== except)
          __defProp(to, key, { get: () => from[key], enumerable: !(desc = __getOwnPropDesc(from, key)) || desc.enumerable });
    }
    return to;
  };
  var __toCommonJS = (mod) => __copyProps(__defProp({}, "__esModule", { value: true }), mod);

  // polyfills/buffer.ts (a small Buffer, inlined the way bundles inline theirs)
  var _global = typeof globalThis !== "undefined" ? globalThis : typeof window !== "undefined" ? window : typeof global !== "undefined" ? global : {};
  var Buffer2 = class _Buffer extends Uint8Array {
    static from(value, encoding) {
      if (typeof value === "string") {
        if (encoding === "base64") {
          const bin = atob(value);
          const out = new _Buffer(bin.length);
          for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
          return out;
        }
        const bytes = new TextEncoder().encode(value);
        const out = new _Buffer(bytes.length);
        out.set(bytes);
        return out;
      }
      const out = new _Buffer(value.length);
      out.set(value);
      return out;
    }
    toString(encoding) {
      if (encoding === "base64") { let s = ""; for (let i = 0; i < this.length; i++) s += String.fromCharCode(this[i]); return btoa(s); }
      return new TextDecoder().decode(this);
    }
  };
  if (typeof _global.Buffer === "undefined") _global.Buffer = Buffer2;
  if (typeof window !== "undefined" && typeof window.Buffer === "undefined") window.Buffer = Buffer2;
  if (typeof global !== "undefined" && typeof global.Buffer === "undefined") global.Buffer = Buffer2;

  // src/index.ts
  var src_exports = {};
  __export(src_exports, { default: () => src_default });
  var pending = null;
  function ensureSchema() {
    db.exec("CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL, meta TEXT)");
  }
  var tools = [
    {
      name: "add_note",
      description: "Adds a note inside an open transaction (commit with commit_notes)",
      input_schema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
      execute(args) {
        ensureSchema();
        if (pending === null) { db.exec("BEGIN"); pending = 0; }
        pending++;
        return db.exec("INSERT INTO notes (title, meta) VALUES (?, ?)", [args.title, { tags: ["new"], n: pending }]);
      }
    },
    {
      name: "commit_notes",
      description: "Commits the notes added in this invocation",
      inputSchema: { type: "object" },
      execute() {
        if (pending === null) return "nothing to commit";
        db.exec("COMMIT");
        const n = pending;
        pending = null;
        return { committed: n };
      }
    },
    {
      name: "list_notes",
      description: "Lists the notes",
      execute() {
        ensureSchema();
        return db.all("SELECT id, title, meta FROM notes ORDER BY id");
      }
    },
    {
      name: "fetch_title",
      description: "Fetches a title synchronously with net.fetch and stores it",
      execute(args) {
        const r = net.fetch(args.url, { method: "GET", headers: { "X-Notes": "1" }, timeout: 10 });
        state.set("last_status", r.status);
        state.setPartial({ last_url: args.url, last_length: r.body.length });
        data.write("last.txt", r.body);
        return { status: r.status, type: r.headers["content-type"], body: r.body };
      }
    },
    {
      name: "fetch_async",
      description: "Fetches JSON with fetch()",
      async execute(args) {
        const r = await fetch(args.url, { method: "POST", body: { hello: "world" } });
        const j = await r.json();
        return { ok: r.ok, status: r.status, type: r.headers.get("Content-Type"), echoed: j };
      }
    },
    {
      name: "remember",
      description: "Reads what earlier invocations left in state, db.kv and data",
      execute() {
        let file = null;
        try { file = data.read("last.txt"); } catch (e) { file = e.name + ": " + e.code; }
        return {
          last_status: state.get("last_status"),
          last_url: state.get("last_url"),
          missing: state.get("no-such-key"),
          keys: state.keys(),
          kv: db.kvGet("counter"),
          file: file,
          region: platform.env("NOTES_REGION"),
          os: platform.os(),
          skillId: __skillId,
          same: self === globalThis && window === globalThis && global === globalThis
        };
      }
    },
    {
      name: "bump",
      description: "Counts calls in db.kv and notifies",
      execute() {
        const n = (db.kvGet("counter") || 0) + 1;
        db.kvSet("counter", n);
        platform.notify("Counter", "now " + n);
        memory.insert({ title: "count", content: String(n), sourceType: "skill", metadata: { n }, priority: 1 });
        cron.register("nightly", "0 3 * * *");
        cron.register("hourly", "0 * * * *");
        return n;
      }
    },
    {
      name: "codec",
      description: "OpenHuman base64 and text codecs",
      execute(args) {
        const b = btoa(args.text);
        return { b64: b, back: atob(b), bytes: new TextEncoder().encode(args.text).length, buffer: typeof Buffer };
      }
    }
  ];
  var skill = {
    tools,
    init() { globalThis.__initCount = (globalThis.__initCount || 0) + 1; },
    start(ctx) { this.started = ctx; },
    stop() { console.info("stopping notes"); },
    onSetupStart() { return { step: "region", fields: ["region"] }; },
    onSetupSubmit(input) {
      if (input.stepId === "region") { this.region = input.values.region; return { next: "confirm" }; }
      state.set("region", this.region);
      return { done: true, region: this.region };
    },
    onRpc(input) { return { method: input.method, params: input.params, inits: globalThis.__initCount }; },
    onListOptions() { return [{ name: "verbose", value: state.get("verbose") }]; }
  };
  globalThis.onSetOption = function(option) { state.set(option.name, option.value); return this === skill; };
  var src_default = skill;
  console.log("skill", skill);
  return __toCommonJS(src_exports);
})();
globalThis.__skill = { default: __skill_bundle.default };
if (globalThis.__skill.default && !globalThis.__skill.default.tools && globalThis.tools) globalThis.__skill.default.tools = globalThis.tools;
