//! The capped session manager (`sessions.rs`): live sessions capped overall and per client,
//! and who owns which.

use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use super::super::sessions::{self, Admission, CappedSessions, Refusal, SessionsError};

type Transport = <CappedSessions as SessionManager>::Transport;

/// The sessions under test and the transports of those opened (kept, as rmcp keeps them
/// while it serves a session).
struct Live {
    sessions: CappedSessions,
    transports: Vec<Transport>,
}

fn capped(total: usize, per_client: usize) -> Live {
    Live {
        sessions: CappedSessions::new(LocalSessionManager::default(), total, per_client),
        transports: Vec::new(),
    }
}

/// A new session of `client`: its id, or the refusal (also recorded on the admission).
async fn open(live: &mut Live, client: &str) -> anyhow::Result<Result<String, Refusal>> {
    let admission = Admission::new(client.to_owned());
    let sessions = &live.sessions;
    let made = sessions::admit(Some(admission.clone()), sessions.create_session()).await;
    match made {
        Ok((id, transport)) => {
            live.transports.push(transport);
            assert_eq!(admission.refusal(), None);
            Ok(Ok(id.to_string()))
        }
        Err(SessionsError::Refused(refusal)) => {
            assert_eq!(admission.refusal(), Some(refusal), "told to the request");
            Ok(Err(refusal))
        }
        Err(e) => Err(e.into()),
    }
}

#[tokio::test]
async fn sessions_are_capped_per_client() -> anyhow::Result<()> {
    let mut live = capped(10, 2);
    let a1 = open(&mut live, "a").await?;
    let a2 = open(&mut live, "a").await?;
    assert!(a1.is_ok() && a2.is_ok());
    assert_eq!(open(&mut live, "a").await?, Err(Refusal::ClientFull(2)));
    assert!(open(&mut live, "b").await?.is_ok(), "another client");
    assert_eq!(open(&mut live, "a").await?, Err(Refusal::ClientFull(2)));

    // Closing one of a's gives a its place back.
    let id = a1.map_err(|r| anyhow::anyhow!("{r:?}"))?;
    live.sessions.close_session(&id.clone().into()).await?;
    assert!(open(&mut live, "a").await?.is_ok());
    Ok(())
}

#[tokio::test]
async fn sessions_are_capped_overall() -> anyhow::Result<()> {
    let mut live = capped(2, 5);
    let a = open(&mut live, "a")
        .await?
        .map_err(|r| anyhow::anyhow!("{r:?}"))?;
    assert!(open(&mut live, "b").await?.is_ok());
    assert_eq!(open(&mut live, "c").await?, Err(Refusal::ServerFull(2)));
    // A refusal holds no place: still full, still refused the same way.
    assert_eq!(open(&mut live, "c").await?, Err(Refusal::ServerFull(2)));
    live.sessions.close_session(&a.into()).await?;
    assert!(open(&mut live, "c").await?.is_ok());
    assert_eq!(open(&mut live, "d").await?, Err(Refusal::ServerFull(2)));
    Ok(())
}

#[tokio::test]
async fn a_session_is_owned_by_the_client_that_opened_it() -> anyhow::Result<()> {
    let mut live = capped(10, 10);
    let id = open(&mut live, "ip:192.0.2.1")
        .await?
        .map_err(|r| anyhow::anyhow!("{r:?}"))?;
    let id_bytes = id.as_bytes();
    assert!(live.sessions.owned_by(id_bytes, "ip:192.0.2.1"));
    assert!(!live.sessions.owned_by(id_bytes, "ip:192.0.2.2"));

    // An id no session has, or not UTF-8: no one's.
    for unknown in [&b"no-such-session"[..], &b"\xff\xfe"[..]] {
        assert!(!live.sessions.owned_by(unknown, "ip:192.0.2.1"));
    }

    // Closed: no one's.
    live.sessions.close_session(&id.clone().into()).await?;
    assert!(!live.sessions.owned_by(id.as_bytes(), "ip:192.0.2.1"));
    assert!(!live.sessions.owned_by(id.as_bytes(), "ip:192.0.2.2"));
    Ok(())
}

#[tokio::test]
async fn a_session_made_outside_an_admission_belongs_to_the_http_key() -> anyhow::Result<()> {
    let live = capped(10, 1);
    let (id, _transport) = live.sessions.create_session().await?;
    assert!(live.sessions.owned_by(id.as_bytes(), "http"));
    // And counts against that key's cap.
    assert!(matches!(
        live.sessions.create_session().await,
        Err(SessionsError::Refused(Refusal::ClientFull(1)))
    ));
    Ok(())
}
