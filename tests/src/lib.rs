//! Integration tests for Fusion (see tests/).
