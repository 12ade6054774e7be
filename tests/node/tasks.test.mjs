// MCP tasks with the official TypeScript SDK (1.32.2): it speaks the experimental tasks of
// 2025-11-25 (`client.experimental.tasks`: a `tools/call` with `task`, `tasks/get`,
// `tasks/result`, `tasks/cancel`), not the 2026-07-28 extension. The billing example's
// `billing_reconcile` runs as a task over a stateful streamable HTTP session: six seconds
// complete, where the synchronous call answers TIMEOUT at five.
//
// Run: cargo build --example billing && npm ci && npm test
// BILLING_BIN overrides the binary (default: ../../target/debug/examples/billing).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startHttp } from './serve.mjs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = process.env.BILLING_BIN ?? path.resolve(here, '../../target/debug/examples/billing');
const ENV = { ...process.env, RUST_LOG: 'warn' };
delete ENV.BILLING_OPERATOR_TOKEN;
delete ENV.BILLING_LEDGER_DIR;

async function connect(url) {
  const client = new Client(
    { name: 'fusion-node-tasks', version: '0.1.0' },
    { capabilities: { tasks: { cancel: {} } } },
  );
  await client.connect(new StreamableHTTPClientTransport(url));
  return client;
}

test('billing_reconcile of six seconds completes as a 2025-11-25 task (TypeScript SDK)', async () => {
  const { child, url } = await startHttp(BIN, ENV);
  try {
    const client = await connect(url);
    const seen = [];
    let result;
    const stream = client.experimental.tasks.callToolStream(
      { name: 'billing_reconcile', arguments: { duration_ms: 6000 } },
      undefined,
      { task: { ttl: 60_000 }, timeout: 30_000 },
    );
    for await (const message of stream) {
      seen.push(message.type);
      if (message.type === 'taskCreated') {
        assert.equal(message.task.status, 'working');
        assert.equal(message.task.ttl, 60_000);
      }
      if (message.type === 'error') throw message.error;
      if (message.type === 'result') result = message.result;
    }
    assert.equal(seen[0], 'taskCreated');
    assert.ok(seen.includes('taskStatus'), seen.join(','));
    assert.equal(result.isError, false, JSON.stringify(result));
    assert.equal(result.structuredContent.took_ms, 6000);
    assert.equal(result._meta['io.modelcontextprotocol/related-task'].taskId.length, 32);
    await client.close();
  } finally {
    child.kill();
  }
});

test('a 2025-11-25 task is cancelled, and another task of the same tool then runs (TypeScript SDK)', async () => {
  const { child, url } = await startHttp(BIN, ENV);
  try {
    const client = await connect(url);
    // The server says so (initialize, tools/list): the SDK makes the call a task by itself.
    assert.deepEqual(client.getServerCapabilities().tasks, { cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await client.listTools();
    const reconcile = tools.find((t) => t.name === 'billing_reconcile');
    assert.deepEqual(reconcile.execution, { taskSupport: 'optional' });
    const stream = client.experimental.tasks.callToolStream({
      name: 'billing_reconcile',
      arguments: { duration_ms: 8000 },
    });
    const first = await stream.next();
    assert.equal(first.value.type, 'taskCreated');
    const id = first.value.task.taskId;
    const cancelled = await client.experimental.tasks.cancelTask(id);
    assert.equal(cancelled.status, 'cancelled');
    const task = await client.experimental.tasks.getTask(id);
    assert.equal(task.status, 'cancelled');
    // Its one reconciliation slot is free: a synchronous call runs.
    const sync = await client.callTool({ name: 'billing_reconcile', arguments: { duration_ms: 10 } });
    assert.equal(sync.isError, false, JSON.stringify(sync));
    await assert.rejects(client.experimental.tasks.cancelTask(id), /already ended/);
    await client.close();
  } finally {
    child.kill();
  }
});
