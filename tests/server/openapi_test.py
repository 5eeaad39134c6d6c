#!/usr/bin/env python3
"""Checks a real `skillbox serve` on 127.0.0.1 against docs/openapi.yaml (ctest: server.openapi).

Every request below is answered by the server, and every answer must be one the spec documents for its
operation: the status is listed, X-Request-Id and the headers the response marks required are there, and
the body matches the schema of its Content-Type (validated with python3-jsonschema, JSON Schema 2020-12,
the dialect of OpenAPI 3.1; the spec keeps to the keywords draft 7 shares, see its header).

What is implemented but not documented fails too:
  - every route in the table at the top of server/api.h must be a documented operation;
  - a method that a documented path does not list must answer what its `x-other-methods` names (405);
  - the routes the issue plans (inline runs, uploads, bundle tools, ...) must answer 404 until documented;
  - every route the server's audit recorded for the requests below must be documented.
And every documented operation must be exercised by a case here, so that a new one gets a case.

  openapi_test.py --skillbox build/skillbox --repo .
"""
import argparse
import copy
import hashlib
import http.client
import io
import json
import os
import re
import select
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time

import jsonschema
import yaml

METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH"]
KEY_A = "openapi-tenant-a-key-0123456789"
KEY_BUSY = "openapi-tenant-busy-key-012345"
KEY_BUSY2 = "openapi-tenant-busy2-key-01234"
KEY_QUOTA = "openapi-tenant-quota-key-01234"
OPERATOR_KEY = "openapi-operator-key-012345678"
# Routes issue 27 plans and this server may not have yet: each answers 404 until the spec documents it
# (those documented already are checked against the spec like any other answer).
PLANNED = ["/v1/run", "/v1/skills/hello/tools", "/v1/skills/hello/tools/t/call", "/v1/skills/hello/hooks/h",
           "/v1/skills/hello/store", "/v1/skills/hello/workspace", "/v1/store", "/v1/workspace"]
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

failures = []


def fail(text):
    failures.append(text)
    print("FAIL: " + text, flush=True)


def sha256(text):
    return hashlib.sha256(text.encode()).hexdigest()


def inline_refs(node, root, seen=()):
    """`node` with every local $ref replaced by what it names (the spec has no recursive schema)."""
    if isinstance(node, list):
        return [inline_refs(n, root, seen) for n in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        ref = node["$ref"]
        if not ref.startswith("#/") or ref in seen:
            raise ValueError(f"unsupported or recursive $ref {ref}")
        target = root
        for part in ref[2:].split("/"):
            target = target[part]
        merged = dict(inline_refs(target, root, seen + (ref,)))
        merged.update({k: inline_refs(v, root, seen) for k, v in node.items() if k != "$ref"})
        return merged
    return {k: inline_refs(v, root, seen) for k, v in node.items()}


class Spec:
    def __init__(self, path):
        with open(path) as f:
            raw = yaml.safe_load(f)
        if not str(raw.get("openapi", "")).startswith("3.1"):
            raise SystemExit(f"{path}: expected OpenAPI 3.1")
        self.doc = inline_refs(raw, raw)
        self.paths = self.doc["paths"]
        self.exercised = set()

    def template_of(self, path):
        """The documented path template that `path` (no query) matches, or None."""
        for template in self.paths:
            pattern = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$"
            if re.match(pattern, path):
                return template
        return None

    def operations(self):
        for template, item in self.paths.items():
            for method in METHODS:
                if method.lower() in item:
                    yield template, method


def request(port, method, path, key=None, body=None, headers=None, conn=None):
    """One request on a new connection (or `conn`): (status, headers as a lower-case dict, body bytes)."""
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    h = dict(headers or {})
    if key:
        h["Authorization"] = "Bearer " + key
    data = body.encode() if isinstance(body, str) else body
    try:
        conn.request(method, path, body=data, headers=h)
        r = conn.getresponse()
        payload = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, payload
    finally:
        if own:
            conn.close()


def check_answer(spec, method, path, status, headers, body):
    """Fails unless the spec documents this answer; returns the parsed JSON body (or None)."""
    where = f"{method} {path} -> {status}"
    template = spec.template_of(path.split("?")[0])
    if template is None:
        if status != 404:
            fail(f"{where}: the path is not in docs/openapi.yaml, yet it answered {status} (document it)")
        return None
    item = spec.paths[template]
    op = item.get(method.lower())
    if op is None:
        response = item.get("x-other-methods")
        if response is None or status != 405:
            fail(f"{where}: {method} is not documented for {template}, yet it answered {status} "
                 f"(document the operation, or answer 405)")
            return None
    else:
        spec.exercised.add((template, method))
        response = op["responses"].get(str(status))
        if response is None:
            fail(f"{where}: status {status} is not documented for {method} {template} "
                 f"(documented: {', '.join(op['responses'])})")
            return None
    return check_response(where, response, headers, body)


def check_response(where, response, headers, body):
    if "x-request-id" not in headers:
        fail(f"{where}: no X-Request-Id header")
    for name, header in response.get("headers", {}).items():
        value = headers.get(name.lower())
        if value is None:
            if header.get("required"):
                fail(f"{where}: no {name} header, which the spec requires")
            continue
        errors = list(jsonschema.Draft202012Validator(header.get("schema", {})).iter_errors(value))
        if errors:
            fail(f"{where}: header {name}: {value!r}: {errors[0].message}")
    content = response.get("content")
    if not content:
        if body:
            fail(f"{where}: the spec documents no body, yet one came: {body[:200]!r}")
        return None
    media = headers.get("content-type", "").split(";")[0].strip()
    if media not in content:
        fail(f"{where}: Content-Type {media!r} is not documented (documented: {', '.join(content)})")
        return None
    schema = content[media].get("schema", {})
    try:
        instance = json.loads(body) if media == "application/json" else body.decode()
    except ValueError as e:
        fail(f"{where}: the body is not {media}: {e}: {body[:200]!r}")
        return None
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(instance), key=lambda e: list(e.path))
    for e in errors[:3]:
        fail(f"{where}: body at /{'/'.join(map(str, e.path))}: {e.message[:300]}")
    return instance if media == "application/json" else None


def call(spec, port, method, path, expect=None, **kw):
    status, headers, body = request(port, method, path, **kw)
    parsed = check_answer(spec, method, path, status, headers, body)
    if expect is not None and status != expect:
        fail(f"{method} {path}: expected {expect}, got {status}: {body[:300]!r}")
    return status, headers, parsed


def write(path, text, mode=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    if mode is not None:
        os.chmod(path, mode)


def skill(root, sid, js, manifest=None):
    m = {"id": sid, "entry": "index.js"}
    m.update(manifest or {})
    write(os.path.join(root, sid, "skill.json"), json.dumps(m))
    write(os.path.join(root, sid, "index.js"), js)


# A minimal OpenHuman bundle (docs/openhuman.md): one tool, one hook; `tools-broken` cannot list its tools.
TINY_BUNDLE = """globalThis.__skill = { default: {
  tools: [{ name: "echo", description: "Echoes its arguments", input_schema: { type: "object" },
            execute(args) { return { echoed: args }; } }],
  onPing(input) { return { pong: input }; },
} };"""


def bundle(root, bid, js):
    write(os.path.join(root, bid, "manifest.json"),
          json.dumps({"id": bid, "name": bid, "version": "1.0.0", "runtime": "quickjs", "entry": "index.js"}))
    write(os.path.join(root, bid, "index.js"), js)


def make_config(tmp):
    for tenant in ["a", "busy", "busy2", "quota"]:
        root = os.path.join(tmp, "skills-" + tenant)
        skill(root, "hello", "export default (input) => { console.log('hi'); return `hello ${input?.name ?? 'world'}` }")
        skill(root, "thrower", "export default () => { throw new TypeError('no') }")
        skill(root, "slow", "export default () => new Promise((r) => setTimeout(() => r('done'), 4000))")
        write(os.path.join(root, "broken", "skill.json"), "{not json")
        bundle(root, "tiny", TINY_BUNDLE)
        bundle(root, "tools-broken", "throw new Error('no tools today')")
    tenants = ""
    code = "[tenants.a.code]\nallow_upload = true\nallow_inline = true\nmax_files = 4\n"
    for tenant, key, extra in [("a", KEY_A, code),
                               ("busy", KEY_BUSY, "max_concurrent_runs = 1\nmax_queued_runs = 0\n"),
                               ("busy2", KEY_BUSY2, ""), ("quota", KEY_QUOTA, "runs_per_minute = 1\n")]:
        # `extra` last: a [tenants.NAME.code] table ends the tenant's own keys.
        tenants += (f'[tenants.{tenant}]\nkey_sha256 = ["{sha256(key)}"]\nskills = "skills-{tenant}"\n'
                    f'data_dir = "data-{tenant}"\n{extra}')
    write(os.path.join(tmp, "serve.toml"),
          f'listen = ["127.0.0.1:0"]\nrun_threads = 2\nqueue_limit = 0\naudit = "audit.jsonl"\n'
          f'max_body_bytes = 65536\nmax_header_bytes = 4096\nmax_target_bytes = 512\n'
          f'metrics_key_sha256 = ["{sha256(OPERATOR_KEY)}"]\n{tenants}')


def start_server(skillbox, tmp):
    err = open(os.path.join(tmp, "serve.err"), "w")
    proc = subprocess.Popen([skillbox, "serve", "--config", os.path.join(tmp, "serve.toml")],
                            stdout=subprocess.PIPE, stderr=err, text=True)
    deadline = time.time() + 30
    while time.time() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 1)
        if ready:
            line = proc.stdout.readline()
            if line.startswith("url: http://127.0.0.1:"):
                return proc, int(line.strip().rsplit(":", 1)[1])
            if not line:
                break
    proc.kill()
    raise SystemExit("skillbox serve did not print its url; stderr:\n" + open(os.path.join(tmp, "serve.err")).read())


def check_api_header(spec, repo):
    """Every route of the table at the top of server/api.h is a documented operation."""
    with open(os.path.join(repo, "server", "api.h")) as f:
        for line in f:
            m = re.match(r"^//\s+((?:GET|POST|PUT|DELETE|PATCH)(?:\|(?:GET|POST|PUT|DELETE|PATCH))*)\s+(/\S*)", line)
            if not m:
                continue
            for method in m.group(1).split("|"):
                template = spec.template_of(m.group(2).replace("{", "x").replace("}", "x"))
                if template is None or method.lower() not in spec.paths[template]:
                    fail(f"server/api.h lists {method} {m.group(2)}, which docs/openapi.yaml does not document")


def probes_and_errors(spec, port):
    call(spec, port, "GET", "/healthz", 200)
    call(spec, port, "GET", "/readyz", 200)
    call(spec, port, "GET", "/metrics", 200, key=OPERATOR_KEY)
    call(spec, port, "GET", "/metrics", 403, key=KEY_A)
    call(spec, port, "GET", "/metrics", 401)
    call(spec, port, "GET", "/v1/skills", 401)
    call(spec, port, "GET", "/v1/skills", 401, key="not-a-key-of-anybody-at-all")
    call(spec, port, "GET", "/v1/skills/" + "x" * 600, 414, key=KEY_A)
    call(spec, port, "GET", "/v1/skills", 431, key=KEY_A, headers={"X-Filler": "f" * 5000})
    call(spec, port, "POST", "/v1/skills/hello/run", 413, key=KEY_A, body="{" + " " * 70000 + "}")
    call(spec, port, "GET", "/v1/nothing-here", 404, key=KEY_A)


def skills_routes(spec, port):
    _, _, listing = call(spec, port, "GET", "/v1/skills", 200, key=KEY_A)
    if listing and not any("error" in s for s in listing.get("skills", [])):
        fail("GET /v1/skills: the broken skill is not listed with an error")
    call(spec, port, "GET", "/v1/skills/hello", 200, key=KEY_A)
    call(spec, port, "GET", "/v1/skills/nope", 404, key=KEY_A)
    call(spec, port, "GET", "/v1/skills/broken", 422, key=KEY_A)
    call(spec, port, "GET", "/v1/skills/UPPER", 400, key=KEY_A)
    run = "/v1/skills/{}/run"
    _, _, ok = call(spec, port, "POST", run.format("hello"), 200, key=KEY_A, body='{"input": {"name": "Ada"}}')
    if ok and (ok.get("outcome"), ok.get("value")) != ("ok", "hello Ada"):
        fail(f"POST /v1/skills/hello/run: unexpected result {ok}")
    call(spec, port, "POST", run.format("hello"), 400, key=KEY_A)  # no body: not a JSON object
    _, _, thrown = call(spec, port, "POST", run.format("thrower"), 200, key=KEY_A, body="{}")
    if thrown and thrown.get("outcome") != "error":
        fail(f"POST /v1/skills/thrower/run: expected outcome error, got {thrown}")
    call(spec, port, "POST", run.format("hello"), 200, key=KEY_A, body='{"export": "missing"}')
    call(spec, port, "POST", run.format("hello"), 400, key=KEY_A, body='{"export": 3}')
    call(spec, port, "POST", run.format("hello"), 400, key=KEY_A, body='{"unknown": 1}')
    call(spec, port, "POST", run.format("hello"), 400, key=KEY_A, body='{"limits": {"timeout_ms": 999999999}}')
    call(spec, port, "POST", run.format("hello"), 400, key=KEY_A, body="not json")
    call(spec, port, "POST", run.format("%2e%2e"), 400, key=KEY_A, body="{}")
    call(spec, port, "POST", run.format("nope"), 404, key=KEY_A, body="{}")
    call(spec, port, "POST", run.format("broken"), 422, key=KEY_A, body="{}")
    # Async: 202 with the record, the same run for the same key, 422 for the key with another body.
    key = {"Idempotency-Key": "openapi-1"}
    _, headers, queued = call(spec, port, "POST", run.format("hello") + "?async=true", 202, key=KEY_A,
                              body='{"input": {"name": "Ada"}}', headers=key)
    rid = queued["id"] if queued else "run_" + "0" * 32
    _, _, again = call(spec, port, "POST", run.format("hello") + "?async=true", 202, key=KEY_A,
                       body='{"input": {"name": "Ada"}}', headers=key)
    if again and again.get("id") != rid:
        fail(f"POST ?async=true twice with one Idempotency-Key: two runs {rid} and {again.get('id')}")
    call(spec, port, "POST", run.format("hello") + "?async=true", 422, key=KEY_A, body='{"input": 1}', headers=key)
    call(spec, port, "POST", run.format("hello") + "?async=maybe", 400, key=KEY_A, body="{}")
    call(spec, port, "POST", run.format("hello") + "?async=true", 400, key=KEY_A, body="{}",
         headers={"Idempotency-Key": "x" * 256})
    for _ in range(300):
        _, _, record = call(spec, port, "GET", "/v1/runs/" + rid, 200, key=KEY_A)
        if not record or record.get("state") in ("completed", "failed", "dead"):
            break
        time.sleep(0.02)
    if record and (record.get("state"), record.get("result", {}).get("value")) != ("completed", "hello Ada"):
        fail(f"GET /v1/runs/{rid}: expected a completed run with value 'hello Ada', got {record}")
    call(spec, port, "GET", "/v1/runs/run_" + "0" * 32, 404, key=KEY_A)
    # A synchronous run with a key: run once, then its answer replayed.
    sync_key = {"Idempotency-Key": "openapi-sync"}
    _, _, ran = call(spec, port, "POST", run.format("hello"), 200, key=KEY_A, body='{"input": {"name": "Bo"}}',
                     headers=sync_key)
    _, replayed_headers, replayed = call(spec, port, "POST", run.format("hello"), 200, key=KEY_A,
                                         body='{"input": {"name": "Bo"}}', headers=sync_key)
    if replayed_headers.get("idempotent-replayed") != "true" or (replayed or {}).get("value") != (ran or {}).get("value"):
        fail(f"POST /v1/skills/hello/run twice with one Idempotency-Key: not replayed ({replayed_headers}, {replayed})")
    call(spec, port, "GET", "/v1/runs/" + rid, 401)
    call(spec, port, "POST", "/v1/runs/" + rid, 405, key=KEY_A, body="{}")


def mcp_routes(spec, port):
    def rpc(body, expect, session=None, headers=None):
        h = dict(MCP_HEADERS)
        h.update(headers or {})
        if session:
            h["Mcp-Session-Id"] = session
        return call(spec, port, "POST", "/mcp", expect, key=KEY_A, body=json.dumps(body), headers=h)

    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    _, headers, _ = rpc(init, 200)
    session = headers.get("mcp-session-id")
    if not session:
        fail("POST /mcp initialize: no Mcp-Session-Id")
        return
    rpc({"jsonrpc": "2.0", "method": "notifications/initialized"}, 202, session)
    rpc({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, 200, session)
    rpc({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "hello", "arguments": {"name": "Ada"}}},
        200, session)
    rpc({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}, 400)  # no session
    rpc({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}, 404, "0" * 48)
    rpc(init, 406, headers={"Accept": "text/html"})
    rpc(init, 415, headers={"Content-Type": "text/plain"})
    rpc(init, 403, headers={"Origin": "http://evil.example"})
    call(spec, port, "POST", "/mcp", 401, body=json.dumps(init), headers=MCP_HEADERS)
    mcp_stream(spec, port, session)
    call(spec, port, "DELETE", "/mcp", 204, key=KEY_A, headers={"Mcp-Session-Id": session})
    call(spec, port, "DELETE", "/mcp", 404, key=KEY_A, headers={"Mcp-Session-Id": session})
    call(spec, port, "DELETE", "/mcp", 400, key=KEY_A)


def mcp_stream(spec, port, session):
    """GET /mcp: the session's own event stream, one at a time; the refusals before it opens."""
    sse = {"Accept": "text/event-stream"}
    call(spec, port, "GET", "/mcp", 406, key=KEY_A, headers={"Mcp-Session-Id": session})
    call(spec, port, "GET", "/mcp", 400, key=KEY_A, headers=sse)
    call(spec, port, "GET", "/mcp", 404, key=KEY_A, headers=dict(sse, **{"Mcp-Session-Id": "0" * 48}))
    call(spec, port, "GET", "/mcp", 401, headers=dict(sse, **{"Mcp-Session-Id": session}))
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("GET", "/mcp", headers=dict(sse, **{"Mcp-Session-Id": session, "Authorization": "Bearer " + KEY_A}))
        r = conn.getresponse()  # the head only: the stream stays open
        headers = {k.lower(): v for k, v in r.getheaders()}
        check_answer(spec, "GET", "/mcp", r.status, headers, b"")
        if r.status != 200:
            fail(f"GET /mcp with a session: expected 200, got {r.status}")
        first = r.fp.readline()  # the chunk size line, then the stream's first comment
        first += r.fp.readline()
        if b": skillbox" not in first:
            fail(f"GET /mcp: the stream did not start with its comment: {first!r}")
        call(spec, port, "GET", "/mcp", 409, key=KEY_A, headers=dict(sse, **{"Mcp-Session-Id": session}))
    finally:
        conn.close()


def code_routes(spec, port):
    """Uploads (JSON and tar), inline runs, and their refusals."""
    greet = {"skill.json": json.dumps({"id": "greet", "entry": "index.js", "permissions": {"fs": {"mode": "readwrite"}}}),
             "index.js": "export default async (i) => { store.set('last', i); "
                         "await openhuman.fs.writeFile('greeting.txt', `Hello, ${i.name}!`); return `Hello, ${i.name}!`; }"}
    put = lambda sid, body, expect, key=KEY_A, ctype="application/json": call(
        spec, port, "PUT", "/v1/skills/" + sid, expect, key=key, body=body, headers={"Content-Type": ctype})
    _, _, made = put("greet", json.dumps({"files": greet}), 201)
    _, _, same = put("greet", json.dumps({"files": greet}), 200)
    if made and same and (made.get("created"), same.get("created"), made.get("digest")) != (True, False, same["digest"]):
        fail(f"PUT /v1/skills/greet twice: expected created true then false, one digest: {made} {same}")
    tar = io.BytesIO()
    with tarfile.open(fileobj=tar, mode="w", format=tarfile.USTAR_FORMAT) as t:
        for name, text in greet.items():
            info = tarfile.TarInfo("./" + name)
            info.size = len(text.encode())
            t.addfile(info, io.BytesIO(text.encode()))
    _, _, tarred = put("greet", tar.getvalue(), 200, ctype="application/x-tar")
    if made and tarred and tarred.get("digest") != made.get("digest"):
        fail(f"the tar of the same files has another digest: {tarred} vs {made}")
    _, _, detail = call(spec, port, "GET", "/v1/skills/greet", 200, key=KEY_A)
    if detail and (detail.get("source"), detail.get("digest")) != ("upload", made and made.get("digest")):
        fail(f"GET /v1/skills/greet: expected the upload's source and digest, got {detail}")
    manifest = lambda sid, extra=None: json.dumps(dict({"id": sid, "entry": "index.js"}, **(extra or {})))
    one = lambda m: json.dumps({"files": {"skill.json": m, "index.js": "export default () => 1"}})
    put("hello", one(manifest("hello")), 409)
    put("greet", json.dumps({"files": greet}), 403, key=KEY_BUSY2)
    put("UPPER", one(manifest("UPPER")), 400)
    put("greet", '{"file": {}}', 400)
    put("greet", json.dumps({"files": {"../skill.json": "{}"}}), 400)
    put("greet", json.dumps({"files": {f"f{i}.js": "" for i in range(5)}}), 413)
    put("greet", one(manifest("greet")), 415, ctype="text/plain")
    put("greet", one(manifest("other")), 422)
    put("greet", json.dumps({"files": {"skill.json": manifest("greet")}}), 422)  # no entry file
    put("greet", one(manifest("greet", {"permissions": {"http": {"allow": ["http://10.0.0.1/"],
                                                                 "allow_private_addresses": True}}})), 422)
    inline = {"manifest": {"id": "adder", "entry": "index.js"}, "files": {"index.js": "export default (i) => i.a + i.b"},
              "input": {"a": 1, "b": 2}}
    _, _, added = call(spec, port, "POST", "/v1/run", 200, key=KEY_A, body=json.dumps(inline))
    if added and (added.get("outcome"), added.get("value")) != ("ok", 3):
        fail(f"POST /v1/run: expected 3, got {added}")
    call(spec, port, "POST", "/v1/run", 403, key=KEY_BUSY2, body=json.dumps(inline))
    call(spec, port, "POST", "/v1/run", 400, key=KEY_A, body='{"manifest": {"id": "x", "entry": "index.js"}}')
    call(spec, port, "POST", "/v1/run", 413, key=KEY_A,
         body=json.dumps({"files": {f"f{i}.js": "" for i in range(5)}}))
    call(spec, port, "POST", "/v1/run", 422, key=KEY_A, body=json.dumps(dict(inline, files={"other.js": ""})))
    call(spec, port, "GET", "/v1/run", 405, key=KEY_A)
    put("dropme", one(manifest("dropme")), 201)
    call(spec, port, "DELETE", "/v1/skills/dropme", 204, key=KEY_A)
    call(spec, port, "DELETE", "/v1/skills/dropme", 404, key=KEY_A)
    call(spec, port, "DELETE", "/v1/skills/hello", 409, key=KEY_A)
    call(spec, port, "DELETE", "/v1/skills/greet", 403, key=KEY_BUSY2)
    call(spec, port, "DELETE", "/v1/skills/UPPER", 400, key=KEY_A)
    return made


def data_routes(spec, port, tmp):
    """The store and workspace of `greet` (uploaded by code_routes) after one run, read-only."""
    call(spec, port, "POST", "/v1/skills/greet/run", 200, key=KEY_A, body='{"input": {"name": "Ada"}}')
    base = "/v1/skills/greet/"
    _, _, keys = call(spec, port, "GET", base + "store?limit=100", 200, key=KEY_A)
    if keys and keys.get("keys") != ["last"]:
        fail(f"GET {base}store: expected the key last, got {keys}")
    _, _, value = call(spec, port, "GET", base + "store/last", 200, key=KEY_A)
    if value and value.get("value") != {"name": "Ada"}:
        fail(f"GET {base}store/last: expected the run's input, got {value}")
    call(spec, port, "GET", base + "store?limit=0", 400, key=KEY_A)
    call(spec, port, "GET", base + "store/%FF", 400, key=KEY_A)
    call(spec, port, "GET", base + "store/missing", 404, key=KEY_A)
    call(spec, port, "GET", "/v1/skills/nope/store", 404, key=KEY_A)
    call(spec, port, "GET", "/v1/skills/broken/store", 422, key=KEY_A)
    call(spec, port, "GET", "/v1/skills/broken/store/k", 422, key=KEY_A)
    call(spec, port, "GET", "/v1/skills/UPPER/store/k", 400, key=KEY_A)
    _, _, top = call(spec, port, "GET", base + "workspace", 200, key=KEY_A)
    if top and {"name": "greeting.txt", "type": "file"} not in top.get("entries", []):
        fail(f"GET {base}workspace: greeting.txt is not listed: {top}")
    status, headers, body = request(port, "GET", base + "workspace/greeting.txt", key=KEY_A)
    check_answer(spec, "GET", base + "workspace/greeting.txt", status, headers, body)
    if (status, body) != (200, b"Hello, Ada!"):
        fail(f"GET {base}workspace/greeting.txt: expected 200 Hello, Ada!, got {status} {body[:200]!r}")
    call(spec, port, "GET", base + "workspace/nope.txt", 404, key=KEY_A)
    call(spec, port, "GET", base + "workspace/%2e%2e", 400, key=KEY_A)
    call(spec, port, "GET", "/v1/skills/broken/workspace", 422, key=KEY_A)
    call(spec, port, "GET", "/v1/skills/nope/workspace", 404, key=KEY_A)
    folder = None
    for root, _, files in os.walk(os.path.join(tmp, "data-a")):
        if "greeting.txt" in files:
            folder = root
    if folder is None:
        fail("the run's greeting.txt is nowhere under the tenant's data directory")
        return
    os.symlink("/etc/passwd", os.path.join(folder, "link"))
    call(spec, port, "GET", base + "workspace/link", 403, key=KEY_A)
    with open(os.path.join(folder, "big.bin"), "wb") as f:
        f.truncate(17 << 20)  # sparse: above the 16 MiB a read may return
    call(spec, port, "GET", base + "workspace/big.bin", 422, key=KEY_A)


def bundle_routes(spec, port):
    _, _, tools = call(spec, port, "GET", "/v1/skills/tiny/tools", 200, key=KEY_A)
    if tools and [t.get("name") for t in tools.get("tools", [])] != ["echo"]:
        fail(f"GET /v1/skills/tiny/tools: expected the tool echo, got {tools}")
    call(spec, port, "GET", "/v1/skills/hello/tools", 422, key=KEY_A)
    call(spec, port, "GET", "/v1/skills/tools-broken/tools", 422, key=KEY_A)
    call(spec, port, "GET", "/v1/skills/nope/tools", 404, key=KEY_A)
    _, _, echoed = call(spec, port, "POST", "/v1/skills/tiny/tools/echo/call", 200, key=KEY_A,
                        body='{"arguments": {"q": 1}}')
    if echoed and echoed.get("outcome") != "ok":
        fail(f"POST /v1/skills/tiny/tools/echo/call: expected outcome ok, got {echoed}")
    call(spec, port, "POST", "/v1/skills/tiny/tools/missing/call", 200, key=KEY_A, body="{}")
    call(spec, port, "POST", "/v1/skills/tiny/tools/no!pe/call", 400, key=KEY_A, body="{}")
    call(spec, port, "POST", "/v1/skills/tiny/tools/echo/call", 400, key=KEY_A, body='{"arguments": 3}')
    call(spec, port, "POST", "/v1/skills/hello/tools/echo/call", 422, key=KEY_A, body="{}")
    call(spec, port, "POST", "/v1/skills/nope/tools/echo/call", 404, key=KEY_A, body="{}")
    _, _, pong = call(spec, port, "POST", "/v1/skills/tiny/hooks/onPing", 200, key=KEY_A, body='{"input": 7}')
    if pong and pong.get("outcome") != "ok":
        fail(f"POST /v1/skills/tiny/hooks/onPing: expected outcome ok, got {pong}")
    call(spec, port, "POST", "/v1/skills/tiny/hooks/no!pe", 400, key=KEY_A, body="{}")
    call(spec, port, "POST", "/v1/skills/hello/hooks/onPing", 422, key=KEY_A, body="{}")
    call(spec, port, "POST", "/v1/skills/nope/hooks/onPing", 404, key=KEY_A, body="{}")


def run_variants(spec, port):
    """Narrowing, the NDJSON stream, and the per-minute quota."""
    run = "/v1/skills/hello/run"
    call(spec, port, "POST", run, 200, key=KEY_A,
         body='{"input": {"name": "Ada"}, "narrowing": {"deny_net": true, "fs_mode": "none", "deny_env": true}}')
    call(spec, port, "POST", run, 400, key=KEY_A, body='{"narrowing": {"fs_mode": "all"}}')
    status, headers, body = request(port, "POST", run, key=KEY_A, body='{"input": {"name": "Ada"}}',
                                    headers={"Accept": "application/x-ndjson"})
    check_answer(spec, "POST", run, status, headers, body)
    lines = [json.loads(line) for line in body.decode().splitlines() if line]
    if status != 200 or not lines or lines[-1].get("type") != "result" or lines[-1].get("value") != "hello Ada":
        fail(f"POST {run} as NDJSON: expected lines ending in the result, got {status} {body[:300]!r}")
    if not any(line.get("type") == "log" for line in lines):
        fail(f"POST {run} as NDJSON: the run's log line is not among the lines: {body[:300]!r}")
    call(spec, port, "POST", run, 200, key=KEY_QUOTA, body="{}")
    _, headers, refused = call(spec, port, "POST", run, 429, key=KEY_QUOTA, body="{}")
    if refused and refused["error"]["code"] != "quota_exceeded":
        fail(f"the second run of a tenant with runs_per_minute = 1: expected quota_exceeded, got {refused}")


def undocumented_routes(spec, port):
    names = {"{id}": "hello", "{tool}": "t", "{hook}": "h", "{key}": "k", "{path}": "p"}
    for template, item in spec.paths.items():
        path = template
        for name, value in names.items():
            path = path.replace(name, value)
        for method in METHODS:
            if method.lower() not in item:
                call(spec, port, method, path, key=KEY_A, body="{}" if method != "GET" else None,
                     headers=MCP_HEADERS if template == "/mcp" else None)
    for path in PLANNED:
        if spec.template_of(path) is None:
            for method in ["GET", "POST", "PUT"]:
                call(spec, port, method, path, 404, key=KEY_A, body="{}" if method != "GET" else None)


def wait_in_flight(port, tenant, n):
    deadline = time.time() + 30
    while time.time() < deadline:
        _, _, body = request(port, "GET", "/metrics", key=OPERATOR_KEY)
        if f'skillbox_runs_in_flight{{tenant="{tenant}"}} {n}' in body.decode():
            return True
        time.sleep(0.05)
    fail(f"tenant {tenant}'s run never started")
    return False


def saturation_and_drain(spec, port, proc):
    """Both run threads busy: the tenant at its bound gets 429, another tenant 503; then SIGTERM."""
    slow = []
    for key, tenant in [(KEY_BUSY, "busy"), (KEY_BUSY2, "busy2")]:
        t = threading.Thread(target=lambda k=key: slow.append(
            call(spec, port, "POST", "/v1/skills/slow/run", 200, key=k, body="{}")))
        t.start()
        slow.append(t)
        wait_in_flight(port, tenant, 1)
    call(spec, port, "POST", "/v1/skills/hello/run", 429, key=KEY_BUSY, body="{}")
    call(spec, port, "GET", "/v1/skills", 503, key=KEY_A)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    request(port, "GET", "/healthz", conn=conn)  # a connection open before the signal
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    status, headers, body = request(port, "GET", "/readyz", conn=conn)
    check_answer(spec, "GET", "/readyz", status, headers, body)
    if status != 503:
        fail(f"GET /readyz while draining: expected 503, got {status}")
    conn.close()
    for t in [x for x in slow if isinstance(x, threading.Thread)]:
        t.join(60)


def check_audit(spec, tmp):
    with open(os.path.join(tmp, "audit.jsonl")) as f:
        for line in f:
            entry = json.loads(line)
            route = entry.get("route")
            if not route:
                continue
            method, _, path = route.rpartition(" ") if " " in route else (entry["method"], "", route)
            item = spec.paths.get(path)
            if item is None or (method.lower() not in item and entry["status"] != 405):
                fail(f"the server served {method} {path} (audit), which docs/openapi.yaml does not document")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--skillbox", required=True)
    ap.add_argument("--repo", required=True)
    args = ap.parse_args()
    spec = Spec(os.path.join(args.repo, "docs", "openapi.yaml"))
    check_api_header(spec, args.repo)
    with tempfile.TemporaryDirectory() as tmp:
        make_config(tmp)
        proc, port = start_server(args.skillbox, tmp)
        try:
            probes_and_errors(spec, port)
            skills_routes(spec, port)
            mcp_routes(spec, port)
            code_routes(spec, port)
            data_routes(spec, port, tmp)
            bundle_routes(spec, port)
            run_variants(spec, port)
            undocumented_routes(spec, port)
            saturation_and_drain(spec, port, proc)
            if proc.wait(60) != 0:
                fail(f"skillbox serve exited {proc.returncode} after SIGTERM")
        finally:
            if proc.poll() is None:
                proc.kill()
        check_audit(spec, tmp)
    for template, method in spec.operations():
        if (template, method) not in spec.exercised:
            fail(f"{method} {template} is documented but no case of openapi_test.py exercises it: add one")
    if failures:
        print(f"{len(failures)} problems", file=sys.stderr)
        return 1
    print(f"ok: {len(spec.exercised)} operations checked against docs/openapi.yaml")
    return 0


if __name__ == "__main__":
    sys.exit(main())
