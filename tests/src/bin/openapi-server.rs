//! A server made of one OpenAPI document, served by the CLI: what the official Python SDK
//! calls in `tests/tests/openapi_httpbin.rs`.
//!
//! `OPENAPI_SPEC` (the document's file), `OPENAPI_BASE_URL` (the mount's override),
//! `OPENAPI_BEARER` (the token of the document's `bearer` scheme), `OPENAPI_EXPOSURE`
//! (`flat`, `grouped` or `search`; flat by default).

use std::process::ExitCode;

use fusion_runtime::Server;
use fusion_runtime::openapi::{Credential, OpenApi};

#[tokio::main]
async fn main() -> ExitCode {
    let Ok(spec) = std::env::var("OPENAPI_SPEC") else {
        eprintln!("set OPENAPI_SPEC to an OpenAPI document");
        return ExitCode::FAILURE;
    };
    let mut api = OpenApi::file(spec).prefix("httpbin");
    if let Ok(url) = std::env::var("OPENAPI_BASE_URL") {
        api = api.base_url(url);
    }
    if let Ok(token) = std::env::var("OPENAPI_BEARER") {
        api = api.credential("bearer", Credential::bearer(token));
    }
    let mut builder = Server::builder().name("httpbin").openapi(api);
    match std::env::var("OPENAPI_EXPOSURE").as_deref() {
        Ok("grouped") => builder = builder.grouped(),
        Ok("search") => builder = builder.tool_search(true),
        _ => {}
    }
    match builder.build() {
        Ok(server) => fusion_runtime::cli::run(server).await,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
