#!/usr/bin/env python3
"""The official Python SDK `mcp` 2.3.0 speaking MCP 2026-07-28 to a Fusion
server, over stdio and stateless streamable HTTP. Run by .ci/run from a venv (`python3 -m venv target/py && target/py/bin/pip install mcp==2.3.0`).

Target: the conformance example (it carries every fixture once issue 18 lands):
  tools      test_tool_with_logging (3 info logs), test_simple_text, test_elicitation(message)
  prompt     test_prompt_with_arguments(arg1, arg2)
  resource   test://static-text, template test://template/{id}/data
  completion ref/prompt test_prompt_with_arguments, argument arg1
  listen     resourceSubscriptions test://watched-resource, changed by test_update_watched_resource
  pages      tools/list, prompts/list, resources/list with CONFORMANCE_PAGE_SIZE=2, walked by nextCursor
Usage: CONFORMANCE_BIN=target/debug/examples/conformance python3 modern_client.py

SDK facts this relies on (read from mcp 2.3.0 sources):
  * mcp.Client(mode="auto") probes `server/discover` at 2026-07-28 and adopts it
    (mcp/client/_probe.py); client.protocol_version is then "2026-07-28".
  * Every request is stamped with _meta protocolVersion / clientInfo / clientCapabilities and,
    over HTTP, MCP-Protocol-Version + Mcp-Method + Mcp-Name headers (session.py _make_modern_stamp).
  * log_level= on the Client stamps `io.modelcontextprotocol/logLevel` on every request;
    a per-call meta={LOG_LEVEL_META_KEY: ...} overrides it. No log_level => no opt-in.
  * elicitation_callback= makes clientCapabilities carry {"elicitation": {"form": {}, "url": {}}};
    call_tool drives InputRequiredResult rounds itself (mcp/client/_input_required.py): it calls
    the callback for each inputRequests entry and retries with inputResponses + requestState.
"""
from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp_types import LOG_LEVEL_META_KEY
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated

BIN = os.environ.get("CONFORMANCE_BIN", "target/debug/examples/conformance")
MODERN = "2026-07-28"


class Seen:
    """What arrived on the side channels (logs, elicitation requests, progress)."""

    def __init__(self) -> None:
        self.logs: list[types.LoggingMessageNotificationParams] = []
        self.elicitations: list[types.ElicitRequestParams] = []

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    async def on_elicit(self, context, params):  # ElicitationFnT
        self.elicitations.append(params)
        # Answer the form: what test_elicitation asks for (username, email).
        return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.com"})


def check(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)
    print(f"  ok  {what}")


async def exercise(make_client, label: str, listen: bool = True) -> None:
    print(f"== {label}")

    # 1. A tool call WITHOUT a log level: the server must send no notifications/message.
    quiet = Seen()
    async with make_client(logging_callback=quiet.on_log) as c:
        check(c.protocol_version == MODERN, f"negotiated {MODERN} through server/discover")
        check(c.server_info is not None and c.server_info.name == "fusion-conformance",
              "serverInfo stamped in the discover result _meta")
        r = await c.call_tool("test_tool_with_logging", {})
        check(not r.is_error, "tool call without a log level succeeds")
        check(quiet.logs == [], "no log without io.modelcontextprotocol/logLevel")

    # 2. The same call WITH a log level (client-wide), then a per-call override above the logs.
    loud = Seen()
    async with make_client(logging_callback=loud.on_log, log_level="info") as c:
        r = await c.call_tool("test_tool_with_logging", {})
        check(not r.is_error, "tool call with logLevel=info succeeds")
        check(len(loud.logs) == 3 and all(l.level == "info" for l in loud.logs),
              "its 3 info logs arrive on the call's own response stream")
        loud.logs.clear()
        await c.call_tool("test_tool_with_logging", {}, meta={LOG_LEVEL_META_KEY: "error"})
        check(loud.logs == [], "logLevel=error filters out info logs")
        # tools/list: deterministic order, cache hints (the SDK keeps them on the result)
        a = await c.list_tools(cache_mode="bypass")
        b = await c.list_tools(cache_mode="bypass")
        check([t.name for t in a.tools] == [t.name for t in b.tools], "tools/list order is deterministic")
        check(a.ttl_ms is not None and a.cache_scope in ("public", "private"), "tools/list carries ttlMs/cacheScope")

    # 3. Prompt, resource (static + template), completion, elicitation (MRTR).
    seen = Seen()
    async with make_client(elicitation_callback=seen.on_elicit) as c:
        p = await c.get_prompt("test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"})
        check(p.messages[0].content.text == "Prompt with arguments: arg1='hello', arg2='world'", "prompts/get")

        res = await c.read_resource("test://static-text", cache_mode="bypass")
        check(res.contents[0].text == "This is the content of the static text resource.", "resources/read static")
        res = await c.read_resource("test://template/123/data", cache_mode="bypass")
        check("123" in res.contents[0].text, "resources/read from template test://template/{id}/data")

        comp = await c.complete(
            types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
            {"name": "arg1", "value": "par"},
        )
        check(isinstance(comp.completion.values, list), "completion/complete answers values[]")

        r = await c.call_tool("test_elicitation", {"message": "Who are you?"})
        check(len(seen.elicitations) == 1, "the server asked once (InputRequiredResult.inputRequests)")
        check(seen.elicitations[0].message == "Who are you?", "elicitation message carried over")
        check("ada" in r.content[0].text and not r.is_error, "retry with inputResponses completed the call")

        # Unknown prompt / missing resource: JSON-RPC -32602 with data (2026 codes).
        for coro, what in [
            (c.get_prompt("test_prompt_with_argumentz", {}), "unknown prompt is -32602 naming the closest"),
            (c.read_resource("test://nope", cache_mode="bypass"), "missing resource is -32602 (not -32002)"),
        ]:
            try:
                await coro
                check(False, what)
            except MCPError as e:
                check(e.code == -32602 and e.data is not None, what)

    # 4. subscriptions/listen: the ack carries the accepted subset; a tool call on the same
    #    client changes test://watched-resource and the listen hears of it.
    if listen:
        async with make_client() as c:
            async with c.listen(resource_subscriptions=["test://watched-resource", "test://nope"],
                                tools_list_changed=True) as sub:
                check(sub.honored.resource_subscriptions == ["test://watched-resource"]
                      and sub.honored.tools_list_changed,
                      "listen acknowledged with the accepted subset (the unknown URI left out)")
                r = await c.call_tool("test_update_watched_resource", {})
                check(not r.is_error and "1 listening" in r.content[0].text, "the tool reached one listener")
                with anyio.fail_after(10):
                    event = await sub.__anext__()
                check(isinstance(event, ResourceUpdated) and event.uri == "test://watched-resource",
                      "notifications/resources/updated arrives on the listen")

    # 5. A client WITHOUT the elicitation capability: the tool answers an isError envelope.
    async with make_client() as c:
        r = await c.call_tool("test_elicitation", {"message": "Who are you?"})
        check(r.is_error and "elicitation" in r.content[0].text.lower(),
              "no elicitation capability -> ToolError saying so")


PAGED = {"CONFORMANCE_PAGE_SIZE": "2"}


async def walk(list_page, key: str) -> tuple[list[int], list[str]]:
    """Every page of one list, following nextCursor: the pages' sizes and the names in order."""
    sizes: list[int] = []
    names: list[str] = []
    cursor = None
    while True:
        items, cursor = await list_page(cursor)
        sizes.append(len(items))
        names += [str(getattr(i, key)) for i in items]
        if cursor is None:
            return sizes, names
        if len(sizes) >= 50:
            raise AssertionError(f"the pages never end: {sizes}")


async def all_lists(c) -> dict[str, tuple[list[int], list[str]]]:
    async def tools(cursor):
        r = await c.list_tools(cursor=cursor, cache_mode="bypass")
        return r.tools, r.next_cursor

    async def prompts(cursor):
        r = await c.list_prompts(cursor=cursor, cache_mode="bypass")
        return r.prompts, r.next_cursor

    async def resources(cursor):
        r = await c.list_resources(cursor=cursor, cache_mode="bypass")
        return r.resources, r.next_cursor

    return {"tools": await walk(tools, "name"), "prompts": await walk(prompts, "name"),
            "resources": await walk(resources, "uri")}


async def paging(make_whole, make_paged, label: str) -> None:
    """The lists cut into pages of 2 (CONFORMANCE_PAGE_SIZE): following nextCursor walks each
    whole, in the unpaginated order; a forged cursor is -32602."""
    print(f"== pagination, {label}")
    async with make_whole() as c:
        whole = await all_lists(c)
    async with make_paged() as c:
        paged = await all_lists(c)
        for name in ("tools", "prompts", "resources"):
            check(len(whole[name][0]) == 1, f"{name}: one page without a page size")
            check(len(paged[name][0]) > 1 and all(n <= 2 for n in paged[name][0]),
                  f"{name}: pages of at most 2 ({paged[name][0]})")
            check(paged[name][1] == whole[name][1], f"{name}: the pages walk the whole list, in order")
        first = await c.list_tools(cache_mode="bypass")
        cursor = first.next_cursor or ""
        forged = cursor[:-2] + ("BB" if cursor.endswith("AA") else "AA")
        try:
            await c.list_tools(cursor=forged, cache_mode="bypass")
            check(False, "a forged cursor is refused")
        except MCPError as e:
            check(e.code == -32602 and "Invalid cursor" in str(e), "a forged cursor is -32602")


def stdio_client_factory(env: dict[str, str] | None = None):
    def make(**kw):
        params = StdioServerParameters(command=BIN, args=["serve"], env={"RUST_LOG": "warn", **(env or {})})
        return Client(params, **kw)

    return make


async def with_stateless_http(body, env: dict[str, str] | None = None) -> None:
    proc = subprocess.Popen([BIN, "serve", "--http", "127.0.0.1:0", "--stateless"],
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "RUST_LOG": "warn", **(env or {})})
    try:
        url = None
        for line in proc.stderr:  # "fusion: serving MCP over streamable HTTP at http://127.0.0.1:PORT/mcp"
            m = re.search(r"streamable HTTP at (http\S+)", line)
            if m:
                url = m.group(1)
                break
        if url is None:
            raise RuntimeError("the HTTP server did not start")
        await body(lambda **kw: Client(url, **kw))
    finally:
        proc.terminate()
        proc.wait(timeout=5)


def raw_stdio_wire_check() -> None:
    """What the SDK hides (it fills defaults): resultType, ttlMs/cacheScope, serverInfo on the wire."""
    import json
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {}}
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"_meta": meta, "name": "test_simple_text", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/list",
         "params": {"_meta": {**meta, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}}},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
         "params": {"_meta": {**meta, "io.modelcontextprotocol/logLevel": "loud"},
                    "name": "test_simple_text", "arguments": {}}},
    ]
    out = subprocess.run([BIN, "serve"], input="".join(json.dumps(m) + "\n" for m in msgs),
                         capture_output=True, text=True, timeout=20).stdout
    by_id = {m.get("id"): m for m in map(json.loads, out.splitlines()) if "id" in m}
    print("== raw stdio wire")
    check(MODERN in by_id[1]["result"]["supportedVersions"], "discover lists 2026-07-28")
    for i in (1, 2, 3):
        r = by_id[i]["result"]
        check(r["resultType"] == "complete", f"id {i}: resultType complete")
        check(r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "fusion-conformance", f"id {i}: serverInfo in _meta")
    check(isinstance(by_id[2]["result"]["ttlMs"], int) and by_id[2]["result"]["cacheScope"] in ("public", "private"),
          "tools/list ttlMs + cacheScope")
    e = by_id[4]["error"]
    check(e["code"] == -32022 and e["data"]["requested"] == "2099-01-01" and MODERN in e["data"]["supported"],
          "unsupported version -> -32022 {supported, requested}")
    check(by_id[5]["error"]["code"] == -32602, "unknown logLevel -> -32602")


async def main() -> int:
    raw_stdio_wire_check()
    await exercise(stdio_client_factory(), "stdio")
    await with_stateless_http(lambda make: exercise(make, "stateless HTTP"))
    await paging(stdio_client_factory(), stdio_client_factory(PAGED), "stdio")
    await with_stateless_http(
        lambda paged: paging(stdio_client_factory(), paged, "stateless HTTP"), PAGED)
    print("all good")
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
