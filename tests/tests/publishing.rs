//! What a release of the two crates promises, read from the sources and `cargo metadata`:
//!
//! - every macro `fusion-macros` defines is re-exported by `fusion-runtime` (users never
//!   name `fusion-macros`);
//! - `fusion-runtime` depends on `fusion-macros` at exactly its own version (`=x.y.z`), so
//!   the two cannot be mixed across releases;
//! - the MSRV: no package in the dependency graph declares a `rust-version` above the
//!   workspace's (the only MSRV check possible on a machine with one toolchain, beside
//!   clippy's `incompatible_msrv` lint, which reads the same field).

use std::collections::BTreeSet;
use std::process::Command;

use serde_json::Value;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

fn read(path: &str) -> String {
    let path = format!("{ROOT}/{path}");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `cargo metadata` of the workspace, with or without its dependencies.
fn metadata(no_deps: bool) -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut command = Command::new(cargo);
    command
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .arg("--manifest-path")
        .arg(format!("{ROOT}/Cargo.toml"));
    if no_deps {
        command.arg("--no-deps");
    }
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cargo metadata: {e}"));
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("cargo metadata: {e}"))
}

fn package<'a>(metadata: &'a Value, name: &str) -> &'a Value {
    metadata["packages"]
        .as_array()
        .and_then(|packages| packages.iter().find(|p| p["name"] == name))
        .unwrap_or_else(|| panic!("no package {name} in cargo metadata"))
}

/// The names `fusion-macros` exports: a derive's name, an attribute macro's function name.
fn macros_defined() -> BTreeSet<String> {
    let source = read("fusion-macros/src/lib.rs");
    let mut names = BTreeSet::new();
    let mut lines = source.lines().map(str::trim);
    while let Some(line) = lines.next() {
        if let Some(rest) = line.strip_prefix("#[proc_macro_derive(") {
            let name = rest.split([',', ')']).next().unwrap_or_default().trim();
            names.insert(name.to_owned());
        } else if line.starts_with("#[proc_macro_attribute]") || line.starts_with("#[proc_macro]") {
            let name = lines
                .find_map(|l| l.strip_prefix("pub fn "))
                .and_then(|l| l.split('(').next())
                .unwrap_or_default();
            names.insert(name.to_owned());
        }
    }
    names
}

#[test]
fn every_macro_is_reexported_by_fusion_runtime() {
    let defined = macros_defined();
    assert!(
        defined.len() >= 5,
        "fewer macros than expected were read: {defined:?}"
    );
    let runtime = read("fusion-runtime/src/lib.rs");
    let missing: Vec<_> = defined
        .iter()
        .filter(|name| !runtime.contains(&format!("pub use fusion_macros::{name};")))
        .collect();
    assert!(
        missing.is_empty(),
        "fusion-runtime does not re-export {missing:?}"
    );
}

#[test]
fn fusion_runtime_pins_fusion_macros_to_its_own_version() {
    let metadata = metadata(true);
    let runtime = package(&metadata, "fusion-runtime");
    let macros = package(&metadata, "fusion-macros");
    assert_eq!(runtime["version"], macros["version"]);
    let requirement = runtime["dependencies"]
        .as_array()
        .and_then(|deps| deps.iter().find(|d| d["name"] == "fusion-macros"))
        .map(|d| d["req"].clone());
    let exact = format!("={}", macros["version"].as_str().unwrap_or_default());
    assert_eq!(requirement, Some(Value::from(exact)));
}

/// `1.89` or `1.89.0` as comparable numbers.
fn version(text: &str) -> Vec<u64> {
    let mut parts: Vec<u64> = text
        .split('.')
        .map(|p| p.parse().unwrap_or_else(|e| panic!("{text}: {e}")))
        .collect();
    parts.resize(3, 0);
    parts
}

#[test]
fn no_dependency_needs_a_newer_rust_than_the_declared_msrv() {
    let metadata = metadata(false);
    let ours = package(&metadata, "fusion-runtime")["rust_version"]
        .as_str()
        .unwrap_or_else(|| panic!("fusion-runtime declares no rust-version"));
    let too_new: Vec<String> = metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let needs = p["rust_version"].as_str()?;
            (version(needs) > version(ours))
                .then(|| format!("{} {} needs {needs}", p["name"], p["version"]))
        })
        .collect();
    assert!(
        too_new.is_empty(),
        "the MSRV is {ours}, but {too_new:?}: raise workspace.package.rust-version"
    );
    assert_eq!(version("1.89"), [1, 89, 0]);
    assert!(version("1.89.0") > version("1.88"));
}
