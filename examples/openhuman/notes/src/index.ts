// notes: a local server through synchronous net.fetch and through fetch; the skill's database with
// a transaction across the calls of one invocation; state, db.kv and data across invocations; events.
import "../../shared/buffer";

let pending: number | null = null;

function ensureSchema(): void {
  db.exec("CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL, meta TEXT)");
}

const tools: ToolDefinition[] = [
  {
    name: "add_note",
    description: "Adds a note inside an open transaction (commit with commit_notes)",
    input_schema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
    execute(args: { title: string }) {
      ensureSchema();
      if (pending === null) {
        db.exec("BEGIN");
        pending = 0;
      }
      pending++;
      return db.exec("INSERT INTO notes (title, meta) VALUES (?, ?)", [args.title, { tags: ["new"], n: pending }]);
    },
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
    },
  },
  {
    name: "list_notes",
    description: "Lists the notes",
    execute() {
      ensureSchema();
      return db.all("SELECT id, title, meta FROM notes ORDER BY id");
    },
  },
  {
    name: "fetch_title",
    description: "Fetches a title synchronously with net.fetch and stores it",
    execute(args: { url: string }) {
      const r = net.fetch(args.url, { method: "GET", headers: { "X-Notes": "1" }, timeout: 10 });
      state.set("last_status", r.status);
      state.setPartial({ last_url: args.url, last_length: r.body.length });
      data.write("last.txt", r.body);
      return { status: r.status, type: r.headers["content-type"], body: r.body };
    },
  },
  {
    name: "fetch_async",
    description: "Fetches JSON with fetch()",
    async execute(args: { url: string }) {
      const r = await fetch(args.url, { method: "POST", body: { hello: "world" } });
      const j = await r.json();
      return { ok: r.ok, status: r.status, type: r.headers.get("Content-Type"), echoed: j };
    },
  },
  {
    name: "remember",
    description: "Reads what earlier invocations left in state, db.kv and data",
    execute() {
      let file: string | null = null;
      try {
        file = data.read("last.txt");
      } catch (e) {
        const err = e as { name: string; code: string };
        file = err.name + ": " + err.code;
      }
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
        same: self === globalThis && window === globalThis && global === globalThis,
      };
    },
  },
  {
    name: "bump",
    description: "Counts calls in db.kv and notifies",
    execute() {
      const n = ((db.kvGet("counter") as number | null) || 0) + 1;
      db.kvSet("counter", n);
      platform.notify("Counter", "now " + n);
      memory.insert({ title: "count", content: String(n), sourceType: "skill", metadata: { n }, priority: 1 });
      cron.register("nightly", "0 3 * * *");
      cron.register("hourly", "0 * * * *");
      return n;
    },
  },
  {
    name: "codec",
    description: "OpenHuman base64 and text codecs",
    execute(args: { text: string }) {
      const b = btoa(args.text);
      return { b64: b, back: atob(b), bytes: new TextEncoder().encode(args.text).length, buffer: typeof (globalThis as any).Buffer };
    },
  },
];

interface NotesSkill extends Skill {
  started?: StartArgs;
  region?: string;
}

const skill: NotesSkill = {
  tools,
  init() {
    const g = globalThis as any;
    g.__initCount = (g.__initCount || 0) + 1;
  },
  start(this: NotesSkill, ctx: StartArgs) {
    this.started = ctx;
  },
  stop() {
    console.info("stopping notes");
  },
  onSetupStart() {
    return { step: "region", fields: ["region"] };
  },
  onSetupSubmit(this: NotesSkill, input: { stepId: string; values: { region?: string } }) {
    if (input.stepId === "region") {
      this.region = input.values.region;
      return { next: "confirm" };
    }
    state.set("region", this.region);
    return { done: true, region: this.region };
  },
  onRpc(input: { method: string; params: unknown }) {
    return { method: input.method, params: input.params, inits: (globalThis as any).__initCount };
  },
  onListOptions() {
    return [{ name: "verbose", value: state.get("verbose") }];
  },
};

// A hook on globalThis, called with this = the skill.
(globalThis as any).onSetOption = function (this: unknown, option: { name: string; value: unknown }) {
  state.set(option.name, option.value);
  return this === skill;
};

export default skill;
