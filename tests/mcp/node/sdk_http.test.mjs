// tests/mcp/node/sdk_http.test.mjs — `skillbox serve`'s /mcp as the official TypeScript SDK's Client sees
// it over the SDK's StreamableHTTPClientTransport: the tenant's skills and a bundle listed and called,
// progress and log notifications on the call's stream, a cancelled call. Run by ctest (mcp.sdk_http);
// loopback only, on a listener without authentication (auth = "none").
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { bundleCopy, connectHttp, serveMcp, sourceDir, tempDir, textOf, types, waitFor, writeSkill } from './support.mjs';

test('the SDK client over Streamable HTTP lists, calls, hears progress and logs, and cancels', async () => {
  const root = tempDir('http');
  const skills = path.join(root, 'skills');
  fs.mkdirSync(skills);
  fs.cpSync(path.join(sourceDir, 'examples', 'skills', 'hello'), path.join(skills, 'hello'), { recursive: true });
  bundleCopy('notes', { permissions: {} }, skills);
  writeSkill(
    path.join(skills, 'waiter'),
    { id: 'waiter', limits: { timeout_ms: 60000 } },
    { 'index.js': "export default () => { log('waiting'); return new Promise(() => setInterval(() => {}, 50)); }" },
  );
  const server = await serveMcp(skills, root);
  const client = await connectHttp(server.url);
  const logs = [];
  client.setNotificationHandler(types.LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  try {
    assert.equal(client.getServerVersion().name, 'skillbox');
    const names = (await client.listTools()).tools.map((t) => t.name);
    for (const name of ['hello', 'waiter', 'notes__bump', 'notes__codec']) assert.ok(names.includes(name), names.join(', '));

    const hello = await client.callTool({ name: 'hello', arguments: { name: 'Ada' } });
    assert.equal(JSON.parse(textOf(hello)).greeting, 'Hello, Ada!');
    assert.ok(logs.some((l) => l.data === 'greeting Ada' && l.logger === 'hello'), JSON.stringify(logs));

    // As in sdk_client.test.mjs: the server's progress is observed with a handler of its own, since the
    // SDK may read the response before it runs onprogress for the last notifications.
    const progress = [];
    client.setNotificationHandler(types.ProgressNotificationSchema, (n) => progress.push(n.params.progress));
    const bump = await client.callTool({ name: 'notes__bump', arguments: {} }, undefined, {
      onprogress: () => {},
    });
    assert.equal(textOf(bump), '1');
    await waitFor(() => progress.length >= 4, 5000, 'four progress notifications');
    assert.deepEqual(progress, [1, 2, 3, 4]);

    const controller = new AbortController();
    const call = client.callTool({ name: 'waiter', arguments: {} }, undefined, { signal: controller.signal, timeout: 120000 });
    await waitFor(() => logs.some((l) => l.data === 'waiting'), 20000, 'the call to start');
    controller.abort('the user gave up');
    await assert.rejects(call, (e) => /gave up|abort/i.test(String(e?.message ?? e)));
    await client.ping();
    assert.equal(JSON.parse(textOf(await client.callTool({ name: 'hello', arguments: { name: 'Bo' } }))).greeting, 'Hello, Bo!');
  } finally {
    await client.close();
    await server.stop();
  }
});

test('the SDK client hears list_changed on its GET stream when a skill is added to the folder', async () => {
  const root = tempDir('http-changed');
  const skills = path.join(root, 'skills');
  fs.mkdirSync(skills);
  fs.cpSync(path.join(sourceDir, 'examples', 'skills', 'hello'), path.join(skills, 'hello'), { recursive: true });
  const server = await serveMcp(skills, root);
  const client = await connectHttp(server.url);
  let changes = 0;
  client.setNotificationHandler(types.ToolListChangedNotificationSchema, () => changes++);
  try {
    assert.equal(client.getServerCapabilities().tools.listChanged, true);
    assert.deepEqual((await client.listTools()).tools.map((t) => t.name), ['hello']);
    writeSkill(path.join(skills, 'added'), { id: 'added' }, { 'index.js': "export default () => 'new'" });
    // The SDK opened the session's GET stream after initialize; the server looks at the folder every 2 s.
    await waitFor(() => changes >= 1, 20000, 'notifications/tools/list_changed');
    assert.deepEqual((await client.listTools()).tools.map((t) => t.name).sort(), ['added', 'hello']);
    assert.equal(textOf(await client.callTool({ name: 'added', arguments: {} })), '"new"');
  } finally {
    await client.close();
    await server.stop();
  }
});
