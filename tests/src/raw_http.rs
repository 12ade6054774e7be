//! A minimal HTTP/1.1 client for tests that must see exactly what went over the wire: one
//! request per connection (`Connection: close`), the whole response read back.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::raw_stdio::WAIT;

/// A response: status, headers (names lowercased, in order) and body.
#[derive(Clone, Debug)]
pub struct RawResponse {
    /// The status code.
    pub status: u16,
    /// The headers, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked.
    pub body: String,
}

impl RawResponse {
    /// The first header named `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC message of the body: plain JSON, or the `data:` of an SSE event that has
    /// an `id` (`Null` when there is none).
    pub fn message(&self) -> serde_json::Value {
        if let Ok(v) = serde_json::from_str(&self.body) {
            return v;
        }
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<serde_json::Value>(d.trim()).ok())
            .find(|v| v.get("id").is_some())
            .unwrap_or(serde_json::Value::Null)
    }

    /// The body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// Sends `method path` to `addr` with `headers` (`Host: 127.0.0.1` unless they name one) and
/// `body`, and reads the response (at most 10 s).
pub async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<RawResponse> {
    request_from(None, addr, method, path, headers, body).await
}

/// [`request`], sent from the local address `from` (another loopback address, such as
/// `127.0.0.2`, is another client to a server that tells clients apart by address).
pub async fn request_from(
    from: Option<std::net::IpAddr>,
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<RawResponse> {
    let run = async {
        let mut stream = sent(from, addr, method, path, headers, body).await?;
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await?;
        parse(&raw)
    };
    tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .unwrap_or_else(|_| {
            Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "no response within 10 s",
            ))
        })
}

/// A connection to `addr` (from the local address `from`, when given) on which the request
/// has been written: `Host: 127.0.0.1` unless `headers` name one, `Connection: close`, the
/// body's `Content-Length`.
async fn sent(
    from: Option<std::net::IpAddr>,
    addr: SocketAddr,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<tokio::net::TcpStream> {
    let mut stream = match from {
        None => tokio::net::TcpStream::connect(addr).await?,
        Some(ip) => {
            let socket = match ip {
                std::net::IpAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
                std::net::IpAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
            };
            socket.bind(SocketAddr::new(ip, 0))?;
            socket.connect(addr).await?
        }
    };
    let host = match headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        true => "",
        false => "host: 127.0.0.1\r\n",
    };
    let mut head = format!(
        "{method} {target} HTTP/1.1\r\n{host}connection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    Ok(stream)
}

/// [`request_from`] for a response that may stay open (a stream): what arrived within `wait`
/// — the head and as much of the body as came, `open` set when the server had not closed
/// the connection by then.
pub async fn request_within(
    from: Option<std::net::IpAddr>,
    addr: SocketAddr,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &str,
    wait: Duration,
) -> std::io::Result<(RawResponse, bool)> {
    let mut stream = sent(from, addr, method, target, headers, body).await?;
    let deadline = tokio::time::Instant::now() + wait;
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    let open = loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Ok(Ok(0)) => break false,
            Ok(Ok(n)) => raw.extend_from_slice(&buf[..n]),
            Ok(Err(e)) => return Err(e),
            Err(_) => break true,
        }
    };
    if !open {
        return parse(&raw).map(|r| (r, false));
    }
    // Still open: the head, and the body's bytes as they came (chunk sizes and all).
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n");
    let Some(split) = split else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("no head within {wait:?}"),
        ));
    };
    let mut partial = raw[..split + 4].to_vec();
    partial.extend_from_slice(b"0\r\n\r\n");
    let mut response = parse(&partial).or_else(|_| parse(&raw[..split + 4]))?;
    response.body = String::from_utf8_lossy(&raw[split + 4..]).into_owned();
    Ok((response, true))
}

/// A JSON-RPC `tools/call` to a stateless streamable HTTP endpoint at `path`, with `token`
/// as bearer when given.
pub async fn call_tool(
    addr: SocketAddr,
    path: &str,
    token: Option<&str>,
    id: u64,
    tool: &str,
    arguments: serde_json::Value,
) -> std::io::Result<RawResponse> {
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    })
    .to_string();
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2025-06-18"),
    ];
    if let Some(b) = &bearer {
        headers.push(("authorization", b));
    }
    request(addr, "POST", path, &headers, &body).await
}

fn parse(raw: &[u8]) -> std::io::Result<RawResponse> {
    let bad = |m: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, m.to_owned());
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| bad("no end of headers"))?;
    let head = String::from_utf8_lossy(&raw[..split]);
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad("no status line"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    if chunked {
        body = dechunk(&body).ok_or_else(|| bad("bad chunked body"))?;
    }
    Ok(RawResponse {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

fn dechunk(mut data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = data.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&data[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(data.get(..size)?);
        data = data.get(size + 2..)?;
    }
}

/// An HTTP request whose response is read as it comes.
pub struct Streaming {
    /// The connection, for reads of a test's own.
    pub stream: tokio::net::TcpStream,
    /// What was read so far.
    pub text: String,
}

impl Streaming {
    /// Sends `method /mcp` to `addr` with `headers` and `body`.
    pub async fn open(
        addr: SocketAddr,
        method: &str,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Streaming {
        let body = body.map(Value::to_string).unwrap_or_default();
        let mut stream = tokio::net::TcpStream::connect(addr)
            .await
            .unwrap_or_else(|e| panic!("connect: {e}"));
        let mut request = format!(
            "{method} /mcp HTTP/1.1\r\nhost: {addr}\r\n\
             content-type: application/json\r\naccept: application/json, text/event-stream\r\n\
             content-length: {}\r\n",
            body.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(&body);
        stream
            .write_all(request.as_bytes())
            .await
            .unwrap_or_else(|e| panic!("write: {e}"));
        Streaming {
            stream,
            text: String::new(),
        }
    }

    /// A 2025-11-25 `initialize` POSTed to the stateful endpoint at `addr`: the session id it
    /// answered with (the caller sends `notifications/initialized`).
    pub async fn initialize(addr: SocketAddr) -> String {
        let init = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
        let mut post = Streaming::open(addr, "POST", &[("connection", "close")], Some(&init)).await;
        let head = post.until("\r\n\r\n").await.to_owned();
        let session = head
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("mcp-session-id:")
                    .map(|v| v.trim().to_owned())
            })
            .unwrap_or_else(|| panic!("no session in {head}"));
        post.until("\"result\"").await;
        session
    }

    /// Reads until the response so far contains `needle`; returns it all.
    pub async fn until(&mut self, needle: &str) -> &str {
        let deadline = tokio::time::Instant::now() + WAIT;
        while !self.text.contains(needle) {
            let n = self.read_until(deadline).await;
            assert!(
                n.is_some(),
                "no {needle:?} within {WAIT:?} in {:?}",
                self.text
            );
        }
        &self.text
    }

    /// Reads what comes for `wait`.
    pub async fn during(&mut self, wait: Duration) {
        let deadline = tokio::time::Instant::now() + wait;
        while self.read_until(deadline).await.is_some() {}
    }

    /// One read, `None` at `deadline`; panics when the server closed the stream.
    pub async fn read_until(&mut self, deadline: tokio::time::Instant) -> Option<usize> {
        let mut buf = [0u8; 4096];
        let n = tokio::time::timeout_at(deadline, self.stream.read(&mut buf))
            .await
            .ok()?
            .unwrap_or_else(|e| panic!("read: {e}"));
        assert!(n > 0, "closed: {:?}", self.text);
        self.text.push_str(&String::from_utf8_lossy(&buf[..n]));
        Some(n)
    }

    /// Reads until the server closes the connection.
    pub async fn read_to_end(&mut self) {
        let mut rest = String::new();
        tokio::time::timeout(WAIT, self.stream.read_to_string(&mut rest))
            .await
            .unwrap_or_else(|_| panic!("still open after {WAIT:?}: {:?}", self.text))
            .unwrap_or_else(|e| panic!("read: {e}"));
        self.text.push_str(&rest);
    }

    /// The JSON-RPC messages of the `data:` lines so far.
    pub fn messages(&self) -> Vec<Value> {
        self.text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
            .filter(Value::is_object)
            .collect()
    }
}
