//! The Redis [`ChangeBus`]: `PUBLISH` on one channel (`<prefix>:changes`), and one
//! `SUBSCRIBE` connection per instance that reconnects with bounded backoff.
//!
//! A message is small JSON: `{"from": "<instance id>", "change": {"kind": "resource_updated",
//! "uri": "…"}}` (kinds `resource_updated`, `resources_list_changed`, `tools_list_changed`,
//! `prompts_list_changed`). Anyone who can publish on the channel can send anything, so what
//! is read is checked: a message over [`MAX_MESSAGE_BYTES`], one that is not that JSON, a
//! URI over [`MAX_URI_BYTES`] or an unknown kind is dropped (and counted in a debug line),
//! never delivered. An instance skips its own messages (its id is drawn at random).
//!
//! Pub/sub keeps nothing: while this instance is cut off from Redis, what the others publish
//! never reaches it, and what it publishes never reaches them (its own listeners still get
//! it). Back online, it tells its listeners that every list changed (see
//! [`Remote::Resumed`]); a `resources/updated` missed meanwhile is not sent again.

use std::fmt;
use std::time::Duration;

use futures::StreamExt as _;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use redis::aio::ConnectionManager;
use serde::Deserialize;
use tokio::sync::mpsc;

use super::connection::DEFAULT_REDIS_TIMEOUT;
use crate::store::StoreError;
use crate::store::bus::{Change, ChangeBus, Remote};

/// Messages longer than this are dropped unparsed (a change is a few hundred bytes). The
/// `redis` crate reads a message whole before this check; what bounds that read is Redis's
/// own limit on a subscriber's output buffer (`client-output-buffer-limit pubsub`, 32 MB
/// by default), past which Redis drops the subscription and this instance subscribes again.
pub const MAX_MESSAGE_BYTES: usize = 8 * 1024;

/// URIs longer than this are dropped (no subscription can name one: the server takes
/// shorter URIs only).
pub const MAX_URI_BYTES: usize = 4096;

/// The first wait before reconnecting; it doubles up to [`MAX_BACKOFF`].
const MIN_BACKOFF: Duration = Duration::from_millis(100);
/// The longest wait between two attempts to reconnect.
const MAX_BACKOFF: Duration = Duration::from_secs(2);
/// How often an idle subscription checks that Redis still answers.
const PING_EVERY: Duration = Duration::from_secs(10);
/// Remote changes waiting to be delivered before the subscription waits for the reader.
const INBOUND: usize = 256;

/// Changes shared through Redis pub/sub by every instance pointed at it: `PUBLISH` on
/// [`channel`](RedisChangeBus::channel) (`<prefix>:changes`) on one multiplexed connection
/// that reconnects by itself, and a `SUBSCRIBE` connection per instance that reconnects
/// with a bounded, jittered backoff (100 ms doubling to 2 s), pinged every 10 s, logging a
/// warning when it is lost and when it is back.
///
/// A message is `{"from": "<instance id>", "change": {"kind": "resource_updated", "uri":
/// "…"}}` (kinds `resource_updated`, `resources_list_changed`, `tools_list_changed`,
/// `prompts_list_changed`). Anyone who can publish on the channel can send anything: a
/// message over [`MAX_MESSAGE_BYTES`], one that is not that JSON, a URI over
/// [`MAX_URI_BYTES`] or an unknown kind is dropped with a debug line, never delivered.
/// What is lost while Redis is down: see [`ChangeBus`].
#[derive(Clone)]
pub struct RedisChangeBus {
    client: redis::Client,
    connection: ConnectionManager,
    channel: String,
    instance: String,
    timeout: Duration,
}

impl fmt::Debug for RedisChangeBus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisChangeBus")
            .field("channel", &self.channel)
            .field("instance", &self.instance)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl RedisChangeBus {
    /// A bus at `url` (`redis://127.0.0.1:6379/0`). Does not connect yet: a server starts
    /// while Redis is down and joins the others once it is up.
    pub fn new(url: &str) -> Result<Self, StoreError> {
        let client = redis::Client::open(url).map_err(|e| StoreError(e.to_string()))?;
        let connection = super::connection::managed_connection(url)?;
        let timeout = DEFAULT_REDIS_TIMEOUT;
        let mut id = [0u8; 16];
        getrandom::fill(&mut id).map_err(|e| StoreError(format!("no instance id: {e}")))?;
        Ok(RedisChangeBus {
            client,
            connection,
            channel: "fusion:changes".into(),
            instance: id.iter().map(|b| format!("{b:02x}")).collect(),
            timeout,
        })
    }

    /// The prefix of the channel (`fusion`, so the channel is `fusion:changes`): one per
    /// server when servers share a Redis.
    pub fn prefix(mut self, prefix: impl AsRef<str>) -> Self {
        self.channel = format!("{}:changes", prefix.as_ref());
        self
    }

    /// The bound on one publish and on connecting the subscription (500 ms by default).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The channel changes go through.
    pub fn channel(&self) -> &str {
        &self.channel
    }

    /// This instance's id, in the `from` of what it publishes.
    pub fn instance(&self) -> &str {
        &self.instance
    }

    async fn send(&self, change: &Change) -> Result<(), StoreError> {
        let Some(message) = encode(&self.instance, change) else {
            return Ok(());
        };
        // A connection Redis dropped fails once, then the manager reconnects: one retry.
        let mut last = None;
        for _ in 0..2 {
            let mut connection = self.connection.clone();
            let mut cmd = redis::cmd("PUBLISH");
            cmd.arg(&self.channel).arg(&message);
            let run = cmd.query_async::<i64>(&mut connection);
            match tokio::time::timeout(self.timeout, run).await {
                Ok(Ok(_)) => return Ok(()),
                Ok(Err(e)) => last = Some(StoreError(e.to_string())),
                Err(_) => {
                    return Err(StoreError(format!(
                        "no answer from Redis within {} ms",
                        self.timeout.as_millis()
                    )));
                }
            }
        }
        Err(last.unwrap_or_else(|| StoreError("PUBLISH failed".into())))
    }

    /// Holds one subscription after another until `out` is dropped.
    async fn subscriber(self, out: mpsc::Sender<Remote>) {
        let mut backoff = MIN_BACKOFF;
        let mut cut_off = false;
        loop {
            let connected = tokio::select! {
                () = out.closed() => return,
                connected = tokio::time::timeout(self.timeout, self.connect()) => connected,
            };
            match connected {
                Ok(Ok(pubsub)) => {
                    if cut_off {
                        tracing::warn!(channel = %self.channel, "change bus: subscribed to Redis again; what other instances sent meanwhile is lost, clients are told to read their lists again");
                        if out.send(Remote::Resumed).await.is_err() {
                            return;
                        }
                    }
                    backoff = MIN_BACKOFF;
                    if !self.read(pubsub, &out).await {
                        return;
                    }
                    tracing::warn!(channel = %self.channel, "change bus: lost the Redis subscription; changes from other instances are lost until it is back");
                    cut_off = true;
                }
                Ok(Err(e)) => {
                    if !cut_off {
                        tracing::warn!(channel = %self.channel, error = %e, "change bus: cannot subscribe in Redis; changes from other instances are lost until it can");
                    }
                    cut_off = true;
                }
                Err(_) => {
                    if !cut_off {
                        tracing::warn!(channel = %self.channel, "change bus: Redis did not answer within {} ms; changes from other instances are lost until it does", self.timeout.as_millis());
                    }
                    cut_off = true;
                }
            }
            tokio::select! {
                () = out.closed() => return,
                () = tokio::time::sleep(jitter(backoff)) => {}
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    async fn connect(&self) -> redis::RedisResult<redis::aio::PubSub> {
        let mut pubsub = self.client.get_async_pubsub().await?;
        pubsub.subscribe(&self.channel).await?;
        Ok(pubsub)
    }

    /// Passes messages on until the connection is lost (`true`) or `out` is dropped
    /// (`false`).
    async fn read(&self, pubsub: redis::aio::PubSub, out: &mpsc::Sender<Remote>) -> bool {
        let (mut sink, mut messages) = pubsub.split();
        let mut ping = tokio::time::interval(PING_EVERY);
        ping.tick().await;
        loop {
            tokio::select! {
                () = out.closed() => return false,
                message = messages.next() => {
                    let Some(message) = message else { return true };
                    if message.get_channel_name() != self.channel {
                        continue;
                    }
                    match decode(message.get_payload_bytes(), &self.instance) {
                        Decoded::Change(change) => {
                            if out.send(Remote::Change(change)).await.is_err() {
                                return false;
                            }
                        }
                        Decoded::Own => {}
                        Decoded::Dropped(why) => {
                            tracing::debug!(channel = %self.channel, why, "change bus: a message was dropped");
                        }
                    }
                }
                _ = ping.tick() => {
                    let answered = tokio::time::timeout(self.timeout, sink.ping::<String>()).await;
                    if !matches!(answered, Ok(Ok(_))) {
                        return true;
                    }
                }
            }
        }
    }
}

impl ChangeBus for RedisChangeBus {
    fn publish<'a>(&'a self, change: &'a Change) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let sent = self.send(change).await;
            if sent.is_err() {
                crate::metrics::store_error("bus");
            }
            sent
        })
    }

    fn subscribe(&self) -> BoxStream<'static, Remote> {
        let (tx, rx) = mpsc::channel(INBOUND);
        tokio::spawn(self.clone().subscriber(tx));
        futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|r| (r, rx)) })
            .boxed()
    }

    fn name(&self) -> &'static str {
        "redis"
    }
}

/// `backoff` plus up to a quarter more, so instances cut off together do not all come back
/// at the same instant.
fn jitter(backoff: Duration) -> Duration {
    let mut byte = [0u8; 1];
    let spread = getrandom::fill(&mut byte).map_or(0, |()| u32::from(byte[0]));
    backoff + backoff / 4 * spread / 255
}

/// The message for `change` from `instance`; `None` for a URI no other instance would take.
fn encode(instance: &str, change: &Change) -> Option<String> {
    let change = match change {
        Change::ResourceUpdated(uri) if uri.len() > MAX_URI_BYTES => return None,
        Change::ResourceUpdated(uri) => {
            serde_json::json!({"kind": "resource_updated", "uri": uri.as_ref()})
        }
        Change::ResourcesListChanged => serde_json::json!({"kind": "resources_list_changed"}),
        Change::ToolsListChanged => serde_json::json!({"kind": "tools_list_changed"}),
        Change::PromptsListChanged => serde_json::json!({"kind": "prompts_list_changed"}),
    };
    Some(serde_json::json!({"from": instance, "change": change}).to_string())
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    from: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    change: Wire<'a>,
}

#[derive(Deserialize)]
struct Wire<'a> {
    #[serde(borrow)]
    kind: std::borrow::Cow<'a, str>,
    #[serde(default, borrow)]
    uri: Option<std::borrow::Cow<'a, str>>,
}

/// What a message read from the channel is.
#[derive(Debug, PartialEq, Eq)]
enum Decoded {
    /// Another instance's change.
    Change(Change),
    /// This instance's own, come back.
    Own,
    /// Not to be delivered, and why.
    Dropped(&'static str),
}

fn decode(payload: &[u8], instance: &str) -> Decoded {
    if payload.len() > MAX_MESSAGE_BYTES {
        return Decoded::Dropped("too long");
    }
    let Ok(message) = serde_json::from_slice::<Message<'_>>(payload) else {
        return Decoded::Dropped("not a change message");
    };
    if message.from == instance {
        return Decoded::Own;
    }
    let change = match (message.change.kind.as_ref(), message.change.uri) {
        ("resource_updated", Some(uri)) if uri.len() <= MAX_URI_BYTES => {
            Change::ResourceUpdated(uri.as_ref().into())
        }
        ("resource_updated", Some(_)) => return Decoded::Dropped("URI too long"),
        ("resource_updated", None) => return Decoded::Dropped("no URI"),
        ("resources_list_changed", _) => Change::ResourcesListChanged,
        ("tools_list_changed", _) => Change::ToolsListChanged,
        ("prompts_list_changed", _) => Change::PromptsListChanged,
        _ => return Decoded::Dropped("unknown kind"),
    };
    Decoded::Change(change)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_change_goes_through_the_wire_and_back() {
        for change in [
            Change::ResourceUpdated("billing://invoices/inv_2026_0001".into()),
            Change::ResourcesListChanged,
            Change::ToolsListChanged,
            Change::PromptsListChanged,
        ] {
            let message = encode("a", &change).unwrap_or_else(|| panic!("{change:?}"));
            assert_eq!(
                decode(message.as_bytes(), "b"),
                Decoded::Change(change.clone())
            );
            assert_eq!(decode(message.as_bytes(), "a"), Decoded::Own);
        }
    }

    #[test]
    fn what_anyone_else_publishes_is_checked_and_dropped_without_a_panic() {
        let long_uri = format!("x://{}", "a".repeat(MAX_URI_BYTES));
        assert_eq!(
            encode("a", &Change::ResourceUpdated(long_uri.as_str().into())),
            None
        );
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (b"".to_vec(), "not a change message"),
            (b"\xff\xfe garbage".to_vec(), "not a change message"),
            (b"null".to_vec(), "not a change message"),
            (br#"{"from": 1, "change": {"kind": "tools_list_changed"}}"#.to_vec(), "not a change message"),
            (br#"{"from": "x", "change": {"kind": "reboot"}}"#.to_vec(), "unknown kind"),
            (br#"{"from": "x", "change": {"kind": "resource_updated"}}"#.to_vec(), "no URI"),
            (
                format!(r#"{{"from": "x", "change": {{"kind": "resource_updated", "uri": "{long_uri}"}}}}"#)
                    .into_bytes(),
                "URI too long",
            ),
            (vec![b'['; MAX_MESSAGE_BYTES + 1], "too long"),
            (vec![b'['; MAX_MESSAGE_BYTES], "not a change message"),
        ];
        for (payload, why) in cases {
            assert_eq!(decode(&payload, "me"), Decoded::Dropped(why), "{why}");
        }
        // Escapes are read (a borrowed string could not hold them).
        assert_eq!(
            decode(
                br#"{"from": "x", "change": {"kind": "resource_updated", "uri": "x://a\"b"}}"#,
                "me"
            ),
            Decoded::Change(Change::ResourceUpdated("x://a\"b".into()))
        );
    }
}
