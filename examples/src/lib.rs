//! Example servers; see the `billing` example.
