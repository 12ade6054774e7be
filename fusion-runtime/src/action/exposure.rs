//! How actions are exposed as MCP tools: flat (each action its own tool) or grouped (one tool
//! per prefix, an argument naming the action), and where that places each action. The server
//! lays its tools out by it; a typed client names its calls by the same rule.

/// How actions are exposed as MCP tools.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exposure {
    /// Each action its own tool; the dots of its name replaced by `separator`.
    Flat {
        /// Replaces `.` in action names (`_` by default).
        separator: String,
    },
    /// One tool per group (the action name's first segment); `discriminator` names the action.
    Grouped {
        /// The argument naming the action (`action` by default).
        discriminator: String,
    },
}

impl Exposure {
    /// The MCP tool an action is reached through, and its discriminator value in a grouped
    /// tool (the same rule the server lays its tools out by; a typed client uses it too).
    pub fn place(&self, action: &str) -> Placement {
        match self {
            Exposure::Flat { separator } => Placement {
                tool: action.replace('.', separator),
                discriminator: None,
            },
            Exposure::Grouped { .. } => match action.split_once('.') {
                Some((group, rest)) => Placement {
                    tool: group.to_owned(),
                    discriminator: Some(rest.to_owned()),
                },
                None => Placement {
                    tool: action.to_owned(),
                    discriminator: None,
                },
            },
        }
    }

    /// The discriminator's argument name, for grouped exposure.
    pub fn discriminator(&self) -> Option<&str> {
        match self {
            Exposure::Grouped { discriminator } => Some(discriminator),
            Exposure::Flat { .. } => None,
        }
    }
}

impl Default for Exposure {
    fn default() -> Self {
        Exposure::Flat {
            separator: "_".into(),
        }
    }
}

/// Where an action is exposed: its tool and, in a group, its discriminator value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The MCP tool name.
    pub tool: String,
    /// The discriminator value, in a grouped tool.
    pub discriminator: Option<String>,
}
