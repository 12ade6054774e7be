//! The metrics listener serves a scrape while idle connections are open (issue 48): raw TCP
//! connections on loopback, some that scraped once and stay open (keep-alive), some that
//! never send a byte — more of them than the listener keeps — and the next scrape is
//! answered at once, not after the header timeout (5 s) frees a place; the connections
//! closed to make room were between requests and read a clean end.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const SCRAPE: &[u8] = b"GET /metrics HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n";

/// Reads one HTTP response from `stream` (headers, then a `content-length` body): its status
/// line and body.
async fn response(stream: &mut TcpStream) -> anyhow::Result<(String, String)> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        let n = stream.read(&mut buf).await?;
        anyhow::ensure!(n > 0, "closed before the headers ended");
        raw.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&raw[..head_end]).to_string();
    let length: usize = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().to_owned())
        })
        .context("no content-length")?
        .parse()?;
    while raw.len() < head_end + length {
        let n = stream.read(&mut buf).await?;
        anyhow::ensure!(n > 0, "closed before the body ended");
        raw.extend_from_slice(&buf[..n]);
    }
    let status = head.lines().next().unwrap_or_default().to_owned();
    let body = String::from_utf8_lossy(&raw[head_end..head_end + length]).to_string();
    Ok((status, body))
}

/// A keep-alive connection that scraped once and stays open.
async fn scraped_once(addr: SocketAddr) -> anyhow::Result<TcpStream> {
    let mut stream = TcpStream::connect(addr).await?;
    stream.write_all(SCRAPE).await?;
    let (status, _) = response(&mut stream).await?;
    anyhow::ensure!(status.starts_with("HTTP/1.1 200"), "{status}");
    Ok(stream)
}

#[tokio::test]
async fn a_scrape_is_served_while_idle_connections_are_open() -> anyhow::Result<()> {
    let metrics =
        fusion_runtime::http::spawn_metrics(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
    let addr = metrics.local_addr;
    // 16 keep-alive connections idle after one scrape, 16 that never sent a byte.
    let mut idle = Vec::new();
    for _ in 0..16 {
        idle.push(scraped_once(addr).await?);
    }
    for _ in 0..16 {
        idle.push(TcpStream::connect(addr).await?);
    }
    // Let the listener accept them all.
    tokio::time::sleep(Duration::from_millis(200)).await;
    for round in 0..3 {
        let started = Instant::now();
        let mut stream = tokio::time::timeout(Duration::from_secs(10), scraped_once(addr))
            .await
            .context("no answer within 10 s")??;
        let waited = started.elapsed();
        assert!(
            waited < Duration::from_secs(2),
            "round {round}: the scrape waited {waited:?} behind idle connections"
        );
        // Its own connection is kept: a second scrape on it is answered too.
        stream.write_all(SCRAPE).await?;
        let (status, body) = response(&mut stream).await?;
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        assert!(body.ends_with("# EOF\n"), "{body}");
        idle.push(stream);
    }
    // A connection closed to make room was between requests: it reads a clean end, never
    // half an answer.
    // One that is still open reads nothing; any other read (bytes, an error) fails.
    let mut ended = 0;
    for (n, stream) in idle.iter_mut().enumerate() {
        let mut byte = [0u8; 1];
        match tokio::time::timeout(Duration::from_millis(50), stream.read(&mut byte)).await {
            Ok(Ok(0)) => ended += 1,
            Ok(Ok(_)) => anyhow::bail!("connection {n} read half an answer"),
            Ok(Err(e)) => anyhow::bail!("connection {n} was cut: {e}"),
            Err(_) => {}
        }
    }
    assert!(ended >= idle.len() - 16, "{ended} of {} closed", idle.len());
    Ok(())
}

/// A slow client: connects from `from`, sends a scrape's headers one byte a second, and
/// connects again whenever it is closed, until `stop`.
async fn trickle(
    from: std::net::IpAddr,
    addr: SocketAddr,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) {
    use std::sync::atomic::Ordering;
    while !stop.load(Ordering::Relaxed) {
        let socket = match tokio::net::TcpSocket::new_v4() {
            Ok(s) => s,
            Err(_) => return,
        };
        if socket.bind(SocketAddr::new(from, 0)).is_err() {
            return;
        }
        let Ok(mut stream) = socket.connect(addr).await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        for byte in SCRAPE {
            if stop.load(Ordering::Relaxed) || stream.write_all(&[*byte]).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
}

/// 200 clients sending their headers a byte a second (and connecting again when closed)
/// do not make a scrape wait: each of five scrapes is answered within 2 s (Prometheus gives
/// a scrape 10 s), where it waited for their header timeout before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scrape_is_served_while_slow_clients_trickle_headers() -> anyhow::Result<()> {
    use std::net::{IpAddr, Ipv4Addr};
    let metrics =
        fusion_runtime::http::spawn_metrics(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
    let addr = metrics.local_addr;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let slow: Vec<_> = (0..200)
        .map(|_| {
            tokio::spawn(trickle(
                IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1)),
                addr,
                std::sync::Arc::clone(&stop),
            ))
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let scraper = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
    let mut worst = Duration::ZERO;
    for round in 0..5 {
        let started = Instant::now();
        let scraped = async {
            let socket = tokio::net::TcpSocket::new_v4()?;
            socket.bind(SocketAddr::new(scraper, 0))?;
            let mut stream = socket.connect(addr).await?;
            stream.write_all(SCRAPE).await?;
            response(&mut stream).await
        };
        let (status, body) = tokio::time::timeout(Duration::from_secs(15), scraped)
            .await
            .with_context(|| format!("round {round}: no answer within 15 s"))??;
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        assert!(body.ends_with("# EOF\n"), "{body}");
        worst = worst.max(started.elapsed());
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for task in slow {
        task.abort();
    }
    assert!(
        worst < Duration::from_secs(2),
        "a scrape waited {worst:?} behind slow clients"
    );
    Ok(())
}
