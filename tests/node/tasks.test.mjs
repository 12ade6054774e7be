// MCP tasks with the official TypeScript SDK (1.32.2): it speaks the experimental tasks of
// 2025-11-25 (`client.experimental.tasks`: a `tools/call` with `task`, `tasks/get`,
// `tasks/result`, `tasks/cancel`), not the 2026-07-28 extension. The billing example's
// `billing_reconcile` runs as a task over a stateful streamable HTTP session: six seconds
// complete, where the synchronous call answers TIMEOUT at five.
//
// The task tests' own server (tests/src/bin/tasks-server.rs) adds a task that asks the user
// (elicitation on the tasks/result stream, answered by the SDK's handler) and tasks/list.
//
// Run: cargo build --example billing && cargo build -p fusion-tests --bin tasks-server &&
// npm ci && npm test
// BILLING_BIN and TASKS_BIN override the binaries (default: ../../target/debug/examples/billing,
// ../../target/debug/tasks-server).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startHttp } from './serve.mjs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, TaskStatusNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { spawn } from 'node:child_process';

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

// The task tests' own server (`cargo build -p fusion-tests --bin tasks-server`): task actions
// over a stateful HTTP session with bearer auth; it prints its URL and a token per principal.
const TASKS_BIN = process.env.TASKS_BIN ?? path.resolve(here, '../../target/debug/tasks-server');

/** Starts the tasks server: its child, URL and the bearer tokens of alice and bob. */
function startTasks() {
  const child = spawn(TASKS_BIN, [], { env: ENV, stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`no URL from the tasks server in 10 s; stderr: ${seen}`));
    }, 10_000);
    child.stderr.on('data', (chunk) => {
      seen += chunk;
      const url = seen.match(/serving MCP over streamable HTTP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/);
      const alice = seen.match(/token alice: (\S+)/);
      const bob = seen.match(/token bob: (\S+)/);
      if (url && alice && bob) {
        clearTimeout(timer);
        resolve({ child, url: new URL(url[1]), tokens: { alice: alice[1], bob: bob[1] } });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`tasks server exited (${code}); stderr: ${seen}`));
    });
  });
}

/** A client of `url` with bearer `token`, declaring `capabilities`. */
async function connectAs(url, token, capabilities) {
  const client = new Client({ name: 'fusion-node-tasks', version: '0.1.0' }, { capabilities });
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

test('a 2025-11-25 task asks the user on the tasks/result stream and the SDK answers it', async () => {
  const { child, url, tokens } = await startTasks();
  try {
    const client = await connectAs(url, tokens.alice, { elicitation: {}, tasks: { cancel: {} } });
    const asked = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return { action: 'accept', content: { confirm: true } };
    });
    const statuses = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (note) => {
      statuses.push(note.params);
    });
    const stream = client.experimental.tasks.callToolStream(
      { name: 'confirm_task', arguments: { amount_cents: 500 } },
      undefined,
      { task: { ttl: 60_000 }, timeout: 30_000 },
    );
    let taskId;
    const seen = [];
    let result;
    for await (const message of stream) {
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      if (message.type === 'taskStatus') seen.push(message.task.status);
      if (message.type === 'error') throw message.error;
      if (message.type === 'result') result = message.result;
    }
    // tasks/get showed the question pending; the SDK then called tasks/result, which asked.
    assert.ok(seen.includes('input_required'), seen.join(','));
    assert.equal(asked.length, 1, JSON.stringify(asked));
    assert.match(asked[0].message, /Move 500 cents\?/);
    assert.equal(asked[0]._meta['io.modelcontextprotocol/related-task'].taskId, taskId);
    assert.equal(result.isError, false, JSON.stringify(result));
    assert.deepEqual(JSON.parse(result.content[0].text), { amount_cents: 500, outcome: 'moved' }, JSON.stringify(result));
    assert.equal(result._meta['io.modelcontextprotocol/related-task'].taskId, taskId);
    // The stream told the status changes that followed the answer, the full task each time.
    assert.ok(statuses.some((t) => t.taskId === taskId && t.status === 'completed'), JSON.stringify(statuses));
    assert.ok(statuses.every((t) => typeof t.createdAt === 'string' && t.ttl === 60_000), JSON.stringify(statuses));
    const done = await client.experimental.tasks.getTask(taskId);
    assert.equal(done.status, 'completed');
    await client.close();
  } finally {
    child.kill();
  }
});

test('tasks/list pages through a principal\'s own tasks only (TypeScript SDK)', async () => {
  const { child, url, tokens } = await startTasks();
  try {
    const alice = await connectAs(url, tokens.alice, { tasks: { cancel: {} } });
    const bob = await connectAs(url, tokens.bob, { tasks: { cancel: {} } });
    assert.deepEqual(alice.getServerCapabilities().tasks, {
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const started = [];
    for (let i = 0; i < 3; i++) {
      const stream = alice.experimental.tasks.callToolStream(
        { name: 'nap_task', arguments: { ms: 10 + i } },
        undefined,
        { task: { ttl: 60_000 } },
      );
      const first = await stream.next();
      assert.equal(first.value.type, 'taskCreated');
      started.push(first.value.task.taskId);
    }
    // The server's page size is 2: two pages, every task once, oldest first.
    const first = await alice.experimental.tasks.listTasks();
    assert.equal(first.tasks.length, 2, JSON.stringify(first));
    assert.equal(typeof first.nextCursor, 'string');
    const second = await alice.experimental.tasks.listTasks(first.nextCursor);
    assert.equal(second.nextCursor, undefined, JSON.stringify(second));
    const listed = [...first.tasks, ...second.tasks].map((t) => t.taskId);
    assert.deepEqual(listed, started);
    // Bob sees none of them, and cannot read one by its id either.
    const bobs = await bob.experimental.tasks.listTasks();
    assert.deepEqual(bobs.tasks, []);
    await assert.rejects(bob.experimental.tasks.getTask(started[0]), /no task/);
    // A cursor the server did not issue is refused, as on every list.
    await assert.rejects(alice.experimental.tasks.listTasks(`${first.nextCursor}x`), (e) => e.code === -32602);
    await alice.close();
    await bob.close();
  } finally {
    child.kill();
  }
});
