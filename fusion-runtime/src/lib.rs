//! Fusion: MCP servers whose errors are written for the language model that reads them.
//!
//! Every failure becomes a structured envelope the agent can act on — a `<tool_error>` with a
//! code, a recovery hint and the actions to call instead, or a `<validation_error>` that says,
//! field by field, what was sent and what was expected.
//!
//! ```
//! use fusion_runtime::{error, codes::NOT_FOUND};
//!
//! let e = error(NOT_FOUND, "No invoice with that ID")
//!     .recovery("List invoices first, then retry with a real ID")
//!     .available_actions(["billing.list_invoices"]);
//! println!("{}", e.render());
//! ```
//!
//! # Features
//!
//! Every transport and role is a feature. The defaults are what the README's first tool
//! uses: the CLI (`cli::run`: stdio and streamable HTTP, `tools`, `call`, `lock`, `heal`) and
//! its logging. The clients, JWT, Redis, metrics, the gateway, Lambda and trace export are
//! opt-in, one feature each, or all of them with `full`; add `testing` in
//! `[dev-dependencies]` for the test kit. A server that speaks only stdio builds without axum,
//! hyper, reqwest, clap, jsonwebtoken or redis:
//!
//! ```toml
//! fusion-runtime = { version = "0.1", default-features = false, features = ["server-stdio"] }
//! ```
//!
//! | feature | default | what it enables | rmcp features | pulls in |
//! |---|---|---|---|---|
//! | `server-stdio` | with `cli` | [`mcp::serve_stdio`], [`mcp::serve_io`]: a server over stdio | `server`, `transport-io` | — |
//! | `server-http` | with `cli` | [`mcp::http_router`], [`mcp::spawn_http`]: a server over streamable HTTP, with its hardening (hosts, origins, connection and session caps, client identity, cancellation) | `server`, `transport-streamable-http-server` | axum, hyper |
//! | `client-stdio` | no | [`FusionClient::spawn`](client::FusionClient::spawn): the typed client over a child process's stdio | `client`, `transport-child-process` | — |
//! | `client-http` | no | [`FusionClient::connect_http`](client::FusionClient::connect_http): the typed client over streamable HTTP | `client`, `transport-streamable-http-client-reqwest` | reqwest |
//! | `cli` | yes | [`cli`]: `serve \| tools \| call \| heal \| lock` for every server (turns on `server-stdio`, `server-http` and `healing`) | — | clap |
//! | `tracing-subscriber` | yes | [`cli::init_tracing`]: the CLI's logging on stderr, filtered by `RUST_LOG` | — | tracing-subscriber |
//! | `auth-jwt` | no | [`JwtVerifier`](auth::JwtVerifier): the built-in [`TokenVerifier`](auth::TokenVerifier) (HS256, RS256, ES256, JWKS files); with `cli`, the `serve --auth-*` flags ([`AuthArgs`](cli::AuthArgs)) | — | jsonwebtoken |
//! | `redis` | no | [`RedisStore`](store::RedisStore): rate limits shared by every instance through Redis; with `cli`, the `serve --redis-*` flags ([`StoreArgs`](cli::StoreArgs)) | — | redis |
//! | `metrics` | no | [`metrics`]: calls, latency, validation issues, healed calls, refusals, open connections / sessions / listens, store errors in the Prometheus text format; [`http::spawn_metrics`] and `serve --metrics ADDR` serve them | — | prometheus-client |
//! | `gateway` | no | [`gateway`]: [`ServerBuilder::mount`] upstream MCP servers over stdio or streamable HTTP ([`Upstream`](gateway::Upstream)), hand off to them, `HANDOFF_*` envelopes (turns on `server-stdio`, `client-stdio`, `client-http`) | — | (the client's) |
//! | `lambda` | no | [`lambda`]: serve as an AWS Lambda function (`lambda::run`): API Gateway, ALB and function-URL events answered by the stateless endpoint, buffered or streamed; with `cli`, `serve --lambda` (turns on `server-http`) | — | lambda_http |
//! | `otel` | no | `serve --otlp-endpoint URL` (or `OTEL_EXPORTER_OTLP_ENDPOINT`): the request and stage spans (target [`server::SPANS`]) exported as OTLP/HTTP protobuf, continuing the client's W3C `traceparent` (turns on `cli`, `tracing-subscriber`) | — | opentelemetry, opentelemetry_sdk, opentelemetry-otlp (over reqwest), tracing-opentelemetry |
//! | `healing` | with `cli` | `healing`: the healing benchmark for your own server — broken calls from each tool's schema, repaired from the answers' text alone, a report per kind and per tool (`healing::run`, `TestServer::healing`, the CLI's `heal`); with a client feature, `healing::remote` for any MCP server (the `fusion-heal` command) | — | regex-syntax |
//! | `full` | no | every feature above but `testing` | | |
//! | `openapi` | no | `openapi`: an OpenAPI 3.1, 3.0 or Swagger 2.0 document's operations as validated actions that call the API (`ServerBuilder::openapi`), the `openapi gen` code generator; see `docs/openapi.md` | — | reqwest (without TLS of its own; the same version as the MCP HTTP client), serde_yaml_ng |
//! | `testing` | no | `testing`: the test kit for your own tools — in-process calls as a given caller, envelopes read back, snapshot-friendly renderings, `testing::advance` on tokio's paused clock (turns on tokio's `test-util`); for `[dev-dependencies]` | — | — |
//!
//! Without any of them the crate still has the envelope, validation, the derive and
//! `#[tool_action]`, the [`Server`] and its pipeline (callable in process), contracts, the
//! envelope parser ([`client::parse_envelope`]), the in-process guards and the
//! [`RateLimitStore`](store::RateLimitStore) trait, and the [`auth`] types a custom verifier
//! implements ([`Principal`], [`TokenVerifier`](auth::TokenVerifier),
//! [`Auth`](auth::Auth), scopes). Authentication over HTTP (`401`, the Protected Resource
//! Metadata) comes with `server-http`, whatever the verifier.
//!
//! # Guides
//!
//! The repository's `docs/` holds a guide per topic, its Rust compiled as doctests: every
//! `#[fusion(..)]` and `#[tool_action(..)]` key and the line each failure writes (`inputs.md`),
//! the envelope's rules and the files of its cases (`envelope.md`), validation
//! and the envelope (`errors.md`), actions, prompts and resources (`server.md`), exposure and
//! naming (`exposure.md`), transports and protocol versions (`transports.md`), network and
//! authentication (`network.md`), state across instances (`state.md`), the gateway
//! (`gateway.md`), operations (`operations.md`), traces (`tracing.md`) and the test kit
//! (`testing.md`), MCP tasks (`tasks.md`). The README is the front page: one server, one
//! test, where to go next; `llms.txt` at the root is the same API in one page for a coding
//! agent.
//!
//! # Modules
//!
//! One module per concern, each readable without the others. Arrows point one way — `mcp →
//! server → {contract, action → context} → {validation, guard, schema, envelope}` — and no
//! module imports one that imports it back, directly or around a circle; nor do two files of
//! one module. `tests/tests/module_graph.rs` reads the sources and holds the crate to this
//! table (a row per module, its last column exactly what the module imports), to `rmcp` only
//! in `mcp` (and in `client` and `cli`, which speak MCP as a client), `axum` only in `mcp` and
//! `http`, and
//! to module names that differ by more than a letter.
//!
//! | module | owns | may import |
//! |---|---|---|
//! | [`envelope`] | [`ToolError`], [`ErrorCode`], [`Severity`], the fluent builder, XML rendering and escaping | nothing of the crate |
//! | [`schema`] | the JSON Schema document as data: walking it, `$ref` resolution, annotation keywords, the schema shown to agents | nothing of the crate |
//! | [`validation`] | the entry point (`from_arguments`), [`Issue`], the `<validation_error>` formatter; the deprecated fields of an input and which ones a call sent (`deprecated`); `rules/`: one file per rule; `jsonschema` the one engine that reads schemas | `envelope`, `schema` |
//! | [`input`] | the [`ToolInput`](trait@ToolInput) trait the derive implements, [`JsonObject`] | `validation` |
//! | [`guard`] | concurrency slots, rate limiters and what a call gets from a shared rate-limit store, timeouts | `envelope`, `store` |
//! | [`metrics`] | what a running server counts (calls by tool and outcome, latency, validation issues by field, healed calls, refusals by bound, open connections / sessions / listens, store errors, upstream state) and its Prometheus text ([`metrics::render`], feature `metrics`) | nothing of the crate |
//! | [`store`] | what outlives a request and must agree across instances: one-time ids ([`OnceStore`](store::OnceStore): MRTR confirmations, delegation ids), in process or in Redis; what a change notification is ([`Change`](store::Change)) and how it reaches every instance ([`ChangeBus`](store::ChangeBus), Redis pub/sub); MCP tasks ([`TaskStore`](store::TaskStore): status, result, owner, expiry, the running instance's lease and cancel); rate-limit buckets ([`RateLimitStore`](store::RateLimitStore), in process or in Redis); the one Redis connection they all open | `metrics` |
//! | [`auth`] | who is calling: [`Principal`], [`TokenVerifier`](auth::TokenVerifier) and the JWT verifier (`auth-jwt`), scopes, Protected Resource Metadata, `seal` (the HMAC that signs delegation tokens, gateway handles and list cursors), delegation tokens | `envelope`, `store` |
//! | [`context`] | what a call carries: [`CallContext`](context::CallContext), [`Context<S>`](Context), shared states, [`RequestScope`](context::RequestScope), who is calling ([`ClientKey`](context::ClientKey)), log levels, the progress / log sink ([`RequestSink`](context::RequestSink)), change notifications ([`Notifier`], joined to a [`ChangeBus`](store::ChangeBus) across instances) | `auth`, `envelope`, `input`, `store` |
//! | [`action`] | what `#[tool_action]` registers: [`ActionInfo`], the one [`Hints`] type, [`ActionLimits`], [`TaskSupport`], handler outcomes, how a handler's error becomes a failure ([`failure_from`](action::failure_from)), how actions become MCP tools ([`Exposure`](action::Exposure), flat or grouped: the server and the typed client place tools by it) | `context`, `envelope`, `guard`, `input`, `schema`, `store`, `validation` |
//! | [`completion`] | `completion/complete` for prompt arguments and resource-template parameters: a string enum's values, or the completer a prompt or template names | `context`, `input`, `schema` |
//! | [`prompt`](mod@prompt) | what `#[prompt]` registers: name, description, typed arguments, the handler returning messages | `action`, `completion`, `context`, `envelope`, `input`, `resource`, `validation` |
//! | [`resource`](mod@resource) | what `#[resource]` registers: a URI or a URI template with typed, validated parameters, the handler returning contents | `action`, `completion`, `context`, `envelope`, `input`, `validation` |
//! | [`contract`] | tool contracts, the lockfile, the table-driven diff (`diff/`: `walk`, `keywords`, `metadata`), `<contract_awareness>` | `action`, `envelope`, `schema`, `validation` |
//! | [`server`] | the registry (`registry`: one [`ActionDescriptor`](server::ActionDescriptor) per action — metadata, handler, guards), routing (flat / grouped; `group`: a grouped tool's schema and hints), the admit stage's guards (`limits`), the one call pipeline, middleware, what each client sees (`visibility`; `listing`: method middleware, page size, icons, `hide_forbidden`), [`ToolSpec`](server::ToolSpec) | `action`, `auth`, `completion`, `context`, `contract`, `envelope`, `guard`, `input`, `metrics`, `prompt`, `resource`, `schema`, `store`, `validation` |
//! | [`mcp`] | the only module that names `rmcp` (with `http`, the only ones that name `axum`), in two sides with one doorway: `mcp/http/` (the streamable HTTP endpoint: the request steps, the door, sessions, authentication, cancellation, error rewriting, on `http`'s listener) works out a request's facts once into `mcp/facts.rs`, which `mcp/handlers/` reads (the `ServerHandler`: tools in rmcp's types, prompts, resources, MCP tasks (with the 2025-11-25 task methods rmcp does not parse, for both transports), elicitation, a request's scope and its notifier over the peer, the lists in pages behind sealed cursors); `mcp/jsonrpc/` checks a message before rmcp for both transports; stdio; the gateway's upstream connections (opened by `client`'s one connector) | `action`, `auth`, `client`, `completion`, `context`, `envelope`, `gateway`, `guard`, `http`, `input`, `metrics`, `prompt`, `server`, `store` |
//! | [`http`] | serving HTTP, whatever is served (feature `server-http`; nothing of MCP): the listener (connection caps, the drain) generic over the service it serves, client identity ([`ForwardedHeader`](http::ForwardedHeader)) and the forwarded client's cap, `/healthz` and `/readyz` ([`ReadyCheck`](http::ReadyCheck)), the metrics listener ([`spawn_metrics`](http::spawn_metrics)), a request body bounded in size and time | `context`, `metrics`, `store` |
//! | [`gateway`] | mounted upstream MCP servers ([`Upstream`](gateway::Upstream), [`MountOptions`](gateway::MountOptions)): prefixing, connection state, bounded jittered backoff and the circuit, handoff (2025 sessions, 2026-07-28 handles), the `HANDOFF_*` envelopes; the connections themselves are `mcp`'s | `action`, `auth`, `client`, `context`, `envelope`, `guard`, `input`, `metrics`, `server`, `store`, `validation` |
//! | [`client`] | the envelope parser (quick-xml), [`FusionClientError`](client::FusionClientError), the typed client and its tasks, the one place an rmcp client connection is opened (`transport`: a child's stdio or streamable HTTP, then the lifecycle) | `action`, `envelope` |
//! | `openapi` | an OpenAPI 3.1 / 3.0 / Swagger 2.0 document's operations as actions (feature `openapi`): what to mount (`mount`), reading the document and its `$ref`s (`document`), its schemas as JSON Schema 2020-12 (`schema`), each operation's plan (`operation`), credentials (`security`), the action and its HTTP request (`call`), the answer as a result or an envelope (`reply`), the Rust of curated operations (`generate`) | `action`, `context`, `envelope`, `input`, `server`, `validation` |
//! | `healing` | the healing benchmark for any server (feature `healing`, on with `testing` and `cli`): broken calls generated from each tool's schema (`cases`), a reader that repairs them from the answer's text alone (`reader`), the per-kind and per-tool report; in process, or over a `FusionClient` to any MCP server (`remote`, what the `fusion-heal` command runs) | `auth`, `client`, `context`, `envelope`, `server`, `validation` |
//! | `testing` | the test kit (feature `testing`, off by default): `TestServer` calls actions in process as a given caller, `TestCall` reads the answer back with the client's parser, stable renderings for snapshots, `advance` on tokio's paused clock, the healing benchmark on the kit's server | `action`, `auth`, `client`, `context`, `envelope`, `healing`, `input`, `server` |
//! | [`lambda`] | serving as an AWS Lambda function (feature `lambda`): the names users call; the adapter is `mcp`'s (`mcp/lambda.rs`), which alone names axum | `mcp` |
//! | [`cli`] | `serve \| tools \| call \| heal \| lock` for every server (and `openapi gen` with the feature `openapi`) | `auth`, `contract`, `guard`, `healing`, `http`, `mcp`, `openapi`, `server`, `store` |
//! | `__private` | what the macros' expansions call | `action`, `validation` |
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod auth;
pub mod client;
pub mod context;
pub mod contract;
pub mod envelope;
#[cfg(feature = "gateway")]
#[cfg_attr(docsrs, doc(cfg(feature = "gateway")))]
pub mod gateway;
pub mod guard;
#[cfg(feature = "server-http")]
#[cfg_attr(docsrs, doc(cfg(feature = "server-http")))]
pub mod http;
pub mod input;
#[cfg(feature = "lambda")]
#[cfg_attr(docsrs, doc(cfg(feature = "lambda")))]
pub mod lambda;
pub mod metrics;
#[cfg(feature = "openapi")]
#[cfg_attr(docsrs, doc(cfg(feature = "openapi")))]
pub mod openapi;
pub mod store;

pub use envelope::{
    Content, ErrorCode, RetryAfter, Severity, ToolError, ToolResponse, codes, error,
};
pub mod validation;

pub use input::{JsonObject, ToolInput};
pub use validation::{Issue, IssueKind, ValidationReport};

// `#[derive(ToolInput)]` (issue 3)
#[doc(hidden)]
pub mod __private;
pub mod schema;
/// Derives [`ToolInput`](trait@ToolInput): one JSON Schema (draft 2020-12) from the struct's
/// fields, doc comments and `#[fusion(..)]` attributes — shown to agents by `tools/list` and
/// run on every call — then serde on the parsed arguments, then custom validators.
///
/// Every problem is found in one pass and becomes a `<field>` line of a
/// `<validation_error>` ([`ValidationReport`]).
///
/// # Field attributes
///
/// | key | applies to | schema keyword | issue kind |
/// |---|---|---|---|
/// | `length(min = n, max = n)` | strings | `minLength`, `maxLength` | `too_small`, `too_big` |
/// | `range(min = x, max = x)` (inclusive) | numbers | `minimum`, `maximum` | `too_small`, `too_big` |
/// | `range(exclusive_min = x, exclusive_max = x)` | numbers | `exclusiveMinimum`, `exclusiveMaximum` | `too_small`, `too_big` |
/// | `items(min = n, max = n)` | arrays (`Vec`, sets, …) | `minItems`, `maxItems` | `too_small`, `too_big` |
/// | `email` | strings | `format: "email"` | `invalid_format` |
/// | `url` | strings | `format: "uri"` | `invalid_format` |
/// | `uuid` | strings | `format: "uuid"` | `invalid_format` |
/// | `date_time` | strings | `format: "date-time"` | `invalid_format` |
/// | `date` | strings | `format: "date"` | `invalid_format` |
/// | `ipv4` | strings | `format: "ipv4"` | `invalid_format` |
/// | `ipv6` | strings | `format: "ipv6"` | `invalid_format` |
/// | `pattern = "regex"` (ECMA-262, as the validator reads it; checked at compile time by the same engine) | strings | `pattern` | `invalid_format` |
/// | `multiple_of = x` (> 0) | numbers | `multipleOf` | `not_multiple_of` |
/// | `expected = "…"` | any field | — | replaces the "Expected …" text of every issue at the field |
/// | `description = "…"` | any field | `description` (else the doc comment) | — |
/// | `validate = path::to_fn` | any field | — (describe it in the doc comment) | `custom` |
/// | `deprecated = "use `due_date`"` | optional fields (`Option`, serde default) | `deprecated: true`; the note ends the `description` | — (a call that sends it still works, with a `DEPRECATED` warning naming the field) |
///
/// A `range` takes `min` or `exclusive_min` (not both) and `max` or `exclusive_max`. One
/// format per field, and a format excludes `pattern`. `validate` names a
/// `fn(&T) -> Result<(), E>` with `E: Display`, where `T` is the field's type — or, for an
/// `Option<T>` field, the inner type, and the check runs only when a value was sent. Its
/// message becomes the `custom` line.
///
/// # Container attributes
///
/// | key | schema | effect |
/// |---|---|---|
/// | `allow_unknown_fields` | no `additionalProperties: false` | extra keys are ignored instead of `unrecognized_keys` |
/// | `description = "…"` | `description` (else the doc comment) | — |
/// | `#[serde(rename = "…")]` (or `rename(deserialize = "…")`) | the schema's name: its `$defs` key, `$ref`s and root `title` (`rename_all` renames fields only) | ASCII letters, digits, `_`, `-`, `.` only, else a compile error |
///
/// # Types and serde
///
/// Field types get their schema from [`schemars`](https://docs.rs/schemars): derive
/// `Deserialize` and `schemars::JsonSchema` on enums of unit variants to make string enums
/// (`invalid_value`). Integer types carry their range (`300` for a `u8` is `too_big`).
/// schemars' Rust number formats (`uint32`, `int64`, `double`, …) are not JSON Schema formats
/// and are stripped from the schema; the range stays in `minimum` / `maximum`. Nested
/// `#[derive(ToolInput)]` structs, `Vec<T>` and `Option<T>` work, with paths such as
/// `items.0.sku`. The derive implements `schemars::JsonSchema` for the struct, so do not
/// derive it as well.
///
/// The struct derives `serde::Deserialize` itself. The serde attributes that change the JSON
/// shape are read: `rename`, `rename(deserialize = ..)`, `rename_all`, `default` (field or
/// container: the key becomes optional), `skip` / `skip_deserializing` (left out of the
/// schema). `alias`, `flatten`, `with`, `deserialize_with`, `tag`, `untagged`, `transparent`,
/// `from` and `try_from` are compile errors: the schema could not describe what serde
/// accepts. An `Option<T>` field or a field with a default is optional; every other field is
/// required.
///
/// # Example
///
/// ```
/// use fusion_runtime::ToolInput;
/// use serde::Deserialize;
///
/// fn not_weekend(days: &u32) -> Result<(), String> {
///     if *days % 7 == 0 { Err("Reminders are not sent on whole weeks".into()) } else { Ok(()) }
/// }
///
/// /// Send a payment reminder for an overdue invoice.
/// #[derive(Deserialize, ToolInput)]
/// struct SendReminder {
///     /// The invoice, e.g. inv_2026_0001.
///     #[fusion(pattern = "^inv_[0-9]{4}_[0-9]{4}$", expected = "an invoice ID like inv_2026_0001")]
///     invoice_id: String,
///     /// Where the reminder goes.
///     #[fusion(email)]
///     email: String,
///     #[fusion(range(min = 1), validate = not_weekend)]
///     days_overdue: u32,
/// }
///
/// let schema = SendReminder::input_schema();
/// assert_eq!(schema["additionalProperties"], false);
///
/// let report = SendReminder::from_arguments(&serde_json::json!({
///     "invoice_id": "inv_2026_0001", "email": "not-an-email", "days_overdue": 3
/// }))
/// .err()
/// .unwrap();
/// assert_eq!(
///     report.render("billing.send_reminder"),
///     "<validation_error action=\"billing.send_reminder\">
///   <field name=\"email\">Invalid email format. You sent: 'not-an-email'. Expected a valid email address.</field>
///   <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>
/// </validation_error>"
/// );
/// ```
pub use fusion_macros::ToolInput;

// `#[tool_action]`, the pipeline, MCP, CLI (issue 4)
pub mod action;
#[cfg(feature = "cli")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
pub mod cli;
#[cfg(feature = "healing")]
#[cfg_attr(docsrs, doc(cfg(feature = "healing")))]
pub mod healing;
#[cfg(any(feature = "server-stdio", feature = "server-http"))]
#[cfg_attr(
    docsrs,
    doc(cfg(any(feature = "server-stdio", feature = "server-http")))
)]
pub mod mcp;
pub mod server;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;

#[allow(deprecated)]
pub use action::ActionHints;
pub use action::{
    ActionInfo, ActionLimits, Hints, IntoActionOutput, TaskSupport, ToolAction, WithWarnings,
};
pub use auth::Principal;
pub use context::Notifier;
pub use server::{Context, LogLevel, Server, ServerBuilder};

// Prompts, resources, completions (issue 18)
pub use server::catalog;
pub mod completion;
pub mod prompt;
pub mod resource;

pub use completion::CompletionRequest;
pub use prompt::{PromptAction, PromptArguments, PromptReply};
pub use resource::{ResourceAction, ResourceContent};

/// Derives [`PromptArguments`](trait@PromptArguments) next to `ToolInput`: checks at compile
/// time that every field is something MCP can carry as a prompt argument — a `String`, an
/// `Option<String>` or a string enum. A number, a boolean, a list or a map is
/// `expected PromptFieldOk, found PromptArgumentsAreStrings`; a nested struct is
/// `… found NestedObjectsAreNotPromptArguments`. Fields with `#[serde(skip)]` are not checked.
pub use fusion_macros::PromptArguments;

/// Derives [`Elicitable`](trait@context::Elicitable) next to `ToolInput`, for a type
/// [`Context::elicit`](context::CallContext::elicit) asks the user for: checks at compile time
/// that no field is a nested object, a list of objects or a map (a form is flat): such a
/// field is `expected ElicitFieldOk, found NestedObjectsCannotBeElicited`.
pub use fusion_macros::Elicitable;

/// Turns an `async fn` into a prompt: leaves the function as written and emits a companion
/// struct (`PaymentReminderPrompt` for `fn payment_reminder`) implementing [`PromptAction`];
/// register it with [`ServerBuilder::prompt`].
///
/// The function takes nothing, the arguments (a struct deriving `ToolInput` and
/// [`PromptArguments`](derive@PromptArguments)), or the arguments then a `Context<S>`
/// (`prompt::NoArguments` for a prompt with state but no arguments). It returns
/// `Result<PromptReply, E>`: a `ToolError` goes out as its envelope, any other error as
/// `INTERNAL_ERROR`. Its doc comment is the description.
///
/// | key | type | meaning |
/// |---|---|---|
/// | `name` | string | dotted name (`billing.payment_reminder`), shown with the tool separator; the function name by default |
/// | `title` | string | a human-readable title |
/// | `description` | string | replaces the doc comment |
/// | `complete(arg = path, ..)` | function paths | a completer per argument: `async fn(CompletionRequest) -> Vec<String>` or `async fn(CompletionRequest, Context<S>) -> Vec<String>` |
/// | `icon` | string or list, repeatable | an MCP 2025-11-25 icon, as for `#[tool_action]`: `icon = "https://.."` or `icon(src = "..", mime_type = "..", sizes = "48x48 any", theme = "light")`, checked at compile time; [`ServerBuilder::icons`](crate::ServerBuilder::icons) for the same prompt replaces it |
///
/// See the [`prompt`](mod@prompt) module for an example.
pub use fusion_macros::prompt;

/// Turns an `async fn` into a resource or a resource template: leaves the function as written
/// and emits a companion struct (`InvoiceResource` for `fn invoice`) implementing
/// [`ResourceAction`]; register it with [`ServerBuilder::resource`].
///
/// A static resource's function takes nothing or a `Context<S>`; a template's takes its
/// parameters (a `ToolInput` struct whose fields are exactly the template's variables), then
/// optionally a `Context<S>`. It returns `Result<ResourceContent, E>`; a `ToolError` with code
/// `NOT_FOUND` is the protocol's resource-not-found. Its doc comment is the description.
///
/// | key | type | meaning |
/// |---|---|---|
/// | `uri` | string | a static resource's URI (`billing://policy`) |
/// | `template` | string | an RFC 6570 level-1 URI template (`billing://invoices/{id}`) |
/// | `name` | string | a short name; the function name by default |
/// | `title` | string | a human-readable title |
/// | `description` | string | replaces the doc comment |
/// | `mime` | string | the contents' MIME type (a `ResourceContent` can set its own) |
/// | `complete(param = path, ..)` | function paths | a completer per template parameter, as for `#[prompt]` |
/// | `icon` | string or list, repeatable | an MCP 2025-11-25 icon, as for `#[tool_action]`; [`ServerBuilder::icons`](crate::ServerBuilder::icons) for the same URI or URI template replaces it |
///
/// See the [`resource`](mod@resource) module for an example.
pub use fusion_macros::resource;

/// The MCP SDK Fusion speaks through, re-exported so servers and clients use the same version.
pub use rmcp;

/// The README's Rust examples, compiled (and run, unless marked `no_run`) as doctests; the
/// ones marked `ignore` are fragments (`examples/billing` and the tests compile the same calls
/// whole).
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
mod readme {}

#[doc = include_str!("../TOOL_ACTION.md")]
pub use fusion_macros::tool_action;
