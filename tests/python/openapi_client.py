#!/usr/bin/env python3
"""The official Python SDK `mcp` 2.3.0 calling the tools a Fusion server made of httpbin's
own OpenAPI document (extended by the test with a body, a form, query arrays and a bearer
scheme). httpbin echoes each request, so what arrived is checked against what the document
says. Run by tests/tests/openapi_httpbin.rs with OPENAPI_BIN (tests' `openapi-server`) and
the server's environment (OPENAPI_SPEC, OPENAPI_BASE_URL, OPENAPI_BEARER).
Exits 1 on the first failed check."""
from __future__ import annotations

import json
import os
import sys

import anyio
from mcp import Client, StdioServerParameters

BIN = os.environ["OPENAPI_BIN"]


def check(cond: bool, what: str) -> None:
    if not cond:
        print(f"FAILED: {what}", flush=True)
        raise SystemExit(1)
    print(f"  ok  {what}", flush=True)


def text_of(r) -> str:
    return "\n".join(c.text for c in r.content if getattr(c, "text", None) is not None)


async def main() -> None:
    env = {k: os.environ[k] for k in ("OPENAPI_SPEC", "OPENAPI_BASE_URL", "OPENAPI_BEARER", "PATH") if k in os.environ}
    env["RUST_LOG"] = "warn"
    async with Client(StdioServerParameters(command=BIN, args=["serve"], env=env)) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        check("httpbin_anything.get_anything" not in tools and "httpbin_anything_get_anything" in tools,
              "flat tools named {prefix}_{tag}_{operation}")
        schema = tools["httpbin_anything_get_anything"].input_schema
        check(schema["properties"]["tags"]["type"] == "array", "query array parameter in the input schema")
        check("Authorization" not in tools["httpbin_auth_get_bearer"].input_schema.get("properties", {}),
              "the credential's header is not an argument")

        r = await c.call_tool("httpbin_anything_get_anything", {"tags": ["a", "b c"], "ids": [1, 2], "q": "x&y", "X-Trace": "t-1"})
        echo = json.loads(text_of(r))
        check(not r.is_error, "GET /anything answered")
        check(echo["args"] == {"tags": ["a", "b c"], "ids": "1|2", "q": "x&y"}, f"query encodings arrived as the document says: {echo['args']}")
        check(echo["headers"].get("X-Trace") == "t-1", "header parameter arrived")

        r = await c.call_tool("httpbin_anything_post_anything", {"body": {"name": "Ada", "n": 3}})
        echo = json.loads(text_of(r))
        check(echo["json"] == {"name": "Ada", "n": 3} and echo["headers"]["Content-Type"] == "application/json",
              "JSON body arrived as JSON")

        r = await c.call_tool("httpbin_anything_put_anything", {"body": {"user": "a b", "tag": ["x", "y"]}})
        echo = json.loads(text_of(r))
        check(echo["form"] == {"user": "a b", "tag": ["x", "y"]} and echo["headers"]["Content-Type"].startswith("application/x-www-form-urlencoded"),
              f"form body arrived URL-encoded: {echo['form']}")

        r = await c.call_tool("httpbin_auth_get_bearer", {})
        check(not r.is_error and json.loads(text_of(r)) == {"authenticated": True, "token": os.environ["OPENAPI_BEARER"]},
              "the configured bearer token reached the API")

        r = await c.call_tool("httpbin_anything_get_anything", {"Authorization": "Bearer stolen"})
        check(r.is_error and "<validation_error" in text_of(r) and "Authorization" in text_of(r),
              "an argument cannot carry a credential")

        for status, code in [(401, "AUTH_REQUIRED"), (403, "FORBIDDEN"), (404, "NOT_FOUND"), (409, "CONFLICT"),
                             (422, "VALIDATION_ERROR"), (429, "RATE_LIMITED"), (503, "SERVER_BUSY"), (500, "INTERNAL_ERROR")]:
            r = await c.call_tool("httpbin_status_codes_get_status_codes", {"codes": str(status)})
            t = text_of(r)
            check(r.is_error and f'code="{code}"' in t and f'<detail key="status">{status}</detail>' in t,
                  f"status {status} is {code}")
        r = await c.call_tool("httpbin_status_codes_get_status_codes", {"codes": "429"})
        check("<retry_after>" in text_of(r), "429 carries retry_after")

        r = await c.call_tool("httpbin_dynamic_data_get_delay_delay", {"delay": "two"})
        t = text_of(r)
        check(r.is_error and t.startswith('<validation_error action="httpbin_dynamic_data_get_delay_delay">')
              and "<field name=\"delay\">Invalid type. You sent: 'two'. Expected an integer." in t,
              "a bad argument is a <validation_error> naming the field")
    print("python sdk: all checks passed")


anyio.run(main)
