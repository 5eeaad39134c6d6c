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
  function err(fn) {
    try { return { ok: fn() }; } catch (e) { return { name: e.name, code: e.code, message: e.message }; }
  }
  var skill = {
    tools: [
      { name: "spin", description: "Loops forever", execute() { for (;;) {} } },
      { name: "denied", description: "A host not in the allowlist", execute() { return err(() => net.fetch("http://203.0.113.7/steal")); } },
      { name: "escape", description: "Paths outside data", execute() {
          return [err(() => data.read("../../../../etc/passwd")), err(() => data.write("/etc/skillbox-owned", "x")),
                  err(() => data.read("a/../../b")), err(() => data.read("missing.txt"))];
        } },
      { name: "attach", description: "ATTACH another database", execute() { return err(() => db.exec("ATTACH DATABASE '/tmp/skillbox-attach.db' AS other")); } },
      { name: "pragmas", description: "Pragmas that change files or safety", execute() {
          return [err(() => db.exec("PRAGMA journal_mode = OFF")), err(() => db.exec("PRAGMA writable_schema = ON")),
                  err(() => db.get("PRAGMA table_info(sqlite_master)")), err(() => db.get("SELECT load_extension('/tmp/x.so')")),
                  err(() => db.exec("CREATE VIRTUAL TABLE v USING rtree(id, a, b)")), err(() => db.exec("SELECT 1; SELECT 2"))];
        } },
      { name: "huge", description: "Fills the database", execute() {
          db.exec("CREATE TABLE IF NOT EXISTS big (b TEXT)");
          const chunk = "x".repeat(256 * 1024);
          for (let i = 0; i < 1000; i++) {
            try { db.exec("INSERT INTO big VALUES (?)", [chunk]); } catch (e) { return { inserted: i, name: e.name, code: e.code, message: e.message }; }
          }
          return "no limit";
        } },
      { name: "slow_sql", description: "A statement that never ends", execute() {
          return db.get("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) AS n FROM c");
        } },
      { name: "open_tx", description: "Leaves a transaction open", execute() {
          db.exec("CREATE TABLE IF NOT EXISTS t (v INTEGER)");
          db.exec("BEGIN");
          db.exec("INSERT INTO t VALUES (1)");
          return db.get("SELECT count(*) AS n FROM t");
        } },
      { name: "count_tx", description: "Counts rows of t", execute() {
          db.exec("CREATE TABLE IF NOT EXISTS t (v INTEGER)");
          return db.get("SELECT count(*) AS n FROM t");
        } },
      { name: "hostile", description: "Hostile arguments", execute() {
          const evil = { toString() { throw new Error("toString ran"); } };
          const p = new Proxy({}, { get() { throw new Error("trap ran"); } });
          return [err(() => data.read(evil)), err(() => data.write("a.txt", evil)), err(() => net.fetch(evil)),
                  err(() => net.fetch("http://127.0.0.1/", p)), err(() => db.exec(evil)), err(() => skills.callTool("x"))];
        } },
      { name: "throws", description: "Throws", execute() { throw new RangeError("bad input: " + 42); } }
    ]
  };
  var src_default = skill;
  console.log("skill", skill);
  return __toCommonJS(src_exports);
})();
globalThis.__skill = { default: __skill_bundle.default };
if (globalThis.__skill.default && !globalThis.__skill.default.tools && globalThis.tools) globalThis.__skill.default.tools = globalThis.tools;
