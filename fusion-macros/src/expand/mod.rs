pub mod elicit;
pub mod fallback;
pub mod prompt;
pub mod resource;
pub mod tool_action;
pub mod tool_input;
