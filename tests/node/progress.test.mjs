// Progress and log notifications from Fusion handlers, as the official MCP TypeScript SDK
// receives them: `onprogress` on a tool call, and a `notifications/message` handler after
// `logging/setLevel`. Drives the conformance example (its `test_tool_with_progress` reports
// 0, 50 and 100 of 100; `test_tool_with_logging` logs three times at info level).
//
// Run: cargo build --example conformance && npm ci && npm test
// CONFORMANCE_BIN overrides the binary (default: ../../target/debug/examples/conformance).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startHttp } from './serve.mjs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN =
  process.env.CONFORMANCE_BIN ?? path.resolve(here, '../../target/debug/examples/conformance');
const ENV = { ...process.env, RUST_LOG: 'warn' };


async function progressAndLogs(t, transport) {
  const client = new Client({ name: 'fusion-progress-e2e', version: '0.1.0' });
  const logs = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  await client.connect(transport);
  try {
    assert.ok(client.getServerCapabilities()?.logging, 'the server advertises logging');

    // What the server wrote, in wire order. The SDK hands a notification to `onprogress` in a
    // microtask but settles the response synchronously, so a progress notification that
    // arrives in the same read as the response (likely on a loaded machine, over stdio) is
    // dropped by the SDK after the call has resolved. The server's order is asserted on the
    // wire; `onprogress` must see an in-order prefix of it.
    const wire = [];
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      wire.push(message);
      deliver?.(message, extra);
    };

    const progress = [];
    const result = await client.callTool(
      { name: 'test_tool_with_progress', arguments: {} },
      undefined,
      { onprogress: (p) => progress.push(p) },
    );
    t.diagnostic(`progress notifications seen by onprogress: ${JSON.stringify(progress)}`);
    assert.notEqual(result.isError, true);
    const answer = wire.findIndex((m) => m.id !== undefined && m.result?.content !== undefined);
    assert.ok(answer >= 0, 'the call result was on the wire');
    const sent = wire
      .slice(0, answer)
      .filter((m) => m.method === 'notifications/progress')
      .map(({ params: { progress, total, message } }) => ({ progress, total, message }));
    const expected = [
      { progress: 0, total: 100, message: 'started' },
      { progress: 50, total: 100, message: 'halfway' },
      { progress: 100, total: 100, message: 'done' },
    ];
    assert.deepEqual(sent, expected, 'every progress notification precedes the result');
    assert.deepEqual(
      progress.map(({ progress, total, message }) => ({ progress, total, message })),
      expected.slice(0, progress.length),
    );

    // Below the session's level nothing is sent; `warning` filters out the tool's info logs.
    await client.setLoggingLevel('warning');
    await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(logs, []);

    await client.setLoggingLevel('info');
    await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
    // Logs travel off the call's response path (the GET stream over HTTP): wait for all three,
    // up to 10 s on a loaded machine.
    for (const end = Date.now() + 10_000; logs.length < 3 && Date.now() < end; ) {
      await new Promise((r) => setTimeout(r, 20));
    }
    t.diagnostic(`log notifications: ${JSON.stringify(logs)}`);
    assert.deepEqual(logs, [
      { level: 'info', logger: 'test_tool_with_logging', data: 'Tool execution started' },
      { level: 'info', logger: 'test_tool_with_logging', data: 'Tool processing data' },
      { level: 'info', logger: 'test_tool_with_logging', data: 'Tool execution completed' },
    ]);
  } finally {
    await client.close();
  }
}

test('stdio: onprogress sees 0, 50, 100 of 100; logs follow setLevel', { timeout: 30_000 }, (t) =>
  progressAndLogs(t, new StdioClientTransport({ command: BIN, args: ['serve'], env: ENV })),
);

test('streamable HTTP: the same', { timeout: 30_000 }, async (t) => {
  const { child, url } = await startHttp(BIN, ENV);
  try {
    await progressAndLogs(t, new StreamableHTTPClientTransport(url));
  } finally {
    child.kill();
  }
});
