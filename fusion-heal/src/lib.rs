//! `fusion-heal`: the healing check for any MCP server, in any language.
//!
//! Can a model repair a broken tool call from your server's answer alone? `fusion-heal`
//! connects to the server — a streamable HTTP URL, or a command it spawns and talks to over
//! stdio — reads its `tools/list`, and from each tool's `inputSchema` builds a valid call, then
//! broken calls of every issue kind the schema allows: a wrong type, a missing or misspelt key,
//! an enum value or tool name one edit away, a number out of range, a string off its pattern or
//! format, an object sent as another type, too few items of objects, several problems at once.
//! Each broken call is sent; the answer's text goes to a reader that knows nothing else — not
//! the schema, not the tool list — and writes the call it would send next, which is sent too.
//! The table says, per issue kind and per tool, how many broken calls healed in one round.
//!
//! ```text
//! cargo install fusion-heal
//! fusion-heal http://127.0.0.1:8080/mcp               # a server already listening
//! fusion-heal -- python my_server.py                   # a server to spawn over stdio
//! fusion-heal --min-healed 90 -- node build/index.js   # CI: exit 1 under 90 %
//! ```
//!
//! Exit status: 0 when at least `--min-healed` percent of the broken calls healed in one round
//! (100 by default), 1 when fewer did, 2 when the check could not run (no connection, no tool,
//! bad arguments).
//!
//! The generator and the reader are `fusion_runtime::healing`'s, the ones a Fusion server's own
//! `heal` command runs in process. Every call goes to the server you name: point it at a test
//! instance, since a valid call really runs.

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use fusion_runtime::client::FusionClient;
use fusion_runtime::healing::remote::{RemoteOptions, listed_tools, run_remote};
use fusion_runtime::healing::{Report, first_line};

/// What the command was asked.
#[derive(Debug, Parser)]
#[command(
    name = "fusion-heal",
    version,
    about = "The healing check for any MCP server: can a model repair a broken tool call from the answer alone?",
    after_help = "Examples:\n  fusion-heal http://127.0.0.1:8080/mcp\n  fusion-heal -- python my_server.py\n  fusion-heal --min-healed 90 --tool search -- node build/index.js\n\nExit status: 0 when the threshold is met, 1 when it is not, 2 when the check could not run."
)]
pub struct Args {
    /// The server: a streamable HTTP URL (`http://127.0.0.1:8080/mcp`), or a command and its
    /// arguments to spawn and talk to over stdio (after `--`).
    #[arg(required = true, num_args = 1.., value_name = "URL | COMMAND")]
    pub server: Vec<String>,
    /// The least share of broken calls, in percent, that must heal in one round.
    #[arg(long, default_value_t = 100.0, value_name = "PERCENT", value_parser = fusion_runtime::healing::parse_percent)]
    pub min_healed: f64,
    /// Only this tool (repeat for several); every listed tool by default.
    #[arg(long = "tool", value_name = "NAME")]
    pub tools: Vec<String>,
    /// A bearer token sent with every HTTP request.
    #[arg(
        long,
        env = "FUSION_HEAL_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
    /// The longest wait for one answer, in seconds.
    #[arg(long, default_value_t = 30, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub timeout: u64,
    /// Calls sent at once, at most.
    #[arg(long, default_value_t = 8, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=256))]
    pub in_flight: u64,
    /// Also list every case: the call sent, the answer's line, the repair.
    #[arg(long)]
    pub all_cases: bool,
    /// Let a spawned server's stderr through (silenced by default).
    #[arg(long)]
    pub server_stderr: bool,
}

/// What a run printed, and its exit status.
#[derive(Debug)]
pub struct Outcome {
    /// The report (stdout).
    pub output: String,
    /// The status: 0 met, 1 not met, 2 could not run.
    pub code: u8,
    /// The report, when the check ran.
    pub report: Option<Report>,
}

impl Outcome {
    fn failed(why: String) -> Outcome {
        Outcome {
            output: format!("fusion-heal: {why}\n"),
            code: 2,
            report: None,
        }
    }

    /// The exit status.
    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(self.code)
    }
}

/// Whether `server` names a URL rather than a command.
fn is_url(server: &[String]) -> bool {
    matches!(server, [one] if one.starts_with("http://") || one.starts_with("https://"))
}

async fn connect(args: &Args) -> Result<FusionClient, String> {
    let connected = if is_url(&args.server) {
        let url = &args.server[0];
        match &args.token {
            Some(token) => FusionClient::connect_http_with_token(url, token).await,
            None => FusionClient::connect_http(url).await,
        }
    } else {
        let Some((program, rest)) = args.server.split_first() else {
            return Err("no server given".into());
        };
        let mut command = tokio::process::Command::new(program);
        command.args(rest).kill_on_drop(true);
        let stderr = if args.server_stderr {
            std::process::Stdio::inherit()
        } else {
            std::process::Stdio::null()
        };
        FusionClient::spawn_with_stderr(command, stderr).await
    };
    connected.map_err(|e| {
        let hint = if is_url(&args.server) || args.server_stderr {
            ""
        } else {
            " (--server-stderr shows what the server said)"
        };
        format!("{}: {e}{hint}", args.server.join(" "))
    })
}

/// Runs the check `args` describe: connects, lists the tools, sends every case, and says
/// whether the threshold was met.
pub async fn run(args: &Args) -> Outcome {
    let client = match tokio::time::timeout(Duration::from_secs(args.timeout), connect(args)).await
    {
        Ok(Ok(client)) => client,
        Ok(Err(why)) => return Outcome::failed(why),
        Err(_) => {
            return Outcome::failed(format!(
                "{}: no connection within {} s",
                args.server.join(" "),
                args.timeout
            ));
        }
    };
    let listed = match tokio::time::timeout(
        Duration::from_secs(args.timeout),
        listed_tools(&client),
    )
    .await
    {
        Ok(Ok(tools)) => tools,
        Ok(Err(e)) => return Outcome::failed(format!("tools/list: {e}")),
        Err(_) => {
            return Outcome::failed(format!("tools/list: no answer within {} s", args.timeout));
        }
    };
    let unknown: Vec<&String> = args
        .tools
        .iter()
        .filter(|t| !listed.iter().any(|l| l.name == **t))
        .collect();
    if !unknown.is_empty() {
        return Outcome::failed(format!(
            "tools/list shows no {}",
            unknown
                .iter()
                .map(|t| format!("'{t}'"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let options = RemoteOptions {
        call_timeout: Duration::from_secs(args.timeout),
        in_flight: usize::try_from(args.in_flight).unwrap_or(1),
        only: args.tools.clone(),
        ..RemoteOptions::default()
    };
    let report = run_remote(&client, &listed, &options).await;
    // Closing asks a spawned server to exit; a server that does not is killed on drop.
    let _ = client.close().await;
    if report.outcomes.is_empty() {
        let mut out = String::from("fusion-heal: no broken call could be built\n");
        for none in &report.no_baseline {
            let _ = writeln!(out, "left out: {}: {}", none.tool, none.why);
        }
        return Outcome {
            output: out,
            code: 2,
            report: Some(report),
        };
    }
    let mut output = report.table();
    if args.all_cases {
        output.push_str("\nevery case:\n");
        for o in &report.outcomes {
            let _ = writeln!(
                output,
                "- [{}] {} {}: healed in {}\n    sent {}\n    answer {}\n    repaired {}",
                o.case.kind.name(),
                o.case.call.tool,
                o.case.what,
                o.healed_in
                    .map_or("no round".to_owned(), |r| format!("round {r}")),
                o.case.call.args,
                first_line(&o.first.text),
                o.repairs
                    .iter()
                    .map(|c| format!("{} {}", c.tool, c.args))
                    .collect::<Vec<_>>()
                    .join(" | "),
            );
        }
    }
    // `outcomes` is not empty here (an empty run is code 2 above).
    let met = report.meets(args.min_healed);
    let _ = writeln!(output, "\n{}", report.verdict(args.min_healed));
    Outcome {
        output,
        code: u8::from(!met),
        report: Some(report),
    }
}
