//! Where an issue is, as typed segments (a key or an index) up to the rendered
//! `<field name="…">`: a key holding a `.` stays one key, so the value sent there is found.

use serde_json::Value;

use super::sent::{push_cut, push_int};

/// Longest field path shown in a `name` attribute, in characters (its keys cut to 50 first).
pub const MAX_PATH_CHARS: usize = 200;

/// One step into the arguments.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Segment {
    /// A key of an object.
    Key(String),
    /// An index of an array.
    Index(usize),
}

/// The path of an issue; the empty path is the arguments object itself (`(root)`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct IssuePath(Vec<Segment>);

impl IssuePath {
    /// The arguments object.
    pub fn root() -> Self {
        IssuePath(Vec::new())
    }

    /// The segments, outermost first.
    pub fn segments(&self) -> &[Segment] {
        &self.0
    }

    /// Whether this is the arguments object itself.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// Appends a key.
    pub fn push_key(&mut self, key: impl Into<String>) {
        self.0.push(Segment::Key(key.into()));
    }

    /// Appends an index.
    pub fn push_index(&mut self, index: usize) {
        self.0.push(Segment::Index(index));
    }

    /// The value at this path in `root`, for "You sent".
    pub fn value_in<'a>(&self, root: &'a Value) -> Option<&'a Value> {
        self.0.iter().try_fold(root, |v, seg| match (seg, v) {
            (Segment::Key(k), Value::Object(m)) => m.get(k),
            (Segment::Index(i), Value::Array(a)) => a.get(*i),
            _ => None,
        })
    }

    /// The dotted text (`items.0.sku`); when `cut`, each key cut to 50 characters, and no
    /// more segments than [`MAX_PATH_CHARS`](MAX_PATH_CHARS) characters need.
    pub(crate) fn write(&self, out: &mut String, cut: bool) {
        for (i, seg) in self.0.iter().enumerate() {
            if cut && out.len() > MAX_PATH_CHARS * 4 {
                break;
            }
            if i > 0 {
                out.push('.');
            }
            match seg {
                Segment::Key(k) if cut => push_cut(out, k),
                Segment::Key(k) => out.push_str(k),
                Segment::Index(n) => push_int(out, *n),
            }
        }
    }
}

impl std::fmt::Display for IssuePath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = String::new();
        self.write(&mut out, false);
        f.write_str(&out)
    }
}

/// A path written as text is one key (`""` is the root): `Issue::new("email", …)`.
impl From<&str> for IssuePath {
    fn from(key: &str) -> Self {
        IssuePath::from(key.to_owned())
    }
}

impl From<String> for IssuePath {
    fn from(key: String) -> Self {
        if key.is_empty() {
            IssuePath::root()
        } else {
            IssuePath(vec![Segment::Key(key)])
        }
    }
}

impl From<Vec<Segment>> for IssuePath {
    fn from(segments: Vec<Segment>) -> Self {
        IssuePath(segments)
    }
}

/// Where a value sits while the derive's code walks a typed input: borrowed from the caller's
/// frame, nothing is allocated unless an issue needs the path.
#[derive(Clone, Copy, Debug)]
pub enum Path<'a> {
    /// The arguments object.
    Root,
    /// A key of the object at the parent path.
    Key(&'a Path<'a>, &'a str),
    /// An index of the array at the parent path.
    Index(&'a Path<'a>, usize),
}

impl Path<'_> {
    /// As an [`IssuePath`].
    pub fn to_issue_path(&self) -> IssuePath {
        let (parent, segment) = match *self {
            Path::Root => return IssuePath::root(),
            Path::Key(p, k) => (p, Segment::Key(k.to_owned())),
            Path::Index(p, i) => (p, Segment::Index(i)),
        };
        let mut path = parent.to_issue_path();
        path.0.push(segment);
        path
    }
}
