// MCP 2025-11-25 tasks over stdio with the official TypeScript SDK (1.32.2,
// `client.experimental.tasks`), the SDK spawning the server as a child process: the same
// task-augmented `tools/call`, `tasks/get`, `tasks/result`, `tasks/cancel` and `tasks/list`
// as `tasks.test.mjs` drives over streamable HTTP, answered by the same code.
//
// The billing example's `billing_reconcile` (`billing serve`: stdio) runs as a task; the task
// tests' own server (`tasks-server --stdio`, every call made by `alice`) adds a task that asks
// the user (elicitation on the tasks/result stream) and tasks/list.
//
// Run: cargo build --example billing && cargo build -p fusion-tests --bin tasks-server &&
// npm ci && npm test
// BILLING_BIN and TASKS_BIN override the binaries (default: ../../target/debug/examples/billing,
// ../../target/debug/tasks-server).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, ElicitRequestSchema, TaskStatusNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = process.env.BILLING_BIN ?? path.resolve(here, '../../target/debug/examples/billing');
const TASKS_BIN = process.env.TASKS_BIN ?? path.resolve(here, '../../target/debug/tasks-server');
const ENV = { ...process.env, RUST_LOG: 'warn' };
delete ENV.BILLING_OPERATOR_TOKEN;
delete ENV.BILLING_LEDGER_DIR;

/** A client of `command args` over stdio, declaring `capabilities`. */
async function spawnClient(command, args, capabilities) {
  const client = new Client({ name: 'fusion-node-tasks-stdio', version: '0.1.0' }, { capabilities });
  await client.connect(new StdioClientTransport({ command, args, env: ENV, stderr: 'ignore' }));
  return client;
}

test('stdio: billing_reconcile runs as a 2025-11-25 task, read and waited for (TypeScript SDK)', { timeout: 60_000 }, async () => {
  const client = await spawnClient(BIN, ['serve'], { tasks: { cancel: {} } });
  try {
    // Without a principal, no tasks/list: as over HTTP without auth.
    assert.deepEqual(client.getServerCapabilities().tasks, { cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await client.listTools();
    assert.deepEqual(tools.find((t) => t.name === 'billing_reconcile').execution, { taskSupport: 'optional' });
    assert.equal(tools.find((t) => t.name === 'billing_get_invoice').execution, undefined);

    const seen = [];
    let taskId;
    let result;
    const stream = client.experimental.tasks.callToolStream(
      { name: 'billing_reconcile', arguments: { duration_ms: 6000 } },
      undefined,
      { task: { ttl: 60_000 }, timeout: 30_000 },
    );
    for await (const message of stream) {
      seen.push(message.type);
      if (message.type === 'taskCreated') {
        taskId = message.task.taskId;
        assert.equal(message.task.status, 'working');
        assert.equal(message.task.ttl, 60_000);
        // tasks/get while it runs.
        const running = await client.experimental.tasks.getTask(taskId);
        assert.equal(running.status, 'working');
      }
      if (message.type === 'error') throw message.error;
      if (message.type === 'result') result = message.result;
    }
    assert.equal(seen[0], 'taskCreated');
    assert.ok(seen.includes('taskStatus'), seen.join(','));
    // Six seconds: past the action's five-second timeout, which a task does not have.
    assert.equal(result.isError, false, JSON.stringify(result));
    assert.equal(result.structuredContent.took_ms, 6000);
    assert.equal(result._meta['io.modelcontextprotocol/related-task'].taskId, taskId);
    // tasks/result of the ended task answers at once, the same result.
    const again = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    assert.equal(again.structuredContent.took_ms, 6000);
  } finally {
    await client.close();
  }
});

test('stdio: a 2025-11-25 task is cancelled, and another task of the same tool then runs (TypeScript SDK)', { timeout: 60_000 }, async () => {
  const client = await spawnClient(BIN, ['serve'], { tasks: { cancel: {} } });
  try {
    // The server says so (initialize, tools/list): the SDK makes the call a task by itself.
    await client.listTools();
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
    await assert.rejects(client.experimental.tasks.getTask('no-such-task'), /no task/);
  } finally {
    await client.close();
  }
});

test('stdio: a 2025-11-25 task asks the user on the tasks/result stream and the SDK answers it', { timeout: 60_000 }, async () => {
  const client = await spawnClient(TASKS_BIN, ['--stdio'], { elicitation: {}, tasks: { cancel: {} } });
  try {
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
    assert.ok(seen.includes('input_required'), seen.join(','));
    assert.equal(asked.length, 1, JSON.stringify(asked));
    assert.match(asked[0].message, /Move 500 cents\?/);
    assert.equal(asked[0]._meta['io.modelcontextprotocol/related-task'].taskId, taskId);
    assert.equal(result.isError, false, JSON.stringify(result));
    assert.deepEqual(JSON.parse(result.content[0].text), { amount_cents: 500, outcome: 'moved' }, JSON.stringify(result));
    assert.ok(statuses.some((t) => t.taskId === taskId && t.status === 'completed'), JSON.stringify(statuses));
    const done = await client.experimental.tasks.getTask(taskId);
    assert.equal(done.status, 'completed');
  } finally {
    await client.close();
  }
});

test('stdio: tasks/list pages through the principal\'s tasks (TypeScript SDK)', { timeout: 60_000 }, async () => {
  const client = await spawnClient(TASKS_BIN, ['--stdio'], { tasks: { cancel: {} } });
  try {
    assert.deepEqual(client.getServerCapabilities().tasks, {
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const started = [];
    for (let i = 0; i < 3; i++) {
      const stream = client.experimental.tasks.callToolStream(
        { name: 'nap_task', arguments: { ms: 10 + i } },
        undefined,
        { task: { ttl: 60_000 } },
      );
      const first = await stream.next();
      assert.equal(first.value.type, 'taskCreated');
      started.push(first.value.task.taskId);
    }
    // The server's page size is 2: two pages, every task once, oldest first.
    const first = await client.experimental.tasks.listTasks();
    assert.equal(first.tasks.length, 2, JSON.stringify(first));
    assert.equal(typeof first.nextCursor, 'string');
    const second = await client.experimental.tasks.listTasks(first.nextCursor);
    assert.equal(second.nextCursor, undefined, JSON.stringify(second));
    assert.deepEqual([...first.tasks, ...second.tasks].map((t) => t.taskId), started);
    await assert.rejects(client.experimental.tasks.listTasks(`${first.nextCursor}x`), (e) => e.code === -32602);
  } finally {
    await client.close();
  }
});
