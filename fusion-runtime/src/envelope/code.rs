use std::borrow::Cow;
use std::convert::Infallible;
use std::fmt;
use std::str::FromStr;

macro_rules! canonical_codes {
    ($( $(#[$doc:meta])* $variant:ident => $wire:ident, )*) => {
        /// The code of a tool error: one of the canonical codes of the contract, or any custom code.
        ///
        /// Closed, then open: the canonical codes are variants (so an editor completes them),
        /// and [`ErrorCode::Custom`] carries anything else (`InvoiceNotFound`). Parsing a
        /// canonical spelling always yields its variant, never `Custom`, so two equal wire
        /// spellings are always equal values.
        #[derive(Clone, Debug)]
        #[non_exhaustive]
        pub enum ErrorCode {
            $( $(#[$doc])* $variant, )*
            /// A code of the server author's own (`InvoiceNotFound`). Never a canonical spelling.
            Custom(Cow<'static, str>),
        }

        impl ErrorCode {
            /// Every canonical code, in the order of the contract.
            pub const CANONICAL: &'static [ErrorCode] = &[ $( ErrorCode::$variant, )* ];

            /// The wire spelling (`NOT_FOUND`, or the custom code as given).
            pub fn as_str(&self) -> &str {
                match self {
                    $( ErrorCode::$variant => stringify!($wire), )*
                    ErrorCode::Custom(code) => code,
                }
            }

            fn canonical(s: &str) -> Option<ErrorCode> {
                match s {
                    $( stringify!($wire) => Some(ErrorCode::$variant), )*
                    _ => None,
                }
            }
        }

        /// Every error code Fusion names: the canonical codes, for `error(NOT_FOUND, "..")`,
        /// then the custom codes Fusion itself sends (`RESULT_TRUNCATED`, …) and the one a
        /// client reads for an error result without an envelope (`UNKNOWN`).
        pub mod codes {
            use std::borrow::Cow;

            use super::ErrorCode;
            $(
                #[doc = concat!("`", stringify!($wire), "`")]
                pub const $wire: ErrorCode = ErrorCode::$variant;
            )*

            /// `RESULT_TRUNCATED`: the warning a cut result carries. No canonical code says
            /// "partial result" (the canonical list is about failures and `DEPRECATED`), so it
            /// is a custom one, named for what happened.
            pub const RESULT_TRUNCATED: ErrorCode =
                ErrorCode::Custom(Cow::Borrowed("RESULT_TRUNCATED"));

            /// `RESULT_TOO_LARGE`: the error that replaces a result with structured content
            /// over its bound.
            pub const RESULT_TOO_LARGE: ErrorCode =
                ErrorCode::Custom(Cow::Borrowed("RESULT_TOO_LARGE"));

            /// `ELICITATION_UNSUPPORTED`: the error of a call whose client cannot show a form
            /// (no `elicitation` capability, or a stateless 2025 HTTP request, which has no way
            /// back to the client).
            pub const ELICITATION_UNSUPPORTED: ErrorCode =
                ErrorCode::Custom(Cow::Borrowed("ELICITATION_UNSUPPORTED"));

            /// `CANCELLED`: the answer to a call its client cancelled; nobody reads it (the
            /// client stopped waiting), but it is logged.
            pub const CANCELLED: ErrorCode = ErrorCode::Custom(Cow::Borrowed("CANCELLED"));

            /// `UNKNOWN`: what a client reads as the code of an error result that carried no
            /// envelope. No server sends it.
            pub const UNKNOWN: ErrorCode = ErrorCode::Custom(Cow::Borrowed("UNKNOWN"));
        }
    };
}

canonical_codes! {
    /// A grouped tool was called without its action discriminator.
    MissingDiscriminator => MISSING_DISCRIMINATOR,
    /// No action by that name.
    UnknownAction => UNKNOWN_ACTION,
    /// The arguments did not satisfy the input contract.
    ValidationError => VALIDATION_ERROR,
    /// A required field was missing.
    MissingRequiredField => MISSING_REQUIRED_FIELD,
    /// The server failed; do not retry blindly.
    InternalError => INTERNAL_ERROR,
    /// Too many calls; carries `retry_after`.
    RateLimited => RATE_LIMITED,
    /// The caller is not authenticated.
    Unauthorized => UNAUTHORIZED,
    /// The caller may not do this.
    Forbidden => FORBIDDEN,
    /// The thing asked for does not exist.
    NotFound => NOT_FOUND,
    /// The request conflicts with the current state.
    Conflict => CONFLICT,
    /// The action took too long.
    Timeout => TIMEOUT,
    /// The concurrency guard shed this call.
    ServerBusy => SERVER_BUSY,
    /// The action or a parameter is deprecated.
    Deprecated => DEPRECATED,
    /// Authentication is needed first.
    AuthRequired => AUTH_REQUIRED,
    /// A handoff target is unavailable.
    HandoffUpstreamUnavailable => HANDOFF_UPSTREAM_UNAVAILABLE,
    /// A handoff went to the wrong namespace.
    HandoffNamespaceMismatch => HANDOFF_NAMESPACE_MISMATCH,
    /// A handoff is still connecting.
    HandoffConnecting => HANDOFF_CONNECTING,
}

impl ErrorCode {
    /// Reads a wire spelling: a canonical spelling gives its variant, anything else a custom code.
    pub fn parse(s: &str) -> ErrorCode {
        ErrorCode::canonical(s).unwrap_or_else(|| ErrorCode::Custom(Cow::Owned(s.to_owned())))
    }

    /// A custom code known at compile time. A canonical spelling still yields its variant.
    pub fn custom(code: &'static str) -> ErrorCode {
        ErrorCode::canonical(code).unwrap_or(ErrorCode::Custom(Cow::Borrowed(code)))
    }

    /// Whether this is one of the canonical codes.
    pub fn is_canonical(&self) -> bool {
        !matches!(self, ErrorCode::Custom(_))
    }
}

/// Codes compare by wire spelling, so `Custom("NOT_FOUND")` built by hand equals `NotFound`.
impl PartialEq for ErrorCode {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for ErrorCode {}

impl std::hash::Hash for ErrorCode {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ErrorCode {
    type Err = Infallible;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(ErrorCode::parse(s))
    }
}

impl From<&str> for ErrorCode {
    fn from(s: &str) -> Self {
        ErrorCode::parse(s)
    }
}

impl From<String> for ErrorCode {
    fn from(s: String) -> Self {
        ErrorCode::canonical(&s).unwrap_or(ErrorCode::Custom(Cow::Owned(s)))
    }
}

impl serde::Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for ErrorCode {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = <Cow<'de, str> as serde::Deserialize>::deserialize(deserializer)?;
        Ok(ErrorCode::from(s.into_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fusion_s_own_codes_are_custom_and_spelled_as_sent() {
        for (code, wire) in [
            (codes::RESULT_TRUNCATED, "RESULT_TRUNCATED"),
            (codes::RESULT_TOO_LARGE, "RESULT_TOO_LARGE"),
            (codes::ELICITATION_UNSUPPORTED, "ELICITATION_UNSUPPORTED"),
            (codes::CANCELLED, "CANCELLED"),
            (codes::UNKNOWN, "UNKNOWN"),
        ] {
            assert_eq!(code.as_str(), wire);
            assert!(!code.is_canonical());
            assert_eq!(ErrorCode::parse(wire), code);
        }
    }

    #[test]
    fn canonical_spellings_round_trip() {
        assert_eq!(ErrorCode::CANONICAL.len(), 17);
        for code in ErrorCode::CANONICAL {
            let parsed = ErrorCode::parse(code.as_str());
            assert_eq!(&parsed, code);
            assert!(parsed.is_canonical());
            assert_eq!(parsed.to_string(), code.as_str());
        }
    }

    #[test]
    fn custom_codes_stay_custom_and_canonical_spelling_never_is_custom() {
        assert_eq!(
            ErrorCode::parse("InvoiceNotFound"),
            ErrorCode::Custom("InvoiceNotFound".into())
        );
        assert_eq!(ErrorCode::custom("NOT_FOUND"), ErrorCode::NotFound);
        assert_eq!(
            ErrorCode::from("not_found".to_owned()).as_str(),
            "not_found"
        );
        assert!(!ErrorCode::parse("not_found").is_canonical());
    }
}
