// tests/mcp/node/list_changed.test.mjs — `skillbox mcp` tells the official SDK's Client when a served
// skill folder changes on disk (notifications/tools/list_changed), the next tools/list shows the
// change, and a broken edit keeps the last good tools with a warning. Run by ctest (mcp.list_changed).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { connect, tempDir, textOf, types, waitFor, writeSkill } from './support.mjs';

test('a changed skill folder is listed again and the client is told', async () => {
  const root = tempDir('changed');
  const dir = writeSkill(
    path.join(root, 'greeter'),
    { id: 'greeter', name: 'Greeter' },
    { 'index.js': "export default () => 'v1';" },
  );
  const { client, stderr } = await connect([dir, '--watch-ms', '50', '--isolation', 'inprocess']);
  let changes = 0;
  const warnings = [];
  client.setNotificationHandler(types.ToolListChangedNotificationSchema, () => changes++);
  client.setNotificationHandler(types.LoggingMessageNotificationSchema, (n) => {
    if (n.params.logger === 'skillbox') warnings.push(n.params);
  });
  const titles = async () => (await client.listTools()).tools.map((t) => [t.name, t.title]);
  try {
    assert.equal(client.getServerCapabilities().tools.listChanged, true);
    assert.deepEqual(await titles(), [['greeter', 'Greeter']]);

    // skill.json changes: a new title, one notification, the next tools/list has it.
    fs.writeFileSync(path.join(dir, 'skill.json'), JSON.stringify({ id: 'greeter', name: 'Greeter Two', version: '1.0.0', entry: 'index.js' }));
    await waitFor(() => changes === 1, 10000, 'notifications/tools/list_changed');
    assert.deepEqual(await titles(), [['greeter', 'Greeter Two']]);

    // The source changes: calls run the new code (the list is the same, so no notification).
    fs.writeFileSync(path.join(dir, 'index.js'), "export default () => 'v2';");
    let text = '';
    const deadline = Date.now() + 10000;
    while (text !== '"v2"' && Date.now() < deadline) text = textOf(await client.callTool({ name: 'greeter', arguments: {} }));
    assert.equal(text, '"v2"');

    // A broken edit: the last good tools stay, the client gets a warning saying why.
    fs.writeFileSync(path.join(dir, 'skill.json'), '{"id": "greeter", "name": ');
    await waitFor(() => warnings.length === 1, 10000, 'a warning log message');
    assert.equal(warnings[0].level, 'warning');
    assert.match(warnings[0].data, /last good tools/);
    assert.match(warnings[0].data, /skill\.json/);
    assert.deepEqual(await titles(), [['greeter', 'Greeter Two']]);
    assert.equal(textOf(await client.callTool({ name: 'greeter', arguments: {} })), '"v2"');
    assert.match(stderr(), /last good tools/);

    // Mended, under a new id: the tool's name changes.
    fs.writeFileSync(path.join(dir, 'skill.json'), JSON.stringify({ id: 'greeter2', version: '1.0.0', entry: 'index.js' }));
    await waitFor(() => changes === 2, 10000, 'a second notifications/tools/list_changed');
    assert.deepEqual(
      (await client.listTools()).tools.map((t) => t.name),
      ['greeter2'],
    );
    await assert.rejects(client.callTool({ name: 'greeter', arguments: {} }), /unknown tool/);
    assert.equal(textOf(await client.callTool({ name: 'greeter2', arguments: {} })), '"v2"');
    assert.equal(changes, 2);
  } finally {
    await client.close();
  }
});

test('--watch-ms 0 does not watch and does not advertise listChanged', async () => {
  const root = tempDir('nowatch');
  const dir = writeSkill(path.join(root, 'still'), { id: 'still' }, { 'index.js': 'export default () => 1;' });
  const { client } = await connect([dir, '--watch-ms', '0', '--isolation', 'inprocess']);
  let changes = 0;
  client.setNotificationHandler(types.ToolListChangedNotificationSchema, () => changes++);
  try {
    assert.equal(client.getServerCapabilities().tools.listChanged, false);
    fs.writeFileSync(path.join(dir, 'skill.json'), JSON.stringify({ id: 'moved', version: '1.0.0', entry: 'index.js' }));
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(changes, 0);
    assert.deepEqual(
      (await client.listTools()).tools.map((t) => t.name),
      ['still'],
    );
  } finally {
    await client.close();
  }
});
