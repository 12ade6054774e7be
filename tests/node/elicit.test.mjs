// Elicitation on MCP 2025-11-25, driven by the official TypeScript SDK: billing_refund asks
// the user to confirm (elicitation/create) before money moves, over stdio and stateful
// streamable HTTP; a stateless 2025 request, which has no way back to the client, and a
// client without the capability get ELICITATION_UNSUPPORTED.
//
// Run: cargo build --example billing && npm ci && npm test

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startHttp } from './serve.mjs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = process.env.BILLING_BIN ?? path.resolve(here, '../../target/debug/examples/billing');
const ENV = { ...process.env, RUST_LOG: 'warn' };
delete ENV.BILLING_OPERATOR_TOKEN;
delete ENV.BILLING_LEDGER_DIR;

const REFUND = { name: 'billing_refund', arguments: { invoice_id: 'inv_2026_0002', amount_cents: 500 } };

/// A client that answers every form with `answer` and records what it was asked.
async function connect(transport, answer) {
  const capabilities = answer ? { elicitation: {} } : {};
  const client = new Client({ name: 'fusion-node-elicit', version: '0.1.0' }, { capabilities });
  const asked = [];
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return answer;
    });
  }
  await client.connect(transport);
  return { client, asked };
}

async function refundConfirmed(transport) {
  const { client, asked } = await connect(transport, {
    action: 'accept',
    content: { invoice_id: 'inv_2026_0002', reason: 'duplicate' },
  });
  try {
    const result = await client.callTool(REFUND);
    assert.equal(result.isError, false, JSON.stringify(result));
    assert.equal(asked.length, 1);
    assert.match(asked[0].message, /Refund 500 cents on inv_2026_0002/);
    const schema = asked[0].requestedSchema;
    assert.deepEqual(schema.required, ['invoice_id', 'reason']);
    assert.deepEqual(
      schema.properties.reason.oneOf.map((o) => o.const),
      ['duplicate', 'fraud', 'requested_by_customer'],
    );
    assert.equal(result.structuredContent.reason, 'duplicate');
    assert.equal(result.structuredContent.amount_cents, 500);
  } finally {
    await client.close();
  }
}

test('stdio: billing_refund elicits a confirmation', { timeout: 30_000 }, async () => {
  await refundConfirmed(new StdioClientTransport({ command: BIN, args: ['serve'], env: ENV, stderr: 'ignore' }));
});

test('stdio: a declined confirmation moves nothing', { timeout: 30_000 }, async () => {
  const transport = new StdioClientTransport({ command: BIN, args: ['serve'], env: ENV, stderr: 'ignore' });
  const { client } = await connect(transport, { action: 'decline' });
  try {
    const result = await client.callTool(REFUND);
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /REFUND_NOT_CONFIRMED/);
  } finally {
    await client.close();
  }
});

test('stdio: a client without the capability gets ELICITATION_UNSUPPORTED', { timeout: 30_000 }, async () => {
  const transport = new StdioClientTransport({ command: BIN, args: ['serve'], env: ENV, stderr: 'ignore' });
  const { client } = await connect(transport, null);
  try {
    const result = await client.callTool(REFUND);
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /ELICITATION_UNSUPPORTED/);
    assert.match(result.content[0].text, /ask the user in conversation/);
  } finally {
    await client.close();
  }
});

test('streamable HTTP (stateful): billing_refund elicits a confirmation', { timeout: 30_000 }, async () => {
  const { child, url } = await startHttp(BIN, ENV);
  try {
    await refundConfirmed(new StreamableHTTPClientTransport(url));
  } finally {
    child.kill();
  }
});

test('streamable HTTP (stateless, 2025): no way back to the client', { timeout: 30_000 }, async () => {
  const { child, url } = await startHttp(BIN, ENV, ['--stateless']);
  try {
    const { client, asked } = await connect(new StreamableHTTPClientTransport(url), { action: 'decline' });
    try {
      const result = await client.callTool(REFUND);
      assert.equal(asked.length, 0);
      assert.equal(result.isError, true);
      assert.match(result.content[0].text, /ELICITATION_UNSUPPORTED/);
    } finally {
      await client.close();
    }
  } finally {
    child.kill();
  }
});

// resources/subscribe → notifications/resources/updated: a client subscribed to the invoice
// hears of the refund once money moved (stdio: on its one stream; stateful HTTP: on the
// session's GET stream).
async function refundNotifiesSubscriber(transport) {
  const { client } = await connect(transport, {
    action: 'accept',
    content: { invoice_id: 'inv_2026_0002', reason: 'duplicate' },
  });
  try {
    const updated = [];
    let heard;
    const arrived = new Promise((resolve) => { heard = resolve; });
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updated.push(n.params.uri);
      heard();
    });
    assert.equal(client.getServerCapabilities().resources.subscribe, true);
    await client.subscribeResource({ uri: 'billing://invoices/inv_2026_0002' });
    await client.subscribeResource({ uri: 'billing://invoices/inv_2026_0003' });
    const result = await client.callTool(REFUND);
    assert.equal(result.isError, false, JSON.stringify(result));
    await Promise.race([
      arrived,
      new Promise((_, reject) => setTimeout(() => reject(new Error('no resources/updated in 10 s')), 10_000)),
    ]);
    assert.deepEqual(updated, ['billing://invoices/inv_2026_0002']);
  } finally {
    await client.close();
  }
}

test('stdio: a subscribed client hears of the refund', { timeout: 30_000 }, async () => {
  await refundNotifiesSubscriber(new StdioClientTransport({ command: BIN, args: ['serve'], env: ENV, stderr: 'ignore' }));
});

test('streamable HTTP (stateful): a subscribed client hears of the refund on its GET stream', { timeout: 30_000 }, async () => {
  const { child, url } = await startHttp(BIN, ENV);
  try {
    await refundNotifiesSubscriber(new StreamableHTTPClientTransport(url));
  } finally {
    child.kill();
  }
});
