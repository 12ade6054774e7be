//! Procedural macros for Fusion. Use them through `fusion_runtime`, which re-exports them.
