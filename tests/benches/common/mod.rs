//! Shared by the benches and the `bench_*` server binaries: the 5-field input of budget (2),
//! its action, and the same work written by hand for the bare `rmcp` server of bench (5); and
//! the nested `orders.place` both servers also list, for the healing benchmark.
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

/// Where an order goes.
#[derive(Debug, Deserialize, ToolInput)]
pub struct Address {
    /// The street and number.
    #[fusion(length(min = 1, max = 100))]
    pub street: String,
    /// The postcode, five digits.
    #[fusion(pattern = "^[0-9]{5}$")]
    pub postcode: String,
}

/// Who orders.
#[derive(Debug, Deserialize, ToolInput)]
pub struct Customer {
    /// The customer's ID, e.g. `cus_0001`.
    #[fusion(pattern = "^cus_[0-9]{4}$")]
    pub id: String,
    /// Where the receipt goes.
    #[fusion(email)]
    pub email: String,
    /// Where the order goes.
    pub address: Address,
}

/// One line of an order.
#[derive(Debug, Deserialize, ToolInput)]
pub struct LineItem {
    /// The product, e.g. `ABC-0001`.
    #[fusion(pattern = "^[A-Z]{3}-[0-9]{4}$")]
    pub sku: String,
    /// How many, 1 to 99.
    #[fusion(range(min = 1, max = 99))]
    pub quantity: u32,
    /// The price of one, in cents.
    #[fusion(range(min = 1))]
    pub unit_price_cents: u32,
}

/// A gift note.
#[derive(Debug, Deserialize, ToolInput)]
pub struct Gift {
    /// The message on the card.
    #[fusion(length(min = 1, max = 200))]
    pub message: String,
    /// Whether to wrap it.
    pub wrap: Option<bool>,
}

/// The input of `orders.place` (issue 59's nested tool): an object holding an object, an
/// array of objects with patterned and bounded fields, a date, a `multipleOf`, an optional
/// nested object, and no unknown key anywhere.
#[derive(Debug, Deserialize, ToolInput)]
pub struct PlaceOrder {
    /// Who orders.
    pub customer: Customer,
    /// What, 1 to 20 lines.
    #[fusion(items(min = 1, max = 20))]
    pub items: Vec<LineItem>,
    /// The delivery day.
    #[fusion(date)]
    pub delivery_date: String,
    /// A tip for the courier, in cents, a multiple of 5.
    #[fusion(multiple_of = 5)]
    pub tip_cents: u32,
    /// A gift note, if it is a gift.
    pub gift: Option<Gift>,
}

/// What `orders.place` answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Placed {
    pub customer: String,
    pub lines: usize,
    pub total_cents: u64,
}

/// The handler's work, shared by both servers.
pub fn placed(input: PlaceOrder) -> Placed {
    let items: u64 = input
        .items
        .iter()
        .map(|i| u64::from(i.quantity) * u64::from(i.unit_price_cents))
        .sum();
    Placed {
        customer: input.customer.id,
        lines: input.items.len(),
        total_cents: items + u64::from(input.tip_cents),
    }
}

/// Place an order.
#[tool_action(name = "orders.place")]
pub async fn place(input: PlaceOrder) -> Result<Placed, ToolError> {
    Ok(placed(input))
}

/// The nested tool's name as the servers expose it.
pub const ORDERS_TOOL: &str = "orders_place";

/// `orders.place`'s rules checked by hand, as a bare `rmcp` server would: `Err` names the
/// first problem, by its dotted path.
pub fn check_order_by_hand(input: &PlaceOrder) -> Result<(), String> {
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    let c = &input.customer;
    if !c.id.strip_prefix("cus_").is_some_and(|d| digits(d, 4)) {
        return Err("customer.id: does not match ^cus_[0-9]{4}$".into());
    }
    let email_ok = c
        .email
        .split_once('@')
        .is_some_and(|(l, d)| !l.is_empty() && d.contains('.') && !d.starts_with('.'));
    if !email_ok {
        return Err("customer.email: not an email address".into());
    }
    if !(1..=100).contains(&c.address.street.chars().count()) {
        return Err("customer.address.street: must be 1 to 100 characters".into());
    }
    if !digits(&c.address.postcode, 5) {
        return Err("customer.address.postcode: does not match ^[0-9]{5}$".into());
    }
    if !(1..=20).contains(&input.items.len()) {
        return Err("items: must have 1 to 20 lines".into());
    }
    for (n, item) in input.items.iter().enumerate() {
        let sku_ok = item.sku.len() == 8
            && item.sku.as_bytes()[..3].iter().all(u8::is_ascii_uppercase)
            && item.sku.as_bytes()[3] == b'-'
            && digits(&item.sku[4..], 4);
        if !sku_ok {
            return Err(format!(
                "items[{n}].sku: does not match ^[A-Z]{{3}}-[0-9]{{4}}$"
            ));
        }
        if !(1..=99).contains(&item.quantity) {
            return Err(format!("items[{n}].quantity: must be 1..=99"));
        }
        if item.unit_price_cents < 1 {
            return Err(format!("items[{n}].unit_price_cents: must be at least 1"));
        }
    }
    let d = input.delivery_date.as_bytes();
    let date_ok = d.len() == 10
        && d[4] == b'-'
        && d[7] == b'-'
        && [&d[..4], &d[5..7], &d[8..]]
            .iter()
            .all(|p| p.iter().all(u8::is_ascii_digit));
    if !date_ok {
        return Err("delivery_date: not a YYYY-MM-DD date".into());
    }
    if !input.tip_cents.is_multiple_of(5) {
        return Err("tip_cents: must be a multiple of 5".into());
    }
    if let Some(g) = &input.gift
        && !(1..=200).contains(&g.message.chars().count())
    {
        return Err("gift.message: must be 1 to 200 characters".into());
    }
    Ok(())
}

/// The Fusion server of the benches: `accounts.register`, and `orders.place` for the healing
/// benchmark's nested cases.
pub fn fusion_server() -> fusion_runtime::Server {
    match fusion_runtime::Server::builder()
        .name("bench")
        .version("0.1.0")
        .action::<RegisterAction>()
        .action::<PlaceAction>()
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
