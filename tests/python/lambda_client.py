#!/usr/bin/env python3
"""The Lambda example (`examples/lambda`) under the local Lambda emulator (`cargo lambda
watch`), two function instances sharing one Redis, driven through their function URLs.
Run by scripts/ci-lambda, which starts the emulators and Redis.

  1. The official Python SDK (mcp 2.3.0) speaks MCP 2026-07-28 to each instance (the same
     checks modern_client.py makes of `serve --http --stateless`): instance A answers
     buffered, instance B streams (FUSION_LAMBDA_INVOKE_MODE=response_stream).
  2. Across the two instances, through Redis:
     - `billing_charge` (3 calls a minute per client) called 8 times, alternating A and B:
       exactly 3 pass, the rest answer RATE_LIMITED;
     - a `billing_refund` confirmation answered on A runs once; the same answered
       requestState sent to B is asked afresh (never run twice);
     - `nap_task` started as a task on A is polled to `completed` on B.

Usage: lambda_client.py URL_A URL_B   (each a function URL ending in /mcp)
"""
from __future__ import annotations

import json
import sys
import time

import urllib.request

import anyio
from mcp import Client

import modern_client
from modern_client import check

MODERN = "2026-07-28"


def meta(tasks: bool = False) -> dict:
    extensions = {"io.modelcontextprotocol/tasks": {}} if tasks else {}
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": extensions},
        "io.modelcontextprotocol/clientInfo": {"name": "lambda-client", "version": "1"},
    }


def message(content_type: str, text: str) -> dict:
    """The JSON-RPC answer: a JSON body, or the last `data:` event of an SSE one."""
    if content_type.startswith("text/event-stream"):
        events = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
        events = [e for e in events if e]
        if not events:
            raise AssertionError(f"an SSE answer without data: {text!r}")
        return json.loads(events[-1])
    return json.loads(text)


def rpc(url: str, method: str, params: dict, tasks: bool = False) -> dict:
    params = dict(params, _meta=meta(tasks))
    name = params.get("name") or params.get("taskId") or ""
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": method,
    }
    if name:
        headers["mcp-name"] = name
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=60) as r:
        return message(r.headers.get("content-type", ""), r.read().decode())


def call(url: str, tool: str, arguments: dict, **extra) -> dict:
    return rpc(url, "tools/call", dict({"name": tool, "arguments": arguments}, **extra))


def paid(url: str) -> int:
    m = call(url, "billing_get_invoice", {"id": "inv_2026_0002"})
    return m["result"]["structuredContent"]["paid_cents"]


def shared_rate_limit(a: str, b: str) -> None:
    print("== a per-client rate limit across two instances (Redis)")
    passed, limited = 0, 0
    for i in range(8):
        m = call([a, b][i % 2], "billing_charge", {"invoice_id": "inv_2026_0001", "amount_cents": 1})
        result = m["result"]
        text = result["content"][0]["text"]
        if result.get("isError"):
            check('code="RATE_LIMITED"' in text and "<retry_after>" in text,
                  f"call {i + 1} refused RATE_LIMITED with a retry_after")
            limited += 1
        else:
            passed += 1
    check(passed == 3 and limited == 5, f"3 of 8 calls passed, 5 refused (got {passed} and {limited})")


def one_time_confirmation(a: str, b: str) -> None:
    print("== a confirmation answered on one instance never runs on the other (Redis)")
    refund = {"invoice_id": "inv_2026_0002", "amount_cents": 500}
    before_a, before_b = paid(a), paid(b)
    first = call(a, "billing_refund", refund)["result"]
    check(first["resultType"] == "input_required", "the refund asks for a confirmation first")
    answered = {
        "requestState": first["requestState"],
        "inputResponses": {"e0": {"action": "accept", "content": {"invoice_id": "inv_2026_0002", "reason": "fraud"}}},
    }
    done = call(a, "billing_refund", refund, **answered)["result"]
    check(done.get("structuredContent", {}).get("amount_cents") == 500, "answered on A, the refund ran")
    check(paid(a) == before_a - 500, "A's invoice shows the refund")
    again = call(b, "billing_refund", refund, **answered)["result"]
    check(again["resultType"] == "input_required", "the same answered state on B is asked afresh")
    again = call(a, "billing_refund", refund, **answered)["result"]
    check(again["resultType"] == "input_required", "and on A again, too")
    check(paid(b) == before_b and paid(a) == before_a - 500, "no refund ran twice")


def task_across_instances(a: str, b: str) -> None:
    print("== a task started on one instance, polled to its end on the other (Redis)")
    m = rpc(a, "tools/call", {"name": "nap_task", "arguments": {"ms": 1500}}, tasks=True)
    result = m["result"]
    check(result["resultType"] == "task" and result["status"] == "working", "A answers the task, working")
    task = result["taskId"]
    deadline = time.monotonic() + 30
    while True:
        got = rpc(b, "tasks/get", {"taskId": task}, tasks=True)["result"]
        if got["status"] != "working" or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    check(got["status"] == "completed", f"B reads the task completed within 30 s (got {got['status']})")
    result = got.get("result", {})
    answer = result.get("structuredContent") or json.loads(result["content"][0]["text"])
    check(answer == {"slept_ms": 1500} and not result.get("isError"),
          f"with the task's result ({answer})")


async def sdk(url: str, label: str, listen: bool) -> None:
    await modern_client.exercise(lambda **kw: Client(url, **kw), label, listen=listen)


def main() -> int:
    a, b = sys.argv[1], sys.argv[2]
    # `subscriptions/listen` is left out: a listen is a stream that outlives its call, and an
    # instance answers one invocation at a time (docs/serverless.md).
    anyio.run(sdk, a, "Lambda instance A (buffered)", False)
    anyio.run(sdk, b, "Lambda instance B (response streaming)", False)
    shared_rate_limit(a, b)
    one_time_confirmation(a, b)
    task_across_instances(a, b)
    print("all good")
    return 0


if __name__ == "__main__":
    sys.exit(main())
