//! A rule's check on the typed value serde has read: its verdict ([`Check`]), what the value
//! tells ([`Typed`]), and how the derive asks a field for it ([`Probe`], [`Trusted`]).

/// A rule's verdict on a typed value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum Check {
    /// The value satisfies the rule.
    Pass,
    /// The value breaks the rule: the schema rejects the arguments.
    Fail,
    /// The typed value cannot decide: `jsonschema` checks the value sent on the field's
    /// sub-schema.
    Engine,
}

impl Check {
    /// Both verdicts: a failure wins, then the engine.
    #[inline(always)]
    pub const fn and(self, other: Check) -> Check {
        match (self, other) {
            (Check::Fail, _) | (_, Check::Fail) => Check::Fail,
            (Check::Engine, _) | (_, Check::Engine) => Check::Engine,
            _ => Check::Pass,
        }
    }

    /// [`Check::Pass`] when `ok`, else [`Check::Fail`].
    #[inline(always)]
    pub const fn from_bool(ok: bool) -> Check {
        if ok { Check::Pass } else { Check::Fail }
    }
}

/// What a field's value, as serde read it, tells its rules.
#[derive(Clone, Copy, Debug)]
pub enum Typed<'a> {
    /// A string was sent.
    Str(&'a str),
    /// An integer was sent.
    Int(i128),
    /// A boolean was sent.
    Bool,
    /// An array of this many strings was sent.
    Strs(usize),
    /// An `Option` holds `None`: the key was absent or `null`.
    Unset,
    /// The type tells nothing: `jsonschema` checks the value sent.
    Opaque,
}

/// Types whose successful deserialization proves the JSON type that was sent.
pub trait Trusted {
    /// What the value tells the rules.
    fn typed(&self) -> Typed<'_>;
}

impl Trusted for String {
    fn typed(&self) -> Typed<'_> {
        Typed::Str(self)
    }
}

impl Trusted for str {
    fn typed(&self) -> Typed<'_> {
        Typed::Str(self)
    }
}

impl Trusted for bool {
    fn typed(&self) -> Typed<'_> {
        Typed::Bool
    }
}

macro_rules! trusted_int {
    ($($t:ty),*) => {$(
        impl Trusted for $t {
            fn typed(&self) -> Typed<'_> {
                i128::try_from(*self).map_or(Typed::Opaque, Typed::Int)
            }
        }
    )*};
}
trusted_int!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl Trusted for Vec<String> {
    fn typed(&self) -> Typed<'_> {
        Typed::Strs(self.len())
    }
}

impl<T: Trusted + ?Sized> Trusted for Box<T> {
    fn typed(&self) -> Typed<'_> {
        (**self).typed()
    }
}

impl<T: Trusted> Trusted for Option<T> {
    fn typed(&self) -> Typed<'_> {
        match self {
            Some(v) => v.typed(),
            None => Typed::Unset,
        }
    }
}

/// A field the derive probes: `(&Probe(&field)).typed()` is the field's [`Trusted`] answer
/// when its type has one, and [`Typed::Opaque`] otherwise (autoref specialization).
pub struct Probe<'a, T: ?Sized>(pub &'a T);

/// The [`Probe`] branch for [`Trusted`] types.
pub trait ProbeTrusted {
    /// What the value tells.
    fn typed(&self) -> Typed<'_>;
}

impl<T: Trusted + ?Sized> ProbeTrusted for Probe<'_, T> {
    fn typed(&self) -> Typed<'_> {
        self.0.typed()
    }
}

/// The [`Probe`] branch for every other type.
pub trait ProbeOpaque {
    /// Nothing.
    fn typed(&self) -> Typed<'_> {
        Typed::Opaque
    }
}

impl<T: ?Sized> ProbeOpaque for &Probe<'_, T> {}
