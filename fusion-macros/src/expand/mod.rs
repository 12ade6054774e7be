pub mod fallback;
pub mod tool_action;
pub mod tool_input;
pub mod prompt;
pub mod resource;
