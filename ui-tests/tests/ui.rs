//! The macros' compile errors, checked against `.stderr` files that rustc wrote. Their wording
//! changes between compiler releases, so the `.stderr` files hold for the toolchain recorded in
//! `TOOLCHAIN` (the output of `rustc --version` they were made with). On another toolchain the
//! test fails with `CI` set, saying how to re-bless the files; locally it says, in a banner on
//! stderr, that the compile-fail cases did not run and how to run them.

use std::io::Write;
use std::process::Command;

/// The `rustc --version` line the `.stderr` files were made with.
const TOOLCHAIN: &str = include_str!("../TOOLCHAIN");

/// How to make the `.stderr` files and `TOOLCHAIN` match the compiler in use.
fn rebless(running: &str) -> String {
    format!(
        "To re-bless them for `{running}`:\n\
         \x20 1. TRYBUILD=overwrite cargo test -p ui-tests\n\
         \x20 2. review the diff of ui-tests/tests/compile-fail/*.stderr (git diff): only the \
         compiler's wording may change, never which case fails or where\n\
         \x20 3. rustc --version > ui-tests/TOOLCHAIN\n\
         and commit the three together."
    )
}

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
    let overwrite = std::env::var_os("TRYBUILD").is_some_and(|v| v == "overwrite");
    // Overwriting writes whatever the macros print as the expected errors and passes: a way to
    // re-bless by hand, never a check.
    assert!(
        !(overwrite && std::env::var_os("CI").is_some()),
        "ui-tests: TRYBUILD=overwrite with CI set would pass whatever the macros print; unset it"
    );
    if running != recorded && !overwrite {
        let why = format!(
            "the compile-fail .stderr files were made with `{recorded}` (ui-tests/TOOLCHAIN); \
             this is `{running}`, and compiler messages differ between releases."
        );
        // In CI a mismatch is a failure: the 50-odd compile-fail cases would otherwise stop
        // checking the macros' errors without anyone noticing.
        if std::env::var_os("CI").is_some() {
            panic!(
                "ui-tests: toolchain mismatch with CI set: {why}\n{}",
                rebless(running)
            );
        }
        // Written to stderr itself, not through `eprintln!`, which the test harness captures
        // and shows only for a failing test.
        let rule = "=".repeat(78);
        let _ = writeln!(
            std::io::stderr(),
            "\n{rule}\nui-tests: THE COMPILE-FAIL CASES DID NOT RUN\n{why}\n\
             To run them, use `{recorded}` (e.g. `cargo +<that toolchain> test -p ui-tests`).\n\
             {}\nWith CI set this is a failure, not this notice.\n{rule}\n",
            rebless(running)
        );
        return;
    }
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/compile-fail/*.rs");
    // The compile-pass forms are test targets of this crate (Cargo.toml): without a `pass`
    // case trybuild only runs `cargo check`.
}
