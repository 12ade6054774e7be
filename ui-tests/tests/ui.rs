//! The macros' compile errors, checked against `.stderr` files that rustc wrote. Their wording
//! changes between compiler releases, so the test runs only on the toolchain recorded in
//! `TOOLCHAIN` (the output of `rustc --version` the files were made with) and says so,
//! visibly, when it skips.

use std::io::Write;
use std::process::Command;

/// The `rustc --version` line the `.stderr` files were made with.
const TOOLCHAIN: &str = include_str!("../TOOLCHAIN");

#[test]
fn ui() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let output = match Command::new(&rustc).arg("--version").output() {
        Ok(output) if output.status.success() => output,
        Ok(output) => panic!("`{rustc} --version` failed: {output:?}"),
        Err(e) => panic!("cannot run `{rustc} --version`: {e}"),
    };
    let running = String::from_utf8_lossy(&output.stdout);
    let (running, recorded) = (running.trim(), TOOLCHAIN.trim());
    if running != recorded {
        // Written to stderr itself, not through `eprintln!`, which the test harness captures
        // and shows only for a failing test.
        let _ = writeln!(
            std::io::stderr(),
            "ui-tests SKIPPED: the .stderr files were made with `{recorded}` (ui-tests/TOOLCHAIN), \
             this is `{running}`; compiler messages differ between releases. Run them on that \
             toolchain, or regenerate with TRYBUILD=overwrite and update TOOLCHAIN."
        );
        return;
    }
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/compile-fail/*.rs");
    // The compile-pass forms are test targets of this crate (Cargo.toml): without a `pass`
    // case trybuild only runs `cargo check`.
}
