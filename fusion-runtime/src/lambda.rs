//! Serving as an AWS Lambda function (feature `lambda`): each invocation's HTTP event (a
//! function URL, API Gateway's HTTP or REST API, an ALB) answered by the same stateless
//! streamable HTTP endpoint `serve --http --stateless` serves — Host and Origin, the body
//! cap, authentication, rate limits, envelopes — with no listener and no session.
//!
//! ```no_run
//! # fn build() -> fusion_runtime::Server { unimplemented!() }
//! #[tokio::main]
//! async fn main() -> Result<(), fusion_runtime::lambda::Error> {
//!     fusion_runtime::lambda::run(build()).await
//! }
//! ```
//!
//! The endpoint is at `/mcp` (a function URL's `https://<id>.lambda-url.<region>.on.aws/mcp`).
//! Answers are buffered by default; set `FUSION_LAMBDA_INVOKE_MODE=response_stream` when the
//! function URL's invoke mode is `RESPONSE_STREAM`, and SSE answers (a call's progress and
//! logs, then its result) flow as they are written ([`InvokeMode`]). Who a client is — what
//! per-client rate limits count by — is the source IP of the event's request context
//! ([`client_key`]), or the token's subject when authentication is on.
//!
//! An instance keeps nothing between invocations that another instance could need: rate
//! limits, one-time confirmations and tasks agree across instances only through a shared
//! store (Redis: `store::RedisStore` and the others, or `FUSION_REDIS_URL` with the CLI's
//! `serve --lambda`). A task runs in the instance that took its call, which [`run`] keeps
//! open after the answer until the task ends (Lambda would freeze it); a server with task
//! actions and no shared task store logs a warning when it starts. `docs/serverless.md` is
//! the step-by-step guide (build, deploy, state on Redis).
//!
//! Reads: nothing itself. Writes: nothing; the functions are `mcp`'s.

pub use crate::mcp::lambda::{
    ALLOWED_HOSTS_VAR, ALLOWED_ORIGINS_VAR, Error, INVOKE_MODE_VAR, InvokeMode, LambdaHandler,
    LambdaOptions, client_key, run, run_with,
};
