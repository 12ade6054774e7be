//! Real components for tests: `redis-server` and `nginx` on loopback ports, key pairs from
//! the `openssl` command line, and JWTs minted with them.
//!
//! Each test starts its own `redis-server` and `nginx` on free loopback ports, from the
//! binaries `FUSION_TEST_REDIS_SERVER` and `FUSION_TEST_NGINX` name (`.ci/run` installs the
//! packages and exports them), else from `PATH` (or `/usr/sbin`) — unless `CI` is set, where
//! a missing variable fails the test with a message saying so.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A free loopback port (bound, then released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("no free port: {e}"))
}

/// Whether we run in CI, where the components must be provided.
fn in_ci() -> bool {
    std::env::var_os("CI").is_some()
}

fn find_binary(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/usr/bin".into(), "/sbin".into()])
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// A temporary folder, removed on drop.
#[derive(Debug)]
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// A new folder under the system's temp folder, named by the process and a count of
    /// the folders it made (a free port's number, as it was named, can come back to two tests
    /// at once, and one's folder was removed under the other's `openssl`).
    pub fn new(tag: &str) -> TempDir {
        static MADE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("fusion-{tag}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
        TempDir(dir)
    }

    /// A path inside.
    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A `redis-server` a test started on a free loopback port (stopped on drop), which it can
/// stop and restart on the same port. The binary: `FUSION_TEST_REDIS_SERVER`, else
/// `redis-server` on `PATH` (not in CI).
#[derive(Debug)]
pub struct Redis {
    /// `redis://127.0.0.1:PORT/0`.
    pub url: String,
    port: u16,
    child: Option<Child>,
    binary: PathBuf,
}

impl Redis {
    /// Starts one.
    pub fn start() -> Redis {
        let binary = match std::env::var_os("FUSION_TEST_REDIS_SERVER") {
            Some(path) => PathBuf::from(path),
            None => {
                assert!(
                    !in_ci(),
                    "FUSION_TEST_REDIS_SERVER is not set: .ci/run installs redis-server and exports its path"
                );
                find_binary("redis-server").unwrap_or_else(|| {
                    panic!("redis-server is not installed (apt-get install redis-server)")
                })
            }
        };
        let port = free_port();
        let mut redis = Redis {
            url: format!("redis://127.0.0.1:{port}/0"),
            port,
            child: None,
            binary,
        };
        redis.spawn();
        redis
    }

    fn spawn(&mut self) {
        let child = Command::new(&self.binary)
            .args([
                "--port",
                &self.port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start redis-server: {e}"));
        self.child = Some(child);
        wait_for_port(
            SocketAddr::from(([127, 0, 0, 1], self.port)),
            Duration::from_secs(10),
        );
    }

    /// Stops the server (its data goes with it: no persistence).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port, empty.
    pub fn restart(&mut self) {
        self.stop();
        self.spawn();
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A Prometheus server a test started on a free loopback port (stopped on drop), scraping
/// `targets` (`host:port`, path `/metrics`) every second, its storage in a temporary folder.
/// The binary: `FUSION_TEST_PROMETHEUS`, else `prometheus` on `PATH` (not in CI).
#[derive(Debug)]
pub struct Prometheus {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// The address it listens on.
    pub addr: SocketAddr,
    /// The configuration it was started with (`prometheus.yml`).
    pub config: String,
    child: Child,
    _dir: TempDir,
}

impl Prometheus {
    /// The scrape configuration docs/operations.md shows ("A scrape config"), as written there,
    /// for `targets` and a 1 s scrape interval (a test cannot wait 15 s per scrape). Panics if
    /// the guide's block no longer has the lines it substitutes: the guide and the test move
    /// together.
    pub fn config(targets: &[SocketAddr]) -> String {
        let targets: Vec<String> = targets.iter().map(|t| format!("'{t}'")).collect();
        let block = guide_block(OPERATIONS_GUIDE, "yaml", "scrape_configs:");
        substitute(
            &substitute(block, "scrape_interval: 15s", "scrape_interval: 1s"),
            "targets: ['127.0.0.1:9464']",
            &format!("targets: [{}]", targets.join(", ")),
        )
    }

    /// Starts one and waits (30 s at most) until it is ready.
    pub fn start(targets: &[SocketAddr]) -> Prometheus {
        let binary = match std::env::var_os("FUSION_TEST_PROMETHEUS") {
            Some(path) => PathBuf::from(path),
            None => {
                assert!(
                    !in_ci(),
                    "FUSION_TEST_PROMETHEUS is not set: .ci/run installs prometheus and exports its path"
                );
                find_binary("prometheus").unwrap_or_else(|| {
                    panic!("prometheus is not installed (apt-get install prometheus)")
                })
            }
        };
        let dir = TempDir::new("prometheus");
        let config = Self::config(targets);
        let file = dir.join("prometheus.yml");
        std::fs::write(&file, &config).unwrap_or_else(|e| panic!("write {file:?}: {e}"));
        let port = free_port();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let child = Command::new(binary)
            .arg(format!("--config.file={}", file.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start prometheus: {e}"));
        let prometheus = Prometheus {
            url: format!("http://{addr}"),
            addr,
            config,
            child,
            _dir: dir,
        };
        wait_for_port(addr, Duration::from_secs(30));
        // Listening comes before ready (the TSDB opens after the listener): `/-/ready` is 200.
        let start = Instant::now();
        while !prometheus.ready() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "prometheus at {addr} not ready within 30 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        prometheus
    }

    fn ready(&self) -> bool {
        use std::io::{Read, Write};
        let Ok(mut stream) =
            std::net::TcpStream::connect_timeout(&self.addr, Duration::from_millis(500))
        else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
        let request = "GET /-/ready HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n";
        if stream.write_all(request.as_bytes()).is_err() {
            return false;
        }
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).is_ok() && head.ends_with(b" 200")
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until something accepts connections at `addr`.
pub fn wait_for_port(addr: SocketAddr, limit: Duration) {
    let start = Instant::now();
    while std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
        assert!(start.elapsed() < limit, "nothing listens at {addr}");
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// A server process (`billing-server serve --http 127.0.0.1:0 …`), killed on drop.
#[derive(Debug)]
pub struct Instance {
    /// The process.
    pub child: Child,
    /// Where it listens (read from its `serving MCP over streamable HTTP at` line).
    pub addr: SocketAddr,
    /// Every line it wrote on stderr so far.
    pub log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Instance {
    /// Whether a line it wrote on stderr contains `needle`.
    pub fn logged(&self, needle: &str) -> bool {
        self.log
            .lock()
            .map(|l| l.iter().any(|line| line.contains(needle)))
            .unwrap_or(false)
    }

    /// Runs `binary` with `args` and `env` (`RUST_LOG=warn` unless given) and waits (30 s at
    /// most) until it says where it serves HTTP.
    pub fn spawn(binary: &str, args: &[&str], env: &[(&str, &str)]) -> Instance {
        use std::io::BufRead;
        let mut command = Command::new(binary);
        command.args(args).env("RUST_LOG", "warn");
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {binary}: {e}"));
        let stderr = child.stderr.take();
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let lines = log.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let Some(stderr) = stderr else { return };
            let mut sent = false;
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                if !sent
                    && let Some(rest) = announced(&line, "serving MCP over streamable HTTP")
                        .as_deref()
                        .and_then(|url| url.strip_prefix("http://"))
                {
                    let addr = rest.split('/').next().unwrap_or_default().to_owned();
                    let _ = tx.send(addr);
                    sent = true;
                }
                if let Ok(mut l) = lines.lock() {
                    l.push(line);
                }
            }
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|e| panic!("{binary} did not say where it listens: {e}"));
        let addr: SocketAddr = addr
            .parse()
            .unwrap_or_else(|e| panic!("address {addr}: {e}"));
        Instance { child, addr, log }
    }
}

/// `binary serve --http --stateless` behind a proxy on 127.0.0.1, its rate limits and
/// one-time ids in the Redis at `redis_url`, bearer tokens for `resource` from `issuer` (the
/// secret and anything else in `env`): one of the instances the multi-instance tests run.
pub fn stateless_instance(
    binary: &str,
    redis_url: &str,
    resource: &str,
    issuer: &str,
    env: &[(&str, &str)],
) -> Instance {
    Instance::spawn(
        binary,
        &[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--stateless",
            "--trust-proxy",
            "127.0.0.1",
            "--redis-url",
            redis_url,
            "--redis-timeout",
            "300ms",
            "--auth-resource",
            resource,
            "--auth-issuer",
            issuer,
        ],
        env,
    )
}

/// An nginx in front of `upstreams`, round robin, on a loopback port (stopped on drop).
#[derive(Debug)]
pub struct Nginx {
    /// Where it listens.
    pub addr: SocketAddr,
    child: Child,
    _dir: TempDir,
}

/// The nginx binary: `FUSION_TEST_NGINX`, else `nginx` on `PATH` (not in CI).
pub fn nginx_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("FUSION_TEST_NGINX") {
        return PathBuf::from(path);
    }
    assert!(
        !in_ci(),
        "FUSION_TEST_NGINX is not set: .ci/run installs nginx and exports its path"
    );
    find_binary("nginx").unwrap_or_else(|| {
        panic!("nginx is not installed (apt-get install nginx), and FUSION_TEST_NGINX is not set")
    })
}

impl Nginx {
    /// The configuration docs/state.md's "Running more than one instance" shows, as written
    /// there, for `upstreams` and a listen port.
    pub fn config(upstreams: &[SocketAddr], port: u16, dir: &Path) -> String {
        Nginx::config_with(upstreams, port, dir, "error timeout")
    }

    /// [`Nginx::config`] with another `proxy_next_upstream` for `/mcp` (`next`). The guide's
    /// `upstream` and `server` blocks are used as written, their three example upstreams,
    /// listen port and `proxy_next_upstream` replaced, inside the `http` block a foreground
    /// nginx needs (its files in `dir`). Panics if the guide's block no longer has the lines
    /// it substitutes.
    pub fn config_with(upstreams: &[SocketAddr], port: u16, dir: &Path, next: &str) -> String {
        let servers: String = upstreams
            .iter()
            .map(|u| format!("    server {u} max_fails=1 fail_timeout=30s;\n"))
            .collect();
        let block = guide_block(STATE_GUIDE, "nginx", "upstream fusion");
        let example: String = (1..=3)
            .map(|n| format!("    server 127.0.0.1:900{n} max_fails=1 fail_timeout=30s;\n"))
            .collect();
        let block = substitute(block, &example, &servers);
        let block = substitute(
            &block,
            "    listen 8080;",
            &format!("    listen 127.0.0.1:{port};"),
        );
        let block = substitute(
            &block,
            "proxy_next_upstream error timeout;",
            &format!("proxy_next_upstream {next};"),
        );
        let d = dir.display();
        format!(
            "daemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log warn;\n\
events {{ worker_connections 256; }}\n\
http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n  fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
{block}}}\n"
        )
    }

    /// Starts nginx on `port` in front of `upstreams`.
    pub fn start(upstreams: &[SocketAddr], port: u16) -> Nginx {
        Nginx::start_with(upstreams, port, "error timeout")
    }

    /// [`Nginx::start`] with another `proxy_next_upstream` for `/mcp` (`next`).
    pub fn start_with(upstreams: &[SocketAddr], port: u16, next: &str) -> Nginx {
        let binary = nginx_binary();
        let dir = TempDir::new("nginx");
        // Workers may run as an unprivileged user: let them use the folder.
        let _ = Command::new("chmod").arg("777").arg(&dir.0).status();
        let conf = dir.join("nginx.conf");
        std::fs::write(&conf, Nginx::config_with(upstreams, port, &dir.0, next))
            .unwrap_or_else(|e| panic!("write nginx.conf: {e}"));
        let child = Command::new(binary)
            .arg("-p")
            .arg(&dir.0)
            .arg("-c")
            .arg(&conf)
            .arg("-e")
            .arg(dir.join("error.log"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start nginx: {e}"));
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        wait_for_port(addr, Duration::from_secs(10));
        Nginx {
            addr,
            child,
            _dir: dir,
        }
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A key pair made by the `openssl` command line: the private key (PKCS#8 PEM) and the
/// public key (SPKI PEM).
#[derive(Debug)]
pub struct KeyPair {
    /// The private key, PEM.
    pub private_pem: Vec<u8>,
    /// The public key, PEM.
    pub public_pem: Vec<u8>,
}

/// A fresh RSA 2048 (`"rsa"`) or P-256 (`"ec"`) key pair.
pub fn key_pair(kind: &str) -> KeyPair {
    let dir = TempDir::new("keys");
    let private = dir.join("private.pem");
    let public = dir.join("public.pem");
    let args: &[&str] = match kind {
        "rsa" => &["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
        _ => &["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"],
    };
    let ok = Command::new("openssl")
        .arg("genpkey")
        .args(args)
        .arg("-out")
        .arg(&private)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
        && Command::new("openssl")
            .args(["pkey", "-pubout", "-in"])
            .arg(&private)
            .arg("-out")
            .arg(&public)
            .status()
            .is_ok_and(|s| s.success());
    assert!(
        ok,
        "the openssl command line is needed to make test keys (apt-get install openssl)"
    );
    KeyPair {
        private_pem: std::fs::read(&private).unwrap_or_default(),
        public_pem: std::fs::read(&public).unwrap_or_default(),
    }
}

/// Seconds since the Unix epoch.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// A JWT with `claims`, signed with `key` under `alg`.
pub fn mint(
    alg: jsonwebtoken::Algorithm,
    key: &jsonwebtoken::EncodingKey,
    claims: &serde_json::Value,
) -> String {
    jsonwebtoken::encode(&jsonwebtoken::Header::new(alg), claims, key)
        .unwrap_or_else(|e| panic!("mint a token: {e}"))
}

/// An HS256 token signed with `secret` for `subject`, audience `audience`, issuer `issuer`,
/// valid for ten minutes.
pub fn hs256_token(secret: &str, audience: &str, issuer: &str, subject: &str) -> String {
    let key =
        jsonwebtoken::EncodingKey::from_secret(secret.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    mint(
        jsonwebtoken::Algorithm::HS256,
        &key,
        &serde_json::json!({"sub": subject, "aud": audience, "iss": issuer, "exp": now() + 600}),
    )
}

/// Bearer authentication for `resource` accepting the HS256 tokens of
/// [`hs256_token`] signed with `secret` by `issuer`, in `mode`.
pub fn hs256_auth(
    secret: &str,
    resource: &str,
    issuer: &str,
    mode: fusion_runtime::auth::AuthMode,
) -> fusion_runtime::auth::Auth {
    let verifier = fusion_runtime::auth::JwtVerifier::new(resource)
        .issuer(issuer)
        .hs256_secret(secret.as_bytes())
        .unwrap_or_else(|e| panic!("{e}"));
    fusion_runtime::auth::Auth::new(verifier, resource)
        .authorization_server(issuer)
        .mode(mode)
}

/// The URL a server's `fusion: {what} at {url}` announcement on stderr names, in either
/// `--log-format`: the text line, or the JSON object whose `fields.message` is `what`.
pub fn announced(line: &str, what: &str) -> Option<String> {
    if let Some(rest) = line
        .strip_prefix("fusion: ")
        .and_then(|l| l.strip_prefix(what))
        .and_then(|l| l.strip_prefix(" at "))
    {
        return Some(rest.split(' ').next().unwrap_or_default().to_owned());
    }
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    (v["fields"]["message"] == what)
        .then(|| v["fields"]["url"].as_str().map(str::to_owned))
        .flatten()
}

/// docs/operations.md, whose scrape configuration [`Prometheus`] runs.
const OPERATIONS_GUIDE: &str = include_str!("../../docs/operations.md");

/// docs/state.md, whose nginx configuration [`Nginx`] runs.
const STATE_GUIDE: &str = include_str!("../../docs/state.md");

/// The body of the first fenced `lang` block of `guide` that contains `marker`.
fn guide_block<'a>(guide: &'a str, lang: &str, marker: &str) -> &'a str {
    let fence = format!("```{lang}\n");
    guide
        .match_indices(&fence)
        .filter_map(|(i, _)| {
            let body = &guide[i + fence.len()..];
            body.find("```").map(|end| &body[..end])
        })
        .find(|body| body.contains(marker))
        .unwrap_or_else(|| panic!("no ```{lang} block with `{marker}` in the guide"))
}

/// `text` with `from` replaced by `to`; panics when `from` is not there.
fn substitute(text: &str, from: &str, to: &str) -> String {
    assert!(
        text.contains(from),
        "the guide's block no longer contains `{from}`:\n{text}"
    );
    text.replacen(from, to, 1)
}
