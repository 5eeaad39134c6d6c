// misbehave: a looping tool, a denied request, paths outside data, ATTACH, pragmas, a huge insert, a
// statement that never ends, an open transaction, hostile arguments, a tool that throws.
import "../../shared/buffer";

type Outcome = { ok: unknown } | { name: string; code: string; message: string };

function err(fn: () => unknown): Outcome {
  try {
    return { ok: fn() };
  } catch (e) {
    const x = e as { name: string; code: string; message: string };
    return { name: x.name, code: x.code, message: x.message };
  }
}

// Values that run code when the host converts them: the host must check types before converting.
const evil: any = {
  toString() {
    throw new Error("toString ran");
  },
};

const skill: Skill = {
  tools: [
    {
      name: "spin",
      description: "Loops forever",
      execute() {
        for (;;) {
          // never returns
        }
      },
    },
    {
      name: "denied",
      description: "A host not in the allowlist",
      execute() {
        return err(() => net.fetch("http://203.0.113.7/steal"));
      },
    },
    {
      name: "escape",
      description: "Paths outside data",
      execute() {
        return [
          err(() => data.read("../../../../etc/passwd")),
          err(() => data.write("/etc/skillbox-owned", "x")),
          err(() => data.read("a/../../b")),
          err(() => data.read("missing.txt")),
        ];
      },
    },
    {
      name: "attach",
      description: "ATTACH another database",
      execute() {
        return err(() => db.exec("ATTACH DATABASE '/tmp/skillbox-attach.db' AS other"));
      },
    },
    {
      name: "pragmas",
      description: "Pragmas that change files or safety",
      execute() {
        return [
          err(() => db.exec("PRAGMA journal_mode = OFF")),
          err(() => db.exec("PRAGMA writable_schema = ON")),
          err(() => db.get("PRAGMA table_info(sqlite_master)")),
          err(() => db.get("SELECT load_extension('/tmp/x.so')")),
          err(() => db.exec("CREATE VIRTUAL TABLE v USING rtree(id, a, b)")),
          err(() => db.exec("SELECT 1; SELECT 2")),
        ];
      },
    },
    {
      name: "huge",
      description: "Fills the database",
      execute() {
        db.exec("CREATE TABLE IF NOT EXISTS big (b TEXT)");
        const chunk = "x".repeat(256 * 1024);
        for (let i = 0; i < 1000; i++) {
          try {
            db.exec("INSERT INTO big VALUES (?)", [chunk]);
          } catch (e) {
            const x = e as { name: string; code: string; message: string };
            return { inserted: i, name: x.name, code: x.code, message: x.message };
          }
        }
        return "no limit";
      },
    },
    {
      name: "slow_sql",
      description: "A statement that never ends",
      execute() {
        return db.get("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) AS n FROM c");
      },
    },
    {
      name: "open_tx",
      description: "Leaves a transaction open",
      execute() {
        db.exec("CREATE TABLE IF NOT EXISTS t (v INTEGER)");
        db.exec("BEGIN");
        db.exec("INSERT INTO t VALUES (1)");
        return db.get("SELECT count(*) AS n FROM t");
      },
    },
    {
      name: "count_tx",
      description: "Counts rows of t",
      execute() {
        db.exec("CREATE TABLE IF NOT EXISTS t (v INTEGER)");
        return db.get("SELECT count(*) AS n FROM t");
      },
    },
    {
      name: "hostile",
      description: "Hostile arguments",
      execute() {
        const trap: any = new Proxy(
          {},
          {
            get() {
              throw new Error("trap ran");
            },
          },
        );
        return [
          err(() => data.read(evil)),
          err(() => data.write("a.txt", evil)),
          err(() => net.fetch(evil)),
          err(() => net.fetch("http://127.0.0.1/", trap)),
          err(() => db.exec(evil)),
          err(() => skills.callTool("x", "y")),
        ];
      },
    },
    {
      name: "throws",
      description: "Throws",
      execute() {
        throw new RangeError("bad input: " + 42);
      },
    },
  ],
};

export default skill;
console.log("skill", skill);
