pub mod tool_action;
