// The MCP Inspector CLI (@modelcontextprotocol/inspector-cli, a client written by others)
// lists and calls the billing example's tools over stdio.
//
// Run from tests/conformance: npm ci && BILLING_BIN=... npm run inspector
//
// Pitfalls of inspector-cli 1.0.3 this works around: it finds its own package.json with a
// path checked relative to the working directory, so it must run from a folder whose parent
// has a package.json (this folder); it exits 0 even when a result has `isError: true`, so the
// flag is asserted on its JSON output; it coerces `--tool-arg` values to the schema's types,
// so wrong-typed arguments cannot be sent through it (the Rust and TypeScript e2e tests do) —
// and a numeric-looking value such as `id=9999` goes out as a number even for a string field.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.resolve(here, '../node_modules/@modelcontextprotocol/inspector-cli/build/cli.js');
const BIN = process.env.BILLING_BIN ?? path.resolve(here, '../../../target/debug/examples/billing');
const ENV = { ...process.env, RUST_LOG: 'warn' };
delete ENV.BILLING_OPERATOR_TOKEN;
delete ENV.BILLING_LEDGER_DIR;

function inspector(...args) {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [CLI, '--cli', BIN, 'serve', ...args],
      { cwd: here, env: ENV, timeout: 60_000 },
      (err, stdout, stderr) => {
        if (err) {
          reject(new Error(`inspector-cli ${args.join(' ')} failed: ${err.message}\n${stdout}\n${stderr}`));
          return;
        }
        try {
          resolve(JSON.parse(stdout));
        } catch (e) {
          reject(new Error(`inspector-cli printed no JSON (${e.message}):\n${stdout}\n${stderr}`));
        }
      },
    );
  });
}

const call = (tool, ...args) =>
  inspector('--method', 'tools/call', '--tool-name', tool, ...args.flatMap((a) => ['--tool-arg', a]));

const text = (result) => result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

test('tools/list shows every billing tool with a description and a strict schema', async () => {
  const { tools } = await inspector('--method', 'tools/list');
  const names = tools.map((t) => t.name);
  for (const name of ['billing_list_invoices', 'billing_get_invoice', 'billing_send_reminder']) {
    assert.ok(names.includes(name), `${name} missing from ${names.join(', ')}`);
  }
  for (const tool of tools) {
    assert.ok(tool.description?.length > 0, `${tool.name} has no description`);
    assert.equal(tool.inputSchema.type, 'object');
  }
  const get = tools.find((t) => t.name === 'billing_get_invoice');
  assert.equal(get.inputSchema.additionalProperties, false);
  assert.deepEqual(get.inputSchema.required, ['id']);
});

test('tools/call answers a real invoice', async () => {
  const result = await call('billing_get_invoice', 'id=inv_2026_0005');
  assert.notEqual(result.isError, true);
  assert.match(text(result), /"customer":"Hooli"/);
  assert.equal(result.structuredContent?.id, 'inv_2026_0005');
});

test('tools/call on a missing invoice reads the NOT_FOUND envelope', async () => {
  const result = await call('billing_get_invoice', 'id=inv_2026_9999');
  assert.equal(result.isError, true);
  const t = text(result);
  assert.match(t, /^<tool_error code="NOT_FOUND" severity="error">/);
  assert.match(t, /<recovery>List invoices first, then retry with a real ID<\/recovery>/);
  assert.match(t, /<action>billing_list_invoices<\/action>/);
  assert.match(t, /<detail key="requestedId">inv_2026_9999<\/detail>/);
});

test('tools/call with a malformed ID reads a validation error', async () => {
  const result = await call('billing_get_invoice', 'id=invoice-9');
  assert.equal(result.isError, true);
  assert.match(text(result), /^<validation_error action="billing_get_invoice">/);
  assert.match(text(result), /<field name="id">[^<]*You sent: 'invoice-9'/);
});

test('tools/call on a misspelled tool reads UNKNOWN_ACTION, not a JSON-RPC error', async () => {
  const result = await call('billing_get_invoce', 'id=inv_2026_0005');
  assert.equal(result.isError, true);
  assert.match(text(result), /^<tool_error code="UNKNOWN_ACTION"/);
  assert.match(text(result), /billing_get_invoice/);
});
