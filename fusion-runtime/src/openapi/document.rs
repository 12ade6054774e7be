//! Reading an OpenAPI document: its text (JSON or YAML, from a file, a string or a value), the
//! other files its `$ref`s name, and the resolution of those references — every step bounded
//! ([`OpenApiLimits`]): bytes per file, files, the length of a `$ref` chain, and cycles named.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::{OpenApiError, OpenApiLimits};

/// Where a document comes from.
#[derive(Clone, Debug)]
pub(crate) enum Source {
    /// A file; the files its `$ref`s name are read relative to its folder.
    File(PathBuf),
    /// Text (JSON or YAML); relative `$ref`s are read relative to `base` when given.
    Text(String, Option<PathBuf>),
    /// A parsed value (shared, not copied); relative `$ref`s as for text.
    Value(Arc<Value>, Option<PathBuf>),
}

/// The document and the files it reached, each by index (the document is file 0).
pub(crate) struct Document {
    files: Vec<File>,
    by_path: HashMap<PathBuf, usize>,
    limits: OpenApiLimits,
}

struct File {
    /// Shared: the plan reads the document's root while more files are read.
    value: Arc<Value>,
    /// The file's own path (for the ones read from disk).
    path: Option<PathBuf>,
    /// Where the relative references it holds are read from.
    base: Option<PathBuf>,
}

/// A place in the document: a file and a JSON pointer into it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Place {
    pub(crate) file: usize,
    pub(crate) pointer: String,
}

impl Place {
    pub(crate) fn root(pointer: impl Into<String>) -> Place {
        Place {
            file: 0,
            pointer: pointer.into(),
        }
    }

    /// One step down: `key` escaped as RFC 6901 says.
    pub(crate) fn join(&self, key: &str) -> Place {
        Place {
            file: self.file,
            pointer: format!("{}/{}", self.pointer, escape(key)),
        }
    }
}

/// A JSON pointer segment: `~` as `~0`, `/` as `~1`.
pub(crate) fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn unescape(seg: &str) -> String {
    seg.replace("~1", "/").replace("~0", "~")
}

impl Document {
    /// Reads `source` (and nothing else yet: other files are read when a `$ref` names them).
    pub(crate) fn load(source: &Source, limits: &OpenApiLimits) -> Result<Document, OpenApiError> {
        let (value, path, base) = match source {
            Source::File(path) => {
                let value = Arc::new(read_file(path, limits)?);
                let base = path.parent().map(Path::to_path_buf);
                (value, Some(path.clone()), base)
            }
            Source::Text(text, base) => (
                Arc::new(parse(text, "the document", limits)?),
                None,
                base.clone(),
            ),
            Source::Value(value, base) => (Arc::clone(value), None, base.clone()),
        };
        if !value.is_object() {
            return Err(OpenApiError::document("", "the document is not an object"));
        }
        let mut by_path = HashMap::new();
        if let Some(p) = &path {
            by_path.insert(canonical(p), 0);
        }
        Ok(Document {
            files: vec![File { value, path, base }],
            by_path,
            limits: limits.clone(),
        })
    }

    /// The document's root value (shared: reading it does not copy the document).
    pub(crate) fn root(&self) -> Arc<Value> {
        Arc::clone(&self.files[0].value)
    }

    /// The value at `place`.
    pub(crate) fn at(&self, place: &Place) -> Option<&Value> {
        pointer(&self.files.get(place.file)?.value, &place.pointer)
    }

    /// How `place` is written in an error: its pointer, prefixed with its file when it is
    /// not the document.
    pub(crate) fn describe(&self, place: &Place) -> String {
        match self.files.get(place.file).and_then(|f| f.path.as_ref()) {
            Some(path) if place.file != 0 => format!("{}#{}", path.display(), place.pointer),
            _ => format!("#{}", place.pointer),
        }
    }

    /// Where the `$ref` string `reference`, written in file `from`, points (reading the file
    /// it names when it is another one).
    pub(crate) fn target(
        &mut self,
        from: usize,
        reference: &str,
        at: &Place,
    ) -> Result<Place, OpenApiError> {
        let (file_part, fragment) = match reference.split_once('#') {
            Some((f, frag)) => (f, frag),
            None => (reference, ""),
        };
        let fragment = percent_encoding::percent_decode_str(fragment)
            .decode_utf8_lossy()
            .into_owned();
        if !fragment.is_empty() && !fragment.starts_with('/') {
            return Err(OpenApiError::document(
                &self.describe(at),
                format!(
                    "the $ref `{reference}` is not a JSON pointer (only `#/…` fragments are followed)"
                ),
            ));
        }
        let file = if file_part.is_empty() {
            from
        } else {
            self.file_named(from, file_part, reference, at)?
        };
        let place = Place {
            file,
            pointer: fragment,
        };
        if self.at(&place).is_none() {
            return Err(OpenApiError::document(
                &self.describe(at),
                format!("the $ref `{reference}` points to nothing"),
            ));
        }
        Ok(place)
    }

    fn file_named(
        &mut self,
        from: usize,
        name: &str,
        reference: &str,
        at: &Place,
    ) -> Result<usize, OpenApiError> {
        if name.contains("://") {
            return Err(OpenApiError::document(
                &self.describe(at),
                format!(
                    "the $ref `{reference}` names a URL; only files beside the document are read (download it and point to the file)"
                ),
            ));
        }
        let Some(base) = self.files[from].base.clone() else {
            return Err(OpenApiError::document(
                &self.describe(at),
                format!(
                    "the $ref `{reference}` names another file, but the document was not read from a file (use OpenApi::file, or OpenApi::base_dir)"
                ),
            ));
        };
        let path = base.join(name);
        let key = canonical(&path);
        if let Some(&i) = self.by_path.get(&key) {
            return Ok(i);
        }
        if self.files.len() >= self.limits.max_files {
            return Err(OpenApiError::document(
                &self.describe(at),
                format!(
                    "the $ref `{reference}` would read a file beyond the limit of {} files",
                    self.limits.max_files
                ),
            ));
        }
        let value = read_file(&path, &self.limits).map_err(|e| {
            OpenApiError::document(
                &self.describe(at),
                format!("$ref `{reference}`: {}", e.message),
            )
        })?;
        let base = path.parent().map(Path::to_path_buf);
        self.files.push(File {
            value: Arc::new(value),
            path: Some(path),
            base,
        });
        self.by_path.insert(key, self.files.len() - 1);
        Ok(self.files.len() - 1)
    }

    /// Follows `$ref`s from `place` until a value that is not one, at most
    /// [`OpenApiLimits::max_ref_depth`] of them; a chain that comes back on itself is named.
    pub(crate) fn follow(&mut self, place: &Place) -> Result<Place, OpenApiError> {
        let mut here = place.clone();
        let mut seen: HashSet<Place> = HashSet::new();
        let mut steps = 0usize;
        loop {
            let Some(reference) = self.at(&here).and_then(reference_of).map(str::to_owned) else {
                return Ok(here);
            };
            if !seen.insert(here.clone()) {
                return Err(OpenApiError::document(
                    &self.describe(place),
                    format!(
                        "a $ref cycle: {} leads back to itself through `{reference}`",
                        self.describe(&here)
                    ),
                ));
            }
            steps += 1;
            if steps > self.limits.max_ref_depth {
                return Err(OpenApiError::document(
                    &self.describe(place),
                    format!(
                        "a chain of more than {} $refs (raise OpenApiLimits::max_ref_depth if it is meant)",
                        self.limits.max_ref_depth
                    ),
                ));
            }
            here = self.target(here.file, &reference, &here)?;
        }
    }
}

/// The `$ref` string of a reference object.
pub(crate) fn reference_of(v: &Value) -> Option<&str> {
    v.get("$ref")?.as_str()
}

/// RFC 6901: the value at `ptr` (`""` is the whole value).
fn pointer<'a>(root: &'a Value, ptr: &str) -> Option<&'a Value> {
    if ptr.is_empty() {
        return Some(root);
    }
    let mut v = root;
    for seg in ptr.strip_prefix('/')?.split('/') {
        let seg = unescape(seg);
        v = match v {
            Value::Object(m) => m.get(&seg)?,
            Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(v)
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

fn read_file(path: &Path, limits: &OpenApiLimits) -> Result<Value, OpenApiError> {
    use std::io::Read as _;
    let shown = path.display().to_string();
    let file = std::fs::File::open(path)
        .map_err(|e| OpenApiError::document("", format!("cannot read {shown}: {e}")))?;
    let mut bytes = Vec::new();
    let max = limits.max_document_bytes;
    file.take(max as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| OpenApiError::document("", format!("cannot read {shown}: {e}")))?;
    if bytes.len() > max {
        return Err(too_large(&shown, max));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| OpenApiError::document("", format!("{shown} is not UTF-8 text")))?;
    parse(&text, &shown, limits)
}

fn too_large(what: &str, max: usize) -> OpenApiError {
    OpenApiError::document(
        "",
        format!("{what} is larger than {max} bytes (OpenApiLimits::max_document_bytes)"),
    )
}

/// JSON when the text starts with `{`, else YAML (a superset of JSON).
fn parse(text: &str, what: &str, limits: &OpenApiLimits) -> Result<Value, OpenApiError> {
    if text.len() > limits.max_document_bytes {
        return Err(too_large(what, limits.max_document_bytes));
    }
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with('{') {
        return serde_json::from_str(trimmed)
            .map_err(|e| OpenApiError::document("", format!("{what} is not valid JSON: {e}")));
    }
    // serde_yaml_ng bounds nesting (128) and alias expansion (a "billion laughs" document is
    // refused), so a hostile text costs what its bytes cost.
    serde_yaml_ng::from_str::<Value>(trimmed)
        .map_err(|e| OpenApiError::document("", format!("{what} is not valid YAML or JSON: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> OpenApiLimits {
        OpenApiLimits::default()
    }

    #[test]
    fn pointers_unescape_and_index_arrays() {
        let v = serde_json::json!({"paths": {"/a/{b}": {"get": {"parameters": [{"name": "x"}]}}}});
        assert_eq!(
            pointer(&v, "/paths/~1a~1{b}/get/parameters/0/name"),
            Some(&serde_json::json!("x"))
        );
        assert_eq!(pointer(&v, "/paths/nothing"), None);
    }

    #[test]
    fn a_cycle_of_references_is_named() {
        let v = serde_json::json!({"openapi": "3.0.0", "components": {"schemas": {
            "A": {"$ref": "#/components/schemas/B"},
            "B": {"$ref": "#/components/schemas/A"}}}});
        let mut doc = Document::load(&Source::Value(Arc::new(v), None), &limits())
            .unwrap_or_else(|e| panic!("{e}"));
        let e = doc
            .follow(&Place::root("/components/schemas/A"))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("$ref cycle"), "{e}");
        assert!(e.contains("#/components/schemas/A"), "{e}");
    }

    #[test]
    fn a_long_chain_stops_at_the_limit() {
        let mut schemas = serde_json::Map::new();
        for i in 0..10_000 {
            schemas.insert(
                format!("S{i}"),
                serde_json::json!({"$ref": format!("#/components/schemas/S{}", i + 1)}),
            );
        }
        schemas.insert("S10000".into(), serde_json::json!({"type": "string"}));
        let v = serde_json::json!({"openapi": "3.0.0", "components": {"schemas": schemas}});
        let mut doc = Document::load(&Source::Value(Arc::new(v), None), &limits())
            .unwrap_or_else(|e| panic!("{e}"));
        let e = doc
            .follow(&Place::root("/components/schemas/S0"))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("a chain of more than 64 $refs"), "{e}");
        let end = doc.follow(&Place::root("/components/schemas/S9990"));
        assert_eq!(end.ok(), Some(Place::root("/components/schemas/S10000")));
    }

    #[test]
    fn yaml_and_json_both_read() {
        let y = parse(
            "openapi: 3.1.0\ninfo: {title: t, version: '1'}\n",
            "t",
            &limits(),
        );
        assert_eq!(
            y.ok().and_then(|v| v.get("openapi").cloned()),
            Some("3.1.0".into())
        );
        let e = parse("{\"openapi\": ", "the document", &limits())
            .err()
            .map(|e| e.to_string());
        assert!(e.unwrap_or_default().contains("not valid JSON"));
    }

    #[test]
    fn a_billion_laughs_is_refused() {
        let mut y = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        let mut prev = 'a';
        for c in 'b'..='k' {
            y.push_str(&format!(
                "{c}: &{c} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
            ));
            prev = c;
        }
        let started = std::time::Instant::now();
        assert!(parse(&y, "the document", &limits()).is_err());
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }
}
