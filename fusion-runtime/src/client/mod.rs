//! The client side: reading envelopes back.

mod parse;

pub use parse::{
    Envelope, EnvelopeParseError, FieldLine, RawSection, ValidationEnvelope, looks_like_envelope,
    parse_envelope, parse_tool_error, parse_validation_error,
};
