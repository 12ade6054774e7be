//! Bounded MCP sessions over streamable HTTP: rmcp's [`LocalSessionManager`] (which expires
//! idle sessions) behind a cap on live sessions, overall and per client.
//!
//! rmcp creates a session without telling the manager who asks, so the HTTP layer runs each
//! request inside [`admit`], which names the client for [`CappedSessions::create_session`]
//! and brings back a refusal the layer turns into a clear answer.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};

use super::room::LiveSessions;
use crate::mcp::facts::OpenedSession;

/// Why a new session was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The server holds its maximum of live sessions.
    ServerFull(usize),
    /// This client holds its maximum of live sessions.
    ClientFull(usize),
}

/// The request's side of the admission: who asks, and the refusal if there was one.
#[derive(Debug)]
pub(crate) struct Admission {
    client: String,
    refusal: Mutex<Option<Refusal>>,
}

impl Admission {
    pub(crate) fn new(client: String) -> Arc<Self> {
        Arc::new(Admission {
            client,
            refusal: Mutex::new(None),
        })
    }

    pub(crate) fn refusal(&self) -> Option<Refusal> {
        *self.refusal.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

tokio::task_local! {
    static ADMISSION: Option<Arc<Admission>>;
}

/// Runs `request` (one HTTP request through rmcp) with `admission` in scope (`None` for a
/// request that cannot create a session).
pub(crate) async fn admit<F: Future>(admission: Option<Arc<Admission>>, request: F) -> F::Output {
    ADMISSION.scope(admission, request).await
}

/// The error of [`CappedSessions`].
#[derive(Debug, thiserror::Error)]
pub(crate) enum SessionsError {
    #[error("session refused: {0:?}")]
    Refused(Refusal),
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
}

/// Live sessions by owner. `total` and `per_client` also count places reserved for sessions
/// being made.
#[derive(Default)]
struct Owners {
    by_session: HashMap<SessionId, String>,
    per_client: HashMap<String, usize>,
    total: usize,
}

impl Owners {
    fn release(&mut self, client: &str) {
        self.total = self.total.saturating_sub(1);
        crate::metrics::open(crate::metrics::Open::Sessions, self.total);
        if let Some(n) = self.per_client.get_mut(client) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.per_client.remove(client);
            }
        }
    }

    fn remove(&mut self, id: &SessionId) {
        if let Some(client) = self.by_session.remove(id) {
            self.release(&client);
        }
    }
}

/// rmcp's local session manager under a cap on live sessions, overall and per client.
pub(crate) struct CappedSessions {
    inner: LocalSessionManager,
    owners: Mutex<Owners>,
    max_sessions: usize,
    max_per_client: usize,
    /// The sessions whose calls skip rmcp's worker: a closed one leaves it at once.
    live: Option<Arc<LiveSessions>>,
}

impl CappedSessions {
    pub(crate) fn new(
        inner: LocalSessionManager,
        max_sessions: usize,
        max_per_client: usize,
    ) -> Self {
        CappedSessions {
            inner,
            owners: Mutex::new(Owners::default()),
            max_sessions,
            max_per_client,
            live: None,
        }
    }

    /// A closed session leaves `live` before its close is answered.
    pub(crate) fn with_live(mut self, live: Arc<LiveSessions>) -> Self {
        self.live = Some(live);
        self
    }

    /// Whether session `id` is live and was opened by `client`.
    pub(crate) fn owned_by(&self, id: &[u8], client: &str) -> bool {
        let Ok(id) = std::str::from_utf8(id) else {
            return false;
        };
        self.owners()
            .by_session
            .get(id)
            .is_some_and(|owner| owner == client)
    }

    fn owners(&self) -> std::sync::MutexGuard<'_, Owners> {
        self.owners.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Reserves a place for a session of `client`, or says why not.
    fn reserve(&self, client: &str) -> Result<(), Refusal> {
        let mut owners = self.owners();
        if owners.total >= self.max_sessions {
            return Err(Refusal::ServerFull(self.max_sessions));
        }
        let held = owners.per_client.get(client).copied().unwrap_or(0);
        if held >= self.max_per_client {
            return Err(Refusal::ClientFull(self.max_per_client));
        }
        owners.total += 1;
        crate::metrics::open(crate::metrics::Open::Sessions, owners.total);
        *owners.per_client.entry(client.to_owned()).or_insert(0) += 1;
        Ok(())
    }
}

struct Reserved<'a> {
    sessions: &'a CappedSessions,
    client: &'a str,
    kept: bool,
}

impl Drop for Reserved<'_> {
    fn drop(&mut self) {
        if !self.kept {
            self.sessions.owners().release(self.client);
        }
    }
}

impl SessionManager for CappedSessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let admission = ADMISSION.try_with(Clone::clone).ok().flatten();
        let client = admission.as_ref().map_or("http", |a| a.client.as_str());
        if let Err(refusal) = self.reserve(client) {
            if let Some(a) = &admission {
                *a.refusal.lock().unwrap_or_else(PoisonError::into_inner) = Some(refusal);
            }
            tracing::warn!(client, ?refusal, "refused a new MCP session");
            return Err(SessionsError::Refused(refusal));
        }
        // Released if rmcp fails or the request is dropped before the session exists.
        let mut reserved = Reserved {
            sessions: self,
            client,
            kept: false,
        };
        let (id, transport) = self.inner.create_session().await?;
        self.owners()
            .by_session
            .insert(id.clone(), client.to_owned());
        reserved.kept = true;
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        mut message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        // The handler lists the session in `live` as it answers, and notes what its client
        // can answer a task's question with.
        message.insert_extension(OpenedSession(id.clone()));
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        if let Some(live) = &self.live {
            live.remove(id);
        }
        self.owners().remove(id);
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        Ok(self.inner.restore_session(id).await?)
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}
