// tests/mcp/node/sdk_client.test.mjs — `skillbox mcp` as the official TypeScript SDK's Client sees it
// (@modelcontextprotocol/sdk, pinned in package-lock.json), over the SDK's StdioClientTransport: the
// example skills and bundles listed and called, a secret injected at egress, progress and log
// notifications, a cancelled call. Run by ctest (mcp.sdk_client); loopback only.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import {
  bundleCopy,
  connect,
  loopbackServer,
  sourceDir,
  tempDir,
  textOf,
  types,
  waitFor,
  writeSkill,
} from './support.mjs';

const examples = path.join(sourceDir, 'examples', 'skills');

test('lists and calls the example skills and an OpenHuman bundle', async () => {
  const root = tempDir('examples');
  // weather's API on a loopback server this test starts; its skill.json is the example's with that origin.
  const api = await loopbackServer((req) => ({
    body: JSON.stringify({
      city: new URL(req.url, 'http://x').searchParams.get('city'),
      current: { temperature_c: 21, conditions: 'sunny', wind_kph: 5 },
      forecast: [],
    }),
  }));
  const weather = path.join(root, 'weather');
  fs.cpSync(path.join(examples, 'weather'), weather, { recursive: true });
  const manifest = JSON.parse(fs.readFileSync(path.join(weather, 'skill.json'), 'utf8'));
  manifest.permissions.http.allow = [`${api.origin}/v1/`];
  fs.writeFileSync(path.join(weather, 'skill.json'), JSON.stringify(manifest));
  const notes = bundleCopy('notes', { permissions: { fs: { mode: 'readwrite' } } }, root);

  const { client } = await connect([
    path.join(examples, 'hello'),
    path.join(examples, 'runaway'),
    weather,
    notes,
    '--data-dir',
    path.join(root, 'data'),
  ]);
  try {
    assert.equal(client.getServerVersion().name, 'skillbox');
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const name of ['hello', 'runaway', 'weather', 'notes__add_note', 'notes__codec', 'notes__bump'])
      assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    assert.equal(byName.hello.inputSchema.type, 'object');
    assert.equal(byName.weather.annotations.openWorldHint, true);
    assert.equal(byName.hello.annotations.readOnlyHint, true);
    assert.equal(byName.notes__add_note.annotations.destructiveHint, true);
    assert.deepEqual(byName.notes__add_note.inputSchema.required, ['title']);

    const hello = await client.callTool({ name: 'hello', arguments: { name: 'Ada' } });
    assert.equal(hello.isError, false);
    assert.equal(JSON.parse(textOf(hello)).greeting, 'Hello, Ada!');

    const forecast = await client.callTool({ name: 'weather', arguments: { city: 'Oslo', api: `${api.origin}/v1/` } });
    assert.equal(forecast.isError, false, JSON.stringify(forecast));
    assert.deepEqual(JSON.parse(textOf(forecast)).now, { temperature_c: 21, conditions: 'sunny' });
    assert.equal(api.requests.length, 1);
    assert.equal(api.requests[0].url, '/v1/weather?city=Oslo');

    const spin = await client.callTool({ name: 'runaway', arguments: {} });
    assert.equal(spin.isError, true);
    assert.match(textOf(spin), /^step_limit: /);

    const codec = await client.callTool({ name: 'notes__codec', arguments: { text: 'hi' } });
    assert.equal(codec.isError, false, JSON.stringify(codec));
    assert.equal(JSON.parse(textOf(codec)).b64, 'aGk=');
  } finally {
    await client.close();
    await api.close();
  }
});

test('a secret injected at egress reaches the loopback server and never the client', async () => {
  const root = tempDir('secret');
  const secret = 'secret_SDK_EGRESS_7781';
  // The server echoes the request's headers back: skillbox must show the skill (and so the client)
  // only the placeholder.
  const api = await loopbackServer((req) => ({ body: JSON.stringify({ headers: req.headers }) }));
  const bundle = bundleCopy(
    'notion-lite',
    { permissions: { http: { allow: [`${api.origin}/`], methods: ['GET'], allow_private_addresses: true } } },
    root,
  );
  const credentials = path.join(root, 'credentials.json');
  fs.writeFileSync(
    credentials,
    JSON.stringify({
      'notion-lite': {
        auth: { mode: 'self_hosted', credentials: { api_token: secret }, hosts: [`${api.origin}/`] },
      },
    }),
  );
  const { client, stderr } = await connect([bundle, '--credentials', credentials, '--data-dir', path.join(root, 'data')]);
  try {
    const result = await client.callTool({ name: 'notion-lite__search', arguments: { base: api.origin } });
    assert.equal(result.isError, false, JSON.stringify(result));
    assert.equal(api.requests.length, 1);
    assert.equal(api.requests[0].headers.authorization, `Bearer ${secret}`);
    const shown = JSON.stringify(result);
    assert.ok(!shown.includes(secret), `the secret is in the tool result: ${shown}`);
    assert.match(shown, /skillbox-secret:notion-lite\//);
  } finally {
    await client.close();
    await api.close();
  }
  assert.ok(!stderr().includes(secret), 'the secret is on stderr');
});

test('progress with a progress token, and log lines after logging/setLevel', async () => {
  const root = tempDir('live');
  const notes = bundleCopy('notes', { permissions: {} }, root);
  const chatty = writeSkill(
    path.join(root, 'chatty'),
    { id: 'chatty' },
    {
      'index.js':
        "export default () => { console.debug('d-line'); log('i-line'); console.warn('w-line'); console.error('e-line'); return 1; }",
    },
  );
  const { client } = await connect([notes, chatty, '--data-dir', path.join(root, 'data')]);
  const logs = [];
  client.setNotificationHandler(types.LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  try {
    // The SDK hands notifications to their handlers a microtask later but drops a call's onprogress
    // handler as soon as its response is read, so progress that arrives in the same read as the
    // response would be lost to onprogress: what the server sent is observed with a handler of its own
    // (onprogress still makes the SDK send the progress token).
    const progress = [];
    client.setNotificationHandler(types.ProgressNotificationSchema, (n) => progress.push(n.params));
    const bump = await client.callTool({ name: 'notes__bump', arguments: {} }, undefined, {
      onprogress: () => {},
    });
    assert.equal(textOf(bump), '1');
    await waitFor(() => progress.length >= 4, 5000, 'four progress notifications');
    // platform.notify, memory.insert and two cron registrations, in order, counted up.
    assert.deepEqual(
      progress.map((p) => p.progress),
      [1, 2, 3, 4],
    );
    assert.match(progress[0].message, /^notify /);

    // The default level is info: no debug line.
    logs.length = 0;
    await client.callTool({ name: 'chatty', arguments: {} });
    await waitFor(() => logs.length >= 3, 5000, 'three log notifications');
    assert.deepEqual(
      logs.map((l) => [l.level, l.data, l.logger]),
      [
        ['info', 'i-line', 'chatty'],
        ['warning', 'w-line', 'chatty'],
        ['error', 'e-line', 'chatty'],
      ],
    );
    logs.length = 0;
    await client.setLoggingLevel('debug');
    await client.callTool({ name: 'chatty', arguments: {} });
    await waitFor(() => logs.length >= 4, 5000, 'four log notifications');
    assert.equal(logs[0].level, 'debug');
    assert.equal(logs[0].data, 'd-line');
    logs.length = 0;
    await client.setLoggingLevel('error');
    await client.callTool({ name: 'chatty', arguments: {} });
    await waitFor(() => logs.length >= 1, 5000, 'one log notification');
    assert.deepEqual(
      logs.map((l) => l.data),
      ['e-line'],
    );
  } finally {
    await client.close();
  }
});

test('an aborted call is cancelled, rejects, and the server keeps serving', async () => {
  const root = tempDir('cancel');
  const waiter = writeSkill(
    path.join(root, 'waiter'),
    { id: 'waiter', limits: { timeout_ms: 60000 } },
    { 'index.js': "export default () => { log('waiting'); return new Promise(() => setInterval(() => {}, 50)); }" },
  );
  const { client, stderr } = await connect([waiter, path.join(examples, 'hello')]);
  const logs = [];
  client.setNotificationHandler(types.LoggingMessageNotificationSchema, (n) => logs.push(n.params.data));
  try {
    const controller = new AbortController();
    const started = Date.now();
    const call = client.callTool({ name: 'waiter', arguments: {} }, undefined, {
      signal: controller.signal,
      timeout: 120000,
    });
    await waitFor(() => logs.includes('waiting'), 20000, 'the call to start');
    controller.abort('the user gave up');
    await assert.rejects(call, (e) => /gave up|abort/i.test(String(e?.message ?? e)));
    // skillbox stopped the run (its note on stderr), long before the skill's 60 s deadline.
    await waitFor(() => stderr().includes('cancelled by the client'), 15000, 'the cancellation note');
    assert.ok(Date.now() - started < 20000);
    await client.ping();
    const hello = await client.callTool({ name: 'hello', arguments: { name: 'Bo' } });
    assert.equal(JSON.parse(textOf(hello)).greeting, 'Hello, Bo!');
  } finally {
    await client.close();
  }
});

test('the conformance example serves the suite\'s tools under bare names', async () => {
  const root = tempDir('conformance');
  const { client } = await connect([
    path.join(sourceDir, 'examples', 'mcp', 'conformance'),
    '--tool-names',
    'bare',
    '--data-dir',
    path.join(root, 'data'),
  ]);
  const logs = [];
  client.setNotificationHandler(types.LoggingMessageNotificationSchema, (n) => logs.push(n.params.data));
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ['test_simple_text', 'test_error_handling', 'test_tool_with_logging', 'test_tool_with_progress', 'json_schema_2020_12_tool'],
    );
    const schema = tools[4].inputSchema;
    assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
    assert.deepEqual(schema.properties.address, { $ref: '#/$defs/address' });
    assert.equal(schema.additionalProperties, false);

    assert.equal(textOf(await client.callTool({ name: 'test_simple_text' })), 'This is a simple text response for testing.');
    const failed = await client.callTool({ name: 'test_error_handling', arguments: {} });
    assert.equal(failed.isError, true);
    assert.match(textOf(failed), /intentionally returns an error/);

    await client.setLoggingLevel('debug');
    await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
    assert.deepEqual(logs, ['Tool execution started', 'Tool processing data', 'Tool execution completed']);

    const progress = [];
    await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    assert.deepEqual(progress, [1, 2, 3]);
  } finally {
    await client.close();
  }
});
