// The billing example's prompt, resources and completions driven by the official MCP
// TypeScript SDK (protocol 2025-11-25) over stdio and streamable HTTP (stateful, stateless).
//
// Run: cargo build --example billing && npm ci && npm test
// BILLING_BIN overrides the binary (default: ../../target/debug/examples/billing).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startHttp } from './serve.mjs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = process.env.BILLING_BIN ?? path.resolve(here, '../../target/debug/examples/billing');
const ENV = { ...process.env, RUST_LOG: 'warn' };
delete ENV.BILLING_OPERATOR_TOKEN;
delete ENV.BILLING_LEDGER_DIR;

async function connect(transport) {
  const client = new Client({ name: 'fusion-node-surface', version: '0.1.0' });
  await client.connect(transport);
  return client;
}

async function rejects(promise, code) {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof McpError, String(e));
    assert.equal(e.code, code, e.message);
    return e;
  }
  assert.fail(`expected JSON-RPC error ${code}`);
}

async function surface(client, stateless = false) {
  assert.equal(client.getServerVersion().name, 'billing');
  const caps = client.getServerCapabilities();
  assert.ok(caps.prompts && caps.completions);
  // A stateless server has no session to send updates on: it offers no subscription.
  assert.equal(caps.resources.subscribe, stateless ? undefined : true);
  assert.equal(caps.resources.listChanged, stateless ? undefined : true);

  // Prompt: listed with its arguments, then fetched.
  const { prompts } = await client.listPrompts();
  const reminder = prompts.find((p) => p.name === 'billing_payment_reminder');
  assert.ok(reminder, JSON.stringify(prompts));
  assert.deepEqual(
    reminder.arguments.map((a) => [a.name, a.required]),
    [['invoice_id', true], ['status', false]],
  );
  const got = await client.getPrompt({
    name: 'billing_payment_reminder',
    arguments: { invoice_id: 'inv_2026_0001', status: 'open' },
  });
  assert.equal(got.messages[0].role, 'user');
  assert.match(got.messages[0].content.text, /payment reminder.*Acme.*inv_2026_0001/);
  assert.equal(got.messages[1].content.type, 'resource');
  assert.equal(got.messages[1].content.resource.uri, 'billing://invoices/inv_2026_0001');

  const bad = await rejects(
    client.getPrompt({ name: 'billing_payment_reminder', arguments: { invoice_id: 'x', status: 'late' } }),
    -32602,
  );
  assert.match(bad.message, /<validation_error action="billing_payment_reminder">/);
  assert.match(bad.message, /<field name="invoice_id">Invalid format\. You sent: 'x'\./);
  assert.equal(bad.data.issues[0].field, 'invoice_id');

  // Resources: the static one, the template, a read, and not found with its recovery.
  const { resources } = await client.listResources();
  assert.deepEqual(resources.map((r) => r.uri), ['billing://policy']);
  const { resourceTemplates } = await client.listResourceTemplates();
  assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate), ['billing://invoices/{id}']);
  const read = await client.readResource({ uri: 'billing://invoices/inv_2026_0003' });
  assert.equal(read.contents[0].mimeType, 'application/json');
  assert.equal(JSON.parse(read.contents[0].text).customer, 'Initech');
  const policy = await client.readResource({ uri: 'billing://policy' });
  assert.match(policy.contents[0].text, /^# Payment terms/);
  const nf = await rejects(client.readResource({ uri: 'billing://invoices/inv_2026_9999' }), -32002);
  assert.equal(nf.data.uri, 'billing://invoices/inv_2026_9999');
  assert.match(nf.data.recovery, /resources\/templates\/list/);

  // Completions: the enum for free, invoice IDs from the store.
  const status = await client.complete({
    ref: { type: 'ref/prompt', name: 'billing_payment_reminder' },
    argument: { name: 'status', value: 'o' },
  });
  assert.deepEqual(status.completion.values, ['open']);
  const ids = await client.complete({
    ref: { type: 'ref/resource', uri: 'billing://invoices/{id}' },
    argument: { name: 'id', value: 'inv_2026_000' },
  });
  assert.equal(ids.completion.values.length, 5);
  assert.equal(ids.completion.total, 5);

  if (stateless) {
    await rejects(client.subscribeResource({ uri: 'billing://policy' }), -32601);
  } else {
    await client.subscribeResource({ uri: 'billing://policy' });
    await client.unsubscribeResource({ uri: 'billing://policy' });
  }
}

test('stdio: prompt, resources, completions', { timeout: 30_000 }, async () => {
  const transport = new StdioClientTransport({ command: BIN, args: ['serve'], env: ENV, stderr: 'ignore' });
  const client = await connect(transport);
  try {
    await surface(client);
  } finally {
    await client.close();
  }
});

for (const mode of ['stateful', 'stateless']) {
  test(`streamable HTTP (${mode}): prompt, resources, completions`, { timeout: 30_000 }, async () => {
    const { child, url } = await startHttp(BIN, ENV, mode === 'stateless' ? ['--stateless'] : []);
    try {
      const client = await connect(new StreamableHTTPClientTransport(url));
      try {
        await surface(client, mode === 'stateless');
      } finally {
        await client.close();
      }
    } finally {
      child.kill();
    }
  });
}
