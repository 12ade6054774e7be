// The official MCP TypeScript SDK (protocol 2025-11-25) lists and pages through the
// conformance example with its lists cut into pages (CONFORMANCE_PAGE_SIZE=2), over stdio
// and streamable HTTP: following nextCursor walks each list whole, in the unpaginated order;
// a forged cursor is JSON-RPC -32602.
//
// Run: cargo build --example conformance && npm ci && npm test
// CONFORMANCE_BIN overrides the binary (default: ../../target/debug/examples/conformance).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { startHttp } from './serve.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN =
  process.env.CONFORMANCE_BIN ?? path.resolve(here, '../../target/debug/examples/conformance');
const PAGED = { ...process.env, RUST_LOG: 'warn', CONFORMANCE_PAGE_SIZE: '2' };
const WHOLE = { ...process.env, RUST_LOG: 'warn' };
delete WHOLE.CONFORMANCE_PAGE_SIZE;

async function connect(transport) {
  const client = new Client({ name: 'fusion-node-pagination', version: '0.1.0' });
  await client.connect(transport);
  return client;
}

const stdio = (env) => new StdioClientTransport({ command: BIN, args: ['serve'], env });

/** Every page of one list, following nextCursor; the pages' sizes and the names in order. */
async function walk(list, key) {
  const sizes = [];
  const names = [];
  let cursor;
  do {
    const page = await list(cursor === undefined ? undefined : { cursor });
    sizes.push(page.items.length);
    names.push(...page.items.map((i) => i[key]));
    cursor = page.nextCursor;
    assert.ok(sizes.length < 50, 'the pages never end');
  } while (cursor !== undefined);
  return { sizes, names };
}

async function lists(client) {
  return {
    tools: await walk(async (p) => {
      const r = await client.listTools(p);
      return { items: r.tools, nextCursor: r.nextCursor };
    }, 'name'),
    prompts: await walk(async (p) => {
      const r = await client.listPrompts(p);
      return { items: r.prompts, nextCursor: r.nextCursor };
    }, 'name'),
    resources: await walk(async (p) => {
      const r = await client.listResources(p);
      return { items: r.resources, nextCursor: r.nextCursor };
    }, 'uri'),
  };
}

async function pagesWalkWhole(paged) {
  const whole = await connect(stdio(WHOLE));
  const expected = await lists(whole);
  await whole.close();
  const got = await lists(paged);
  for (const list of ['tools', 'prompts', 'resources']) {
    assert.deepEqual(got[list].names, expected[list].names, list);
    assert.equal(expected[list].sizes.length, 1, `${list}: one page without a page size`);
    assert.ok(got[list].sizes.length > 1, `${list}: several pages`);
    assert.ok(got[list].sizes.every((n) => n <= 2), `${list}: ${got[list].sizes}`);
  }
  // A forged cursor: -32602.
  const first = await paged.listTools();
  assert.ok(first.nextCursor);
  const forged = first.nextCursor.slice(0, -2) + (first.nextCursor.endsWith('AA') ? 'BB' : 'AA');
  for (const cursor of [forged, 'not-a-cursor']) {
    try {
      await paged.listTools({ cursor });
      assert.fail(`cursor ${cursor} was accepted`);
    } catch (e) {
      assert.ok(e instanceof McpError, String(e));
      assert.equal(e.code, -32602, e.message);
      assert.match(e.message, /Invalid cursor for tools\/list/);
    }
  }
}

test('stdio: the SDK pages through every list', async () => {
  const client = await connect(stdio(PAGED));
  try {
    await pagesWalkWhole(client);
  } finally {
    await client.close();
  }
});

test('streamable HTTP: the SDK pages through every list', async () => {
  const { child, url } = await startHttp(BIN, PAGED);
  try {
    const client = await connect(new StreamableHTTPClientTransport(url));
    try {
      await pagesWalkWhole(client);
    } finally {
      await client.close();
    }
  } finally {
    child.kill();
  }
});
