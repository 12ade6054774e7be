//! Shared by the benches and the `bench_*` server binaries: the 5-field input of budget (2),
//! its action, and the same work written by hand for the bare `rmcp` server of bench (5).
#![allow(dead_code)]

use fusion_runtime::{ToolError, ToolInput, tool_action};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A plan.
#[derive(Debug, Deserialize, Serialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub enum Plan {
    Free,
    Pro,
    Team,
}

/// The input of `accounts.register`: an `id` with a pattern, an `email`, an integer 1..=100,
/// a string enum and an optional array of strings.
#[derive(Debug, Deserialize, ToolInput)]
pub struct Signup {
    /// The account ID.
    #[fusion(pattern = "^acc_[a-z0-9]{6,12}$")]
    pub id: String,
    /// Where to send the invoices.
    #[fusion(email)]
    pub email: String,
    /// How many seats.
    #[fusion(range(min = 1, max = 100))]
    pub seats: i64,
    /// The plan.
    pub plan: Plan,
    /// Free-form tags.
    pub tags: Option<Vec<String>>,
}

/// What `accounts.register` answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Registered {
    pub id: String,
    pub seats: i64,
    pub plan: Plan,
    pub tags: usize,
}

/// The handler's work, shared by both servers.
pub fn registered(input: Signup) -> Registered {
    Registered {
        id: input.id,
        seats: input.seats,
        plan: input.plan,
        tags: input.tags.map_or(0, |t| t.len()),
    }
}

/// Register an account.
#[tool_action(name = "accounts.register")]
pub async fn register(input: Signup) -> Result<Registered, ToolError> {
    Ok(registered(input))
}

/// The Fusion server of the benches.
pub fn fusion_server() -> fusion_runtime::Server {
    match fusion_runtime::Server::builder()
        .name("bench")
        .version("0.1.0")
        .action::<RegisterAction>()
        .build()
    {
        Ok(s) => s,
        Err(e) => panic!("the bench server builds: {e}"),
    }
}

/// The tool name the Fusion server exposes.
pub const TOOL: &str = "accounts_register";

/// A valid call.
pub fn valid_args() -> Value {
    json!({
        "id": "acc_7f3k9q2m",
        "email": "ada.lovelace@example.com",
        "seats": 12,
        "plan": "pro",
        "tags": ["beta", "eu-west"]
    })
}

/// A call with three problems: the ID's pattern, the email, the seat count.
pub fn invalid_args() -> Value {
    json!({
        "id": "ACC-7",
        "email": "ada.lovelace",
        "seats": 0,
        "plan": "pro"
    })
}

/// The same rules checked by hand, as a bare `rmcp` server would: `Err` names the first
/// problem.
pub fn check_by_hand(input: &Signup) -> Result<(), String> {
    let id_ok = input.id.strip_prefix("acc_").is_some_and(|rest| {
        (6..=12).contains(&rest.len())
            && rest
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    });
    if !id_ok {
        return Err("id: does not match ^acc_[a-z0-9]{6,12}$".into());
    }
    let email_ok = input
        .email
        .split_once('@')
        .is_some_and(|(l, d)| !l.is_empty() && d.contains('.') && !d.starts_with('.'));
    if !email_ok {
        return Err("email: not an email address".into());
    }
    if !(1..=100).contains(&input.seats) {
        return Err("seats: must be 1..=100".into());
    }
    Ok(())
}

/// Times `a` and `b` in alternating rounds of `iters` calls, so both see the same load, and
/// returns the median time per call of each, in nanoseconds.
pub fn interleaved(
    mut a: impl FnMut(),
    mut b: impl FnMut(),
    iters: u32,
    rounds: u32,
) -> (f64, f64) {
    let round = |f: &mut dyn FnMut()| {
        let start = std::time::Instant::now();
        for _ in 0..iters {
            f();
        }
        start.elapsed().as_nanos() as f64 / f64::from(iters)
    };
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        ta.push(round(&mut a));
        tb.push(round(&mut b));
    }
    (median(&mut ta), median(&mut tb))
}

/// The median of `v` (sorted in place).
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Prints one figure and its ratio to a baseline measured in the same run.
pub fn report(what: &str, ns: f64, baseline: &str, base_ns: f64, budget: &str) {
    println!(
        "FIGURE {what}: {ns:.1} ns | baseline {baseline}: {base_ns:.1} ns | ratio {:.2}x | budget {budget}",
        ns / base_ns
    );
}

/// Prints one figure with no baseline.
pub fn report_alone(what: &str, ns: f64, budget: &str) {
    println!("FIGURE {what}: {ns:.1} ns | budget {budget}");
}

/// [`interleaved`] for functions that take an owned input: the inputs are made before each
/// round and whatever a function hands back is dropped after it, both untimed.
pub fn interleaved_owned<I, O>(
    make: impl Fn() -> I,
    mut a: impl FnMut(I) -> O,
    mut b: impl FnMut(I) -> O,
    iters: usize,
    rounds: u32,
) -> (f64, f64) {
    let round = |f: &mut dyn FnMut(I) -> O| {
        let inputs: Vec<I> = (0..iters).map(|_| make()).collect();
        let mut outputs = Vec::with_capacity(iters);
        let start = std::time::Instant::now();
        for i in inputs {
            outputs.push(f(i));
        }
        let ns = start.elapsed().as_nanos() as f64 / iters as f64;
        drop(outputs);
        ns
    };
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        ta.push(round(&mut a));
        tb.push(round(&mut b));
    }
    (median(&mut ta), median(&mut tb))
}
