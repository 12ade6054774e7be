//! Prompts: what `#[prompt]` registers — a name, a description, typed arguments and a handler
//! that returns messages.
//!
//! ```
//! use fusion_runtime::prompt::PromptReply;
//! use fusion_runtime::{Content, PromptArguments, ToolError, ToolInput, prompt};
//! use serde::Deserialize;
//!
//! /// What the reminder is about.
//! #[derive(Deserialize, ToolInput, PromptArguments)]
//! struct ReminderArgs {
//!     /// The invoice, e.g. `inv_2026_0001`.
//!     invoice_id: String,
//! }
//!
//! /// Draft a payment reminder e-mail for one invoice.
//! #[prompt(name = "billing.payment_reminder")]
//! async fn payment_reminder(args: ReminderArgs) -> Result<PromptReply, ToolError> {
//!     Ok(PromptReply::new().user(format!("Draft a reminder for {}", args.invoice_id)))
//! }
//!
//! let server = fusion_runtime::Server::builder()
//!     .prompt::<PaymentReminderPrompt>()
//!     .build()
//!     .unwrap();
//! assert_eq!(server.catalog().prompts()[0].name, "billing_payment_reminder");
//! ```
//!
//! MCP carries prompt arguments as strings: every field of the arguments struct is a
//! `String`, an `Option<String>` or a string enum — `#[derive(PromptArguments)]` refuses
//! anything else at compile time, and [`ServerBuilder::build`](crate::ServerBuilder::build)
//! checks the schema again. Bad or missing arguments are answered with JSON-RPC `-32602`
//! whose message is the same `<validation_error>` a tool call gets.

use std::borrow::Cow;
use std::marker::PhantomData;
use std::sync::Arc;

use futures::future::BoxFuture;

use crate::action::HandlerFailure;
use crate::completion::Completer;
use crate::context::{CallContext, StateRequirement};
use crate::envelope::Content;
use crate::input::{JsonObject, ToolInput};

/// Arguments of a prompt: a [`ToolInput`] whose every field MCP can carry as a prompt
/// argument (a string, an optional string, a string enum).
///
/// Implemented by `#[derive(PromptArguments)]`, which checks each field's type at compile time.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the arguments of a prompt",
    label = "this type has no `#[derive(PromptArguments)]`",
    note = "derive it next to `ToolInput`: `#[derive(serde::Deserialize, fusion_runtime::ToolInput, fusion_runtime::PromptArguments)]`"
)]
pub trait PromptArguments: ToolInput {}

/// Who says a prompt message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The user.
    User,
    /// The assistant.
    Assistant,
}

/// What a prompt handler returns: the messages, in order, and an optional description.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PromptReply {
    description: Option<String>,
    messages: Vec<(Role, Content)>,
}

impl PromptReply {
    /// No message yet.
    pub fn new() -> Self {
        PromptReply::default()
    }

    /// Sets the description sent with the messages.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Appends a user message: text (`&str`, `String`) or any [`Content`] (image, audio,
    /// embedded resource).
    pub fn user(self, content: impl Into<PromptContent>) -> Self {
        self.message(Role::User, content)
    }

    /// Appends an assistant message.
    pub fn assistant(self, content: impl Into<PromptContent>) -> Self {
        self.message(Role::Assistant, content)
    }

    /// Appends a message.
    pub fn message(mut self, role: Role, content: impl Into<PromptContent>) -> Self {
        self.messages.push((role, content.into().0));
        self
    }

    /// The description, if set.
    pub fn description_text(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The messages, in order.
    pub fn messages(&self) -> &[(Role, Content)] {
        &self.messages
    }

    /// The description and the messages.
    pub fn into_parts(self) -> (Option<String>, Vec<(Role, Content)>) {
        (self.description, self.messages)
    }
}

/// One message's content: text or any [`Content`].
#[derive(Clone, Debug, PartialEq)]
pub struct PromptContent(Content);

impl From<Content> for PromptContent {
    fn from(c: Content) -> Self {
        PromptContent(c)
    }
}

impl From<String> for PromptContent {
    fn from(s: String) -> Self {
        PromptContent(Content::Text(s))
    }
}

impl From<&str> for PromptContent {
    fn from(s: &str) -> Self {
        PromptContent(Content::Text(s.to_owned()))
    }
}

/// Everything known about a prompt before it is called.
#[derive(Clone, Debug)]
pub struct PromptInfo {
    /// The prompt's name, dotted like an action's (`billing.payment_reminder`); clients see it
    /// with the server's separator (`billing_payment_reminder`).
    pub name: &'static str,
    /// A human-readable title, if given.
    pub title: Option<Cow<'static, str>>,
    /// What the prompt is for (from the doc comment unless given).
    pub description: Cow<'static, str>,
    /// The arguments' JSON Schema: each property is one prompt argument.
    pub arguments_schema: Arc<JsonObject>,
    /// The shared state the handler needs, checked when the server is built.
    pub state: Option<StateRequirement>,
    /// The icons its attribute declares (`icon = ".."`), listed unless
    /// [`ServerBuilder::icons`](crate::ServerBuilder::icons) sets others.
    pub icons: &'static [crate::action::StaticIcon],
}

/// A prompt `#[prompt]` generated: its name, arguments and handler.
///
/// Implemented by the companion struct of each `#[prompt]` function (`PaymentReminderPrompt`
/// for `fn payment_reminder`); register it with
/// [`ServerBuilder::prompt`](crate::ServerBuilder::prompt).
pub trait PromptAction: Send + Sync + 'static {
    /// The prompt's name, dotted.
    const NAME: &'static str;
    /// The arguments: validated and deserialized from what the client sent.
    type Args: PromptArguments;

    /// The prompt's metadata.
    fn info() -> PromptInfo;

    /// Runs the handler on validated arguments. A panic inside is caught.
    fn get(args: Self::Args, cx: &CallContext) -> BoxFuture<'static, PromptOutcome>;

    /// The completer of an argument, when the prompt names one
    /// (`#[prompt(complete(argument = path::to_fn))]`). Enum arguments complete without one.
    fn completer(argument: &str) -> Option<Completer> {
        let _ = argument;
        None
    }

    /// The arguments that have a completer.
    fn completed_arguments() -> &'static [&'static str] {
        &[]
    }
}

/// What a prompt handler produced: its reply, or why it failed.
pub type PromptOutcome = Result<PromptReply, HandlerFailure>;

/// The arguments of a prompt that takes none (a `#[prompt]` function without parameters).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoArguments;

// Not listed among the types that implement `ToolInput` when a user's type does not.
#[diagnostic::do_not_recommend]
impl ToolInput for NoArguments {
    fn input_schema() -> Arc<JsonObject> {
        crate::resource::NoParams::input_schema()
    }

    fn from_arguments(_: &serde_json::Value) -> Result<Self, crate::ValidationReport> {
        Ok(NoArguments)
    }
}

#[diagnostic::do_not_recommend]
impl PromptArguments for NoArguments {}

/// What `#[prompt]` and `#[derive(PromptArguments)]` expand to call. Not a stable API.
#[doc(hidden)]
pub mod __private {
    use super::*;

    pub use crate::action::HandlerReturn;

    /// Builds a prompt's metadata (`#[prompt]`'s `info()`).
    pub fn prompt_info(
        name: &'static str,
        title: Option<&'static str>,
        description: &'static str,
        arguments_schema: Arc<JsonObject>,
        state: Option<StateRequirement>,
    ) -> PromptInfo {
        PromptInfo {
            name,
            title: title.map(Cow::Borrowed),
            description: crate::action::expand::description_text(description),
            arguments_schema,
            state,
            icons: &[],
        }
    }

    /// Sets the icons a prompt declares (`icon = ".."`, `icon(..)`).
    pub fn prompt_with_icons(
        mut info: PromptInfo,
        icons: &'static [crate::action::StaticIcon],
    ) -> PromptInfo {
        info.icons = icons;
        info
    }

    /// A handler's return value as its outcome: the reply, a branded `ToolError` found, or any
    /// other error's `Display` message.
    pub fn prompt_outcome<R>(ret: R) -> PromptOutcome
    where
        R: HandlerReturn<Ok = PromptReply>,
        R::Err: Into<Box<dyn std::error::Error + Send + Sync>> + 'static,
    {
        ret.into_result().map_err(crate::action::failure_from)
    }

    /// A handler that fails before it starts (its context could not be built).
    pub fn prompt_fails_now(e: crate::ToolError) -> BoxFuture<'static, PromptOutcome> {
        Box::pin(std::future::ready(Err(HandlerFailure::Tool(e))))
    }

    /// Checks one field of a prompt's arguments struct by its type (autoref specialization: the
    /// expansion writes `let _: PromptFieldOk = (&&&FieldProbe::<T>::new()).prompt_shape();`
    /// with the three traits in scope). A field MCP cannot carry makes that line a type error
    /// naming the reason.
    pub struct FieldProbe<T: ?Sized>(PhantomData<T>);

    impl<T: ?Sized> FieldProbe<T> {
        /// A probe.
        pub fn new() -> Self {
            FieldProbe(PhantomData)
        }
    }

    impl<T: ?Sized> Default for FieldProbe<T> {
        fn default() -> Self {
            FieldProbe::new()
        }
    }

    /// The field can be a prompt argument.
    pub struct PromptFieldOk;
    /// The field is a number, a boolean, an array or a map: prompt arguments are strings.
    pub struct PromptArgumentsAreStrings;
    /// The field is a nested object: prompt arguments are flat strings.
    pub struct NestedObjectsAreNotPromptArguments;

    /// Chosen for a nested `ToolInput` (or an `Option` of one).
    pub trait ProbeNested {
        /// The verdict.
        fn prompt_shape(&self) -> NestedObjectsAreNotPromptArguments;
    }
    impl<T: ToolInput> ProbeNested for &&FieldProbe<T> {
        fn prompt_shape(&self) -> NestedObjectsAreNotPromptArguments {
            NestedObjectsAreNotPromptArguments
        }
    }
    impl<T: ToolInput> ProbeNested for &&FieldProbe<Option<T>> {
        fn prompt_shape(&self) -> NestedObjectsAreNotPromptArguments {
            NestedObjectsAreNotPromptArguments
        }
    }

    /// Chosen for a type that is not a string on the wire.
    pub trait ProbeNotString {
        /// The verdict.
        fn prompt_shape(&self) -> PromptArgumentsAreStrings;
    }
    impl<T: NotAString + ?Sized> ProbeNotString for &FieldProbe<T> {
        fn prompt_shape(&self) -> PromptArgumentsAreStrings {
            PromptArgumentsAreStrings
        }
    }

    /// Chosen otherwise: strings, optional strings, string enums.
    pub trait ProbeOk {
        /// The verdict.
        fn prompt_shape(&self) -> PromptFieldOk;
    }
    impl<T: ?Sized> ProbeOk for FieldProbe<T> {
        fn prompt_shape(&self) -> PromptFieldOk {
            PromptFieldOk
        }
    }

    /// Types that are not strings in JSON.
    pub trait NotAString {}
    macro_rules! not_a_string {
        ($($t:ty),*) => { $(impl NotAString for $t {})* };
    }
    not_a_string!(
        bool, i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64,
        serde_json::Value, serde_json::Map<String, serde_json::Value>
    );
    impl<T> NotAString for Vec<T> {}
    impl<T> NotAString for [T] {}
    impl<T, const N: usize> NotAString for [T; N] {}
    impl<T, S> NotAString for std::collections::HashSet<T, S> {}
    impl<T> NotAString for std::collections::BTreeSet<T> {}
    impl<K, V, S> NotAString for std::collections::HashMap<K, V, S> {}
    impl<K, V> NotAString for std::collections::BTreeMap<K, V> {}
    impl<T: NotAString> NotAString for Option<T> {}
    impl<T: NotAString + ?Sized> NotAString for Box<T> {}
}
