//! What the OpenAPI tests share: httpbin (PyPI `httpbin` + `flasgger`) on a free loopback
//! port, serving its own Swagger 2.0 document at `/spec.json`; the Python that has it and the
//! official SDK (`scripts/ci-openapi` makes `target/py-openapi`, or `FUSION_TEST_OPENAPI_PY`
//! names another); the npm packages of documents others wrote (`tests/openapi/node_modules`).

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::services::free_port;

const INSTALL: &str =
    "run scripts/ci-openapi (pip: mcp==2.3.0 httpbin flasgger; npm ci in tests/openapi)";

/// The workspace's root.
pub fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The Python with `mcp`, `httpbin` and `flasgger` installed.
pub fn python() -> PathBuf {
    let path = std::env::var_os("FUSION_TEST_OPENAPI_PY")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/py-openapi/bin/python"));
    assert!(path.is_file(), "{} is missing: {INSTALL}", path.display());
    path
}

/// A file of an npm package `tests/openapi` installs.
pub fn npm_file(rel: &str) -> PathBuf {
    let path = root().join("tests/openapi/node_modules").join(rel);
    assert!(path.exists(), "{} is missing: {INSTALL}", path.display());
    path
}

/// httpbin on a loopback port; stopped on drop.
pub struct Httpbin {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    port: u16,
}

impl Httpbin {
    /// Starts httpbin and waits (30 s at most) until it serves its document.
    pub fn start() -> Httpbin {
        let port = free_port();
        let child = Command::new(python())
            .args([
                "-m",
                "httpbin.core",
                "--port",
                &port.to_string(),
                "--host",
                "127.0.0.1",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start httpbin: {e}"));
        let mut bin = Httpbin {
            child,
            url: format!("http://127.0.0.1:{port}"),
            port,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if bin.get("/spec.json").is_some_and(|(s, _)| s == 200) {
                return bin;
            }
            if let Ok(Some(status)) = bin.child.try_wait() {
                panic!("httpbin exited: {status}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("httpbin did not serve /spec.json within 30 s");
    }

    /// A plain HTTP/1.0 GET: the status and the body.
    pub fn get(&self, path: &str) -> Option<(u16, String)> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
        write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
        let mut raw = String::new();
        s.read_to_string(&mut raw).ok()?;
        let (head, body) = raw.split_once("\r\n\r\n")?;
        let status = head.split(' ').nth(1)?.parse().ok()?;
        Some((status, body.to_owned()))
    }

    /// httpbin's own document.
    pub fn spec(&self) -> serde_json::Value {
        let (_, body) = self
            .get("/spec.json")
            .unwrap_or_else(|| panic!("no /spec.json"));
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("/spec.json is not JSON: {e}"))
    }
}

impl Drop for Httpbin {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// httpbin's document with what its generated description leaves out, written as any
/// author would: a bearer scheme on `GET /bearer`, query arrays and a header on
/// `GET /anything`, a JSON body on `POST /anything`, a URL-encoded form on `PUT /anything`.
pub fn extended_httpbin_spec(mut spec: serde_json::Value) -> serde_json::Value {
    use serde_json::json;
    spec["securityDefinitions"] = json!({"bearer": {"type": "oauth2", "flow": "application", "tokenUrl": "http://127.0.0.1/token"}});
    spec["paths"]["/bearer"]["get"]["security"] = json!([{"bearer": []}]);
    spec["paths"]["/anything"]["get"]["parameters"] = json!([
        {"name": "tags", "in": "query", "type": "array", "items": {"type": "string"}, "collectionFormat": "multi"},
        {"name": "ids", "in": "query", "type": "array", "items": {"type": "integer", "minimum": 1}, "collectionFormat": "pipes"},
        {"name": "q", "in": "query", "type": "string", "maxLength": 20},
        {"name": "X-Trace", "in": "header", "type": "string", "pattern": "^t-[0-9]+$"}
    ]);
    spec["paths"]["/anything"]["post"]["consumes"] = json!(["application/json"]);
    spec["paths"]["/anything"]["post"]["parameters"] = json!([
        {"name": "body", "in": "body", "required": true, "schema": {"type": "object", "required": ["name"],
            "properties": {"name": {"type": "string", "minLength": 1}, "n": {"type": "integer", "x-nullable": true}}}}
    ]);
    spec["paths"]["/anything"]["put"]["consumes"] = json!(["application/x-www-form-urlencoded"]);
    spec["paths"]["/anything"]["put"]["parameters"] = json!([
        {"name": "user", "in": "formData", "type": "string", "required": true},
        {"name": "tag", "in": "formData", "type": "array", "items": {"type": "string"}, "collectionFormat": "multi"}
    ]);
    spec
}
