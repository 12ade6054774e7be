//! `fusion.lock`: the tool contracts of a server, frozen in a deterministic, reviewable file.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::canonical::to_canonical_pretty;
use super::diff::{Delta, diff};
use super::{Hints, ToolContract};

/// The value of the lockfile's `format` key; anything else is not a Fusion lockfile.
pub const LOCK_FORMAT: &str = "fusion-lock";

/// The lockfile format version this crate reads and writes.
pub const LOCK_VERSION: u64 = 1;

/// Why a lockfile could not be built, read, parsed or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LockError {
    /// The file could not be read or written.
    #[error("cannot {op} lockfile `{}`: {source}", path.display())]
    Io {
        /// `read` or `write`.
        op: &'static str,
        /// The lockfile path.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The text is not JSON.
    #[error("lockfile is not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The JSON is not a Fusion lockfile (no `"format": "fusion-lock"`).
    #[error("not a Fusion lockfile: {0}")]
    Foreign(String),
    /// A Fusion lockfile of a format version this crate does not read.
    #[error(
        "unsupported lockfile version {found} (this build reads version {LOCK_VERSION}); regenerate it with `lock`"
    )]
    UnsupportedVersion {
        /// The version found, as written.
        found: String,
    },
    /// A Fusion lockfile with a malformed entry.
    #[error("invalid lockfile at `{path}`: {message}")]
    Invalid {
        /// Where in the lockfile (`actions.billing.get_invoice.digest`).
        path: String,
        /// What is wrong.
        message: String,
    },
    /// An entry whose digest does not match its contract: the file was edited by hand.
    #[error(
        "the digest of action `{action}` does not match its contract (was the lockfile edited by hand?); regenerate it with `lock`"
    )]
    DigestMismatch {
        /// The action.
        action: String,
    },
    /// Two contracts name the same action.
    #[error("action `{0}` is defined more than once")]
    DuplicateAction(String),
}

impl LockError {
    pub(crate) fn invalid(path: impl Into<String>, message: impl Into<String>) -> Self {
        LockError::Invalid {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// The contents of `fusion.lock`: every action's contract and digest, keyed by action name.
///
/// The file is JSON with keys sorted at every depth, pretty-printed with two-space indentation
/// and a trailing newline:
///
/// ```json
/// {
///   "actions": {
///     "billing.get_invoice": {
///       "contract": { "action": "billing.get_invoice", "annotations": {}, "description": "…", "input": {…}, "tool": "billing_get_invoice" },
///       "digest": "sha256:…"
///     }
///   },
///   "format": "fusion-lock",
///   "version": 1
/// }
/// ```
///
/// It holds nothing that changes without a contract change: no timestamps, no tool versions,
/// no paths. The same contracts give the same bytes on every run and machine, whatever the
/// order in which actions were registered or schema keys were inserted.
#[derive(Clone, Debug, PartialEq)]
pub struct Lockfile {
    contracts: Vec<ToolContract>,
}

impl Lockfile {
    /// The lockfile of these contracts. Errors when two contracts name the same action.
    pub fn from_contracts(contracts: &[ToolContract]) -> Result<Lockfile, LockError> {
        let mut by_name: BTreeMap<&str, &ToolContract> = BTreeMap::new();
        for c in contracts {
            if by_name.insert(c.action.as_str(), c).is_some() {
                return Err(LockError::DuplicateAction(c.action.clone()));
            }
        }
        Ok(Lockfile {
            contracts: by_name.into_values().cloned().collect(),
        })
    }

    /// The contracts, sorted by action name.
    pub fn contracts(&self) -> &[ToolContract] {
        &self.contracts
    }

    /// The contract of `action`.
    pub fn get(&self, action: &str) -> Option<&ToolContract> {
        self.contracts
            .binary_search_by(|c| c.action.as_str().cmp(action))
            .ok()
            .and_then(|i| self.contracts.get(i))
    }

    /// The lockfile as a JSON value (see the type docs for the layout).
    pub fn to_json(&self) -> Value {
        let mut actions = Map::new();
        for c in &self.contracts {
            let mut entry = Map::new();
            entry.insert("contract".into(), c.to_json());
            entry.insert("digest".into(), Value::String(c.digest()));
            actions.insert(c.action.clone(), Value::Object(entry));
        }
        let mut root = Map::new();
        root.insert("actions".into(), Value::Object(actions));
        root.insert("format".into(), Value::String(LOCK_FORMAT.into()));
        root.insert("version".into(), Value::from(LOCK_VERSION));
        Value::Object(root)
    }

    /// Reads a lockfile's text. Every problem is an error, never a panic: text that is not
    /// JSON, JSON that is not a Fusion lockfile, another format version, a malformed entry, or
    /// a digest that does not match its contract.
    pub fn parse(text: &str) -> Result<Lockfile, LockError> {
        let root: Value = serde_json::from_str(text)?;
        let Value::Object(root) = root else {
            return Err(LockError::Foreign("the top level is not an object".into()));
        };
        match root.get("format") {
            Some(Value::String(f)) if f == LOCK_FORMAT => {}
            Some(other) => {
                return Err(LockError::Foreign(format!(
                    "`format` is {other}, expected \"{LOCK_FORMAT}\""
                )));
            }
            None => {
                return Err(LockError::Foreign(format!(
                    "no `format` key (expected \"{LOCK_FORMAT}\")"
                )));
            }
        }
        match root.get("version") {
            Some(v) if v.as_u64() == Some(LOCK_VERSION) => {}
            Some(v) => {
                return Err(LockError::UnsupportedVersion {
                    found: v.to_string(),
                });
            }
            None => return Err(LockError::invalid("version", "missing")),
        }
        if let Some(key) = root
            .keys()
            .find(|k| !matches!(k.as_str(), "actions" | "format" | "version"))
        {
            return Err(LockError::invalid(key.clone(), "unknown key"));
        }
        let actions = root
            .get("actions")
            .ok_or_else(|| LockError::invalid("actions", "missing"))?
            .as_object()
            .ok_or_else(|| LockError::invalid("actions", "expected an object"))?;
        let mut contracts = Vec::with_capacity(actions.len());
        for (name, entry) in actions {
            let at = format!("actions.{name}");
            let entry = entry
                .as_object()
                .ok_or_else(|| LockError::invalid(&at, "expected an object"))?;
            if let Some(key) = entry
                .keys()
                .find(|k| !matches!(k.as_str(), "contract" | "digest"))
            {
                return Err(LockError::invalid(format!("{at}.{key}"), "unknown key"));
            }
            let digest = entry
                .get("digest")
                .and_then(Value::as_str)
                .ok_or_else(|| LockError::invalid(format!("{at}.digest"), "expected a string"))?;
            let contract_at = format!("{at}.contract");
            let contract = ToolContract::from_json(
                entry
                    .get("contract")
                    .ok_or_else(|| LockError::invalid(&contract_at, "missing"))?,
                &contract_at,
            )?;
            if contract.action != *name {
                return Err(LockError::invalid(
                    format!("{contract_at}.action"),
                    format!("names `{}`, but the entry is `{name}`", contract.action),
                ));
            }
            if contract.digest() != digest {
                return Err(LockError::DigestMismatch {
                    action: name.clone(),
                });
            }
            contracts.push(contract);
        }
        contracts.sort_by(|a, b| a.action.cmp(&b.action));
        Ok(Lockfile { contracts })
    }

    /// Reads and parses the lockfile at `path`.
    pub fn read(path: impl AsRef<Path>) -> Result<Lockfile, LockError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| LockError::Io {
            op: "read",
            path: path.to_owned(),
            source,
        })?;
        Lockfile::parse(&text)
    }

    /// Writes the lockfile to `path` (through a temporary file in the same directory, renamed
    /// into place, so a reader never sees half a file).
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), LockError> {
        let path = path.as_ref();
        let io = |source| LockError::Io {
            op: "write",
            path: path.to_owned(),
            source,
        };
        let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
        tmp_name.push(".tmp");
        let tmp = path.with_file_name(tmp_name);
        std::fs::write(&tmp, self.to_string()).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io(e)
        })
    }

    /// The deltas from this lockfile to the `current` contracts; empty when the lockfile is up
    /// to date. This is what `lock --check` reports.
    ///
    /// Every difference in a contract yields at least one delta, so an empty result means the
    /// lockfile [`Lockfile::from_contracts`] would write for `current` has the same contents.
    pub fn check(&self, current: &[ToolContract]) -> Vec<Delta> {
        diff(&self.contracts, current)
    }
}

impl fmt::Display for Lockfile {
    /// The file's text: canonical, pretty-printed JSON with a trailing newline.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&to_canonical_pretty(&self.to_json()))?;
        f.write_str("\n")
    }
}

impl ToolContract {
    /// Reads the form written by [`ToolContract::to_json`]. `at` is the path used in error
    /// messages (`actions.billing.get_invoice.contract`).
    pub fn from_json(value: &Value, at: &str) -> Result<ToolContract, LockError> {
        let obj = value
            .as_object()
            .ok_or_else(|| LockError::invalid(at, "expected an object"))?;
        for key in obj.keys() {
            if !matches!(
                key.as_str(),
                "action"
                    | "annotations"
                    | "deprecated"
                    | "description"
                    | "input"
                    | "scopes"
                    | "tool"
            ) {
                return Err(LockError::invalid(
                    format!("{at}.{key}"),
                    "unknown key in a contract",
                ));
            }
        }
        let string = |key: &str| -> Result<String, LockError> {
            obj.get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| LockError::invalid(format!("{at}.{key}"), "expected a string"))
        };
        let deprecated = match obj.get("deprecated") {
            None => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => {
                return Err(LockError::invalid(
                    format!("{at}.deprecated"),
                    "expected a string",
                ));
            }
        };
        let input_schema = obj
            .get("input")
            .cloned()
            .ok_or_else(|| LockError::invalid(format!("{at}.input"), "missing input schema"))?;
        Ok(ToolContract {
            action: string("action")?,
            tool: string("tool")?,
            description: string("description")?,
            annotations: annotations_from_json(obj.get("annotations"), at)?,
            deprecated,
            input_schema,
            scopes: scopes_from_json(obj.get("scopes"), at)?,
        })
    }
}

fn scopes_from_json(value: Option<&Value>, at: &str) -> Result<Vec<String>, LockError> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let bad = || LockError::invalid(format!("{at}.scopes"), "expected an array of strings");
    let mut scopes = value
        .as_array()
        .ok_or_else(bad)?
        .iter()
        .map(|s| s.as_str().map(str::to_owned).ok_or_else(bad))
        .collect::<Result<Vec<_>, _>>()?;
    scopes.sort();
    scopes.dedup();
    Ok(scopes)
}

fn annotations_from_json(value: Option<&Value>, at: &str) -> Result<Hints, LockError> {
    let Some(value) = value else {
        return Ok(Hints::default());
    };
    let obj = value
        .as_object()
        .ok_or_else(|| LockError::invalid(format!("{at}.annotations"), "expected an object"))?;
    let mut a = Hints::default();
    for (key, v) in obj {
        let slot = match key.as_str() {
            "readOnlyHint" => &mut a.read_only,
            "destructiveHint" => &mut a.destructive,
            "idempotentHint" => &mut a.idempotent,
            "openWorldHint" => &mut a.open_world,
            _ => {
                return Err(LockError::invalid(
                    format!("{at}.annotations.{key}"),
                    "unknown hint",
                ));
            }
        };
        *slot = Some(v.as_bool().ok_or_else(|| {
            LockError::invalid(format!("{at}.annotations.{key}"), "expected a boolean")
        })?);
    }
    Ok(a)
}
