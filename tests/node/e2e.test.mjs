// The billing example driven by the official MCP TypeScript SDK — a client written by
// others — over stdio and streamable HTTP (stateful and stateless).
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

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = process.env.BILLING_BIN ?? path.resolve(here, '../../target/debug/examples/billing');
const ENV = { ...process.env, RUST_LOG: 'warn' };
delete ENV.BILLING_OPERATOR_TOKEN;
delete ENV.BILLING_LEDGER_DIR;

const NOT_FOUND = [
  '<tool_error code="NOT_FOUND" severity="error">',
  '  <message>No invoice with that ID</message>',
  '  <recovery>List invoices first, then retry with a real ID</recovery>',
  '  <available_actions>',
  '    <action>billing_list_invoices</action>',
  '  </available_actions>',
  '  <details>',
  '    <detail key="requestedId">inv_2026_9999</detail>',
  '  </details>',
  '</tool_error>',
].join('\n');

const texts = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text);

async function connect(transport) {
  const client = new Client({ name: 'fusion-node-e2e', version: '0.1.0' });
  await client.connect(transport);
  return client;
}


async function everyPath(client) {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  assert.deepEqual(names, [
    'billing_list_invoices',
    'billing_get_invoice',
    'billing_send_reminder',
    'billing_charge',
    'billing_find_invoice',
    'billing_export_ledger',
    'billing_recalculate_totals',
    'billing_void_invoice',
    'billing_reconcile',
    'billing_refund',
  ]);
  for (const t of tools) {
    assert.ok(t.description && t.description.length > 0, t.name);
    assert.equal(t.inputSchema.type, 'object', t.name);
  }
  const reminder = tools.find((t) => t.name === 'billing_send_reminder');
  assert.equal(reminder.inputSchema.properties.email.format, 'email');
  assert.deepEqual(reminder.inputSchema.required.sort(), ['days_overdue', 'email', 'invoice_id']);

  // Success; the SDK also checks structuredContent against the tool's outputSchema.
  const ok = await client.callTool({ name: 'billing_get_invoice', arguments: { id: 'inv_2026_0001' } });
  assert.equal(ok.isError ?? false, false);
  assert.equal(ok.structuredContent.id, 'inv_2026_0001');

  const nf = await client.callTool({ name: 'billing_get_invoice', arguments: { id: 'inv_2026_9999' } });
  assert.equal(nf.isError, true);
  assert.deepEqual(texts(nf), [NOT_FOUND]);

  const bad = await client.callTool({
    name: 'billing_send_reminder',
    arguments: { invoice_id: 'inv_2026_0001', email: 'not-an-email', days_overdue: 0 },
  });
  assert.equal(bad.isError, true);
  assert.match(texts(bad)[0], /^<validation_error action="billing_send_reminder">/);
  assert.match(texts(bad)[0], /<field name="email">Invalid email format\. You sent: 'not-an-email'\./);
  assert.match(texts(bad)[0], /<field name="days_overdue">Too small\. You sent: 0\. Expected a number >= 1\.<\/field>/);

  const paid = await client.callTool({ name: 'billing_charge', arguments: { invoice_id: 'inv_2026_0002', amount_cents: 100 } });
  assert.equal(paid.isError ?? false, false);
  assert.match(texts(paid)[1], /^<tool_error code="CONFLICT" severity="warning">/);

  const dep = await client.callTool({ name: 'billing_find_invoice', arguments: { id: 'inv_2026_0001' } });
  assert.equal(dep.isError ?? false, false);
  assert.match(texts(dep)[1], /^<tool_error code="DEPRECATED" severity="warning">/);

  const internal = await client.callTool({ name: 'billing_export_ledger', arguments: {} });
  assert.equal(internal.isError, true);
  assert.match(texts(internal)[0], /^<tool_error code="INTERNAL_ERROR" severity="critical">/);
  assert.match(texts(internal)[0], /Do not retry this call blindly/);

  const panicked = await client.callTool({ name: 'billing_recalculate_totals', arguments: { invoice_id: 'inv_2026_0004' } });
  assert.equal(panicked.isError, true);
  assert.match(texts(panicked)[0], /panicked/);
  const after = await client.callTool({ name: 'billing_get_invoice', arguments: { id: 'inv_2026_0003' } });
  assert.equal(after.isError ?? false, false);

  const denied = await client.callTool({ name: 'billing_void_invoice', arguments: { invoice_id: 'inv_2026_0005', reason: 'duplicate' } });
  assert.equal(denied.isError, true);
  assert.match(texts(denied)[0], /^<tool_error code="UNAUTHORIZED" severity="error">/);

  // An unknown tool is a result the model can read, not a thrown McpError.
  const unknown = await client.callTool({ name: 'billing_get_invoce', arguments: { id: 'inv_2026_0001' } });
  assert.equal(unknown.isError, true);
  assert.match(texts(unknown)[0], /^<tool_error code="UNKNOWN_ACTION" severity="error">/);
  assert.match(texts(unknown)[0], /<detail key="closest">billing_get_invoice<\/detail>/);
}

test('stdio: list and call every path', { timeout: 30_000 }, async () => {
  const transport = new StdioClientTransport({ command: BIN, args: ['serve'], env: ENV, stderr: 'ignore' });
  const client = await connect(transport);
  try {
    await everyPath(client);
  } finally {
    await client.close();
  }
});

for (const mode of ['stateful', 'stateless']) {
  test(`streamable HTTP (${mode}): list and call every path`, { timeout: 30_000 }, async () => {
    const { child, url } = await startHttp(BIN, ENV, mode === 'stateless' ? ['--stateless'] : []);
    try {
      const client = await connect(new StreamableHTTPClientTransport(url));
      try {
        await everyPath(client);
      } finally {
        await client.close();
      }
    } finally {
      child.kill();
    }
  });
}
