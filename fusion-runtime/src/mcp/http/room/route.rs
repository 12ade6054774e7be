//! Which requests are the room's: the room decides it here, from what the check read — the
//! endpoint's switch and kind, a request's headers, and for a 2026-07-28 request or a live
//! 2025 session's (left unprobed by the check otherwise) its body.
//!
//! Reads: the headers and body the check read. Writes: the [`Taken`] reading of a body the
//! check does not probe itself, and whether a stateless plain call is the room's.

use std::sync::Arc;

use axum::http::HeaderMap;
use rmcp::model::RequestId;

use super::PlainKind;
use super::headers::{legacy_headers_pass, modern_headers_pass};
use super::live::{Listing, LiveSessions};
use crate::mcp::facts::SESSION_HEADER;
use crate::mcp::jsonrpc::{self, Passed, PlainCall};
use crate::server::Server;

/// What decides, made once per endpoint, whether a request is the room's.
pub(crate) struct RoomRoute {
    /// Whether plain calls go to the room at all (the switch, on a server that hands nothing
    /// off).
    pub(crate) on: bool,
    /// Whether the endpoint keeps sessions: a 2025 session's call is left to rmcp's parse,
    /// unless its session is live (`live`: the sessions whose plain calls skip rmcp's worker).
    pub(crate) sessions: bool,
    pub(crate) live: Option<Arc<LiveSessions>>,
}

/// The room's reading of a body the check leaves to rmcp's parse (a 2026-07-28 request's, a
/// session's): the plain call it takes, or a live session's `notifications/cancelled`.
#[derive(Default)]
pub(crate) struct Taken {
    /// What the probe would have made of the body, when the room read it whole.
    pub(crate) passed: Option<Passed>,
    /// The plain call the room answers: its id, the call, which kind.
    pub(crate) call: Option<(RequestId, PlainCall, PlainKind)>,
    /// A live session's `notifications/cancelled`: the calls it names may be the room's.
    pub(crate) cancels: Option<Passed>,
}

impl RoomRoute {
    /// The reading of a 2026-07-28 request's body (`modern`) or a 2025 session's: the room's
    /// plain call, or nothing (the request goes to rmcp unprobed).
    pub(crate) fn unprobed(
        &self,
        modern: bool,
        headers: &HeaderMap,
        bytes: &[u8],
        server: &Server,
    ) -> Taken {
        match modern {
            true => match self.modern(headers, bytes) {
                Some((id, call)) => Taken {
                    call: Some((id, call, PlainKind::Modern)),
                    ..Taken::default()
                },
                None => Taken::default(),
            },
            false => self.live(headers, bytes, server).unwrap_or_default(),
        }
    }

    /// Whether a plain 2025 call naming no session, with `headers`, is the room's: on a
    /// stateless endpoint, with headers rmcp would take straight to its handler.
    pub(crate) fn takes_stateless(&self, headers: &HeaderMap) -> bool {
        self.on && !self.sessions && legacy_headers_pass(headers, false)
    }

    /// A session's message read, only when its session is listed live (a session that is
    /// not is left unprobed, as any) and its headers are ones rmcp passes with nothing to
    /// refuse. `None`: the message goes to rmcp unprobed.
    fn live(&self, headers: &HeaderMap, bytes: &[u8], server: &Server) -> Option<Taken> {
        let id = headers.get(&SESSION_HEADER)?.to_str().ok()?;
        let listing = self.live.as_ref()?.listing(id)?;
        if !legacy_headers_pass(headers, true) {
            return None;
        }
        if let Listing::Fresh(threshold) = listing
            && let Some((passed, call)) = jsonrpc::plain_call(bytes)
        {
            let call = passed
                .id
                .clone()
                .map(|id| (id, call, PlainKind::Session(threshold)));
            return Some(Taken {
                passed: Some(passed),
                call,
                cancels: None,
            });
        }
        // Only a cancellation is read further.
        if !crate::http::body::mentions(bytes, b"\"notifications/cancelled\"") {
            return None;
        }
        let passed = jsonrpc::check_body(bytes, server).ok()?;
        passed.cancels.then(|| Taken {
            cancels: Some(passed),
            ..Taken::default()
        })
    }

    /// A 2026-07-28 request's body read as a plain call, when the room may answer it: with
    /// headers rmcp passes as they are (looked at first: the body is read only for a request
    /// that may be the room's) and an `Mcp-Name` that is the call's tool, on either endpoint
    /// (rmcp serves the revision statelessly on both). `None`: the request goes to rmcp
    /// unread.
    fn modern(&self, headers: &HeaderMap, bytes: &[u8]) -> Option<(RequestId, PlainCall)> {
        if !self.on {
            return None;
        }
        let named = modern_headers_pass(headers)?;
        let (passed, call) = jsonrpc::modern_call(bytes)?;
        let name = bytes.get(call.name.clone())?;
        (name == named.as_bytes()).then_some((passed.id?, call))
    }
}
