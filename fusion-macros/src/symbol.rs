use std::fmt::{self, Display};

use syn::{Ident, Path};

/// An attribute keyword.
#[derive(Copy, Clone)]
pub struct Symbol(pub &'static str);

pub const FUSION: Symbol = Symbol("fusion");
pub const SERDE: Symbol = Symbol("serde");
pub const DOC: Symbol = Symbol("doc");

// container
pub const ALLOW_UNKNOWN_FIELDS: Symbol = Symbol("allow_unknown_fields");

// field
// (the validation attributes are rows of `rules::RULES`)
pub const EXPECTED: Symbol = Symbol("expected");
pub const DESCRIPTION: Symbol = Symbol("description");
pub const VALIDATE: Symbol = Symbol("validate");
pub const DEPRECATED: Symbol = Symbol("deprecated");

// bounds
pub const MIN: Symbol = Symbol("min");
pub const MAX: Symbol = Symbol("max");
pub const EXCLUSIVE_MIN: Symbol = Symbol("exclusive_min");
pub const EXCLUSIVE_MAX: Symbol = Symbol("exclusive_max");

// serde
pub const DESERIALIZE: Symbol = Symbol("deserialize");
pub const SERIALIZE: Symbol = Symbol("serialize");

impl PartialEq<Symbol> for Ident {
    fn eq(&self, word: &Symbol) -> bool {
        self == word.0
    }
}

impl PartialEq<Symbol> for &Ident {
    fn eq(&self, word: &Symbol) -> bool {
        *self == word.0
    }
}

impl PartialEq<Symbol> for Path {
    fn eq(&self, word: &Symbol) -> bool {
        self.is_ident(word.0)
    }
}

impl PartialEq<Symbol> for &Path {
    fn eq(&self, word: &Symbol) -> bool {
        self.is_ident(word.0)
    }
}

impl Display for Symbol {
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str(self.0)
    }
}
