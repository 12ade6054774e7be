//! trybuild tests live in tests/ui.rs.
