pub mod fallback;
pub mod tool_input;
