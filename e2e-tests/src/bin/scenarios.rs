//! Prints what each check decides on the bundled example scenarios (every policy's
//! test_data/cases.yml), evaluated through the built .wasm modules by `syncguard run` (or the
//! engine named by `KWCTL`). Exits non-zero if any decision differs from the expected one.
//!
//! `--color auto|always|never` (default `auto`): with `auto`, anstream decides, as for
//! `syncguard scan`: colors when stdout is a terminal and `NO_COLOR` is unset or empty
//! (`CLICOLOR_FORCE` forces them, `CLICOLOR=0` or `TERM=dumb` turns them off).

use anstyle::{AnsiColor, Style};
use e2e_tests::{Engine, annotated_module, check_case, policies};
use std::process::ExitCode;
use syncguard_testkit::cases as testing;

/// The `--color` argument as anstream takes it.
fn color_choice() -> Result<anstream::ColorChoice, String> {
    let mut args = std::env::args().skip(1);
    let mut choice = anstream::ColorChoice::Auto;
    while let Some(arg) = args.next() {
        let value = match arg.strip_prefix("--color=") {
            Some(value) => value.to_string(),
            None if arg == "--color" => args.next().unwrap_or_default(),
            None => {
                return Err(format!(
                    "unknown argument `{arg}` (usage: scenarios [--color auto|always|never])"
                ));
            }
        };
        choice = match value.as_str() {
            "auto" => anstream::ColorChoice::Auto,
            "always" => anstream::ColorChoice::AlwaysAnsi,
            "never" => anstream::ColorChoice::Never,
            other => return Err(format!("--color takes auto, always or never, not `{other}`")),
        };
    }
    Ok(choice)
}

fn main() -> ExitCode {
    let choice = match color_choice() {
        Ok(choice) => choice,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let engine = Engine::from_env();
    let color = anstream::AutoStream::new(std::io::stdout(), choice).current_choice() != anstream::ColorChoice::Never;
    // Padded before it is styled, so that the columns line up with colors as without.
    let paint = |style: Style, text: &str, width: usize| {
        if color {
            format!("{style}{text:<width$}{style:#}")
        } else {
            format!("{text:<width$}")
        }
    };
    let bold = Style::new().bold();
    let red = AnsiColor::Red.on_default();
    let yellow = AnsiColor::Yellow.on_default();
    let cyan = AnsiColor::Cyan.on_default();
    let green = AnsiColor::Green.on_default();
    let on_red = Style::new().bg_color(Some(AnsiColor::Red.into()));
    let (mut total, mut wrong) = (0, 0);
    println!(
        "Evaluating the example scenarios with {} ({})\n",
        engine.name,
        engine.program.display()
    );
    for policy in policies() {
        let module = annotated_module(&policy);
        println!("{}", paint(bold, &format!("== {policy}"), 0));
        for case in testing::load(&policy).cases {
            total += 1;
            let (verdict, detail) = match check_case(&engine, &policy, &module, &case) {
                Ok(_) if case.expect.settings_invalid.is_some() => {
                    (paint(yellow, "SETTINGS REFUSED", 10), String::new())
                }
                Ok(outcome) => {
                    let verdict = match (
                        outcome.allowed,
                        outcome.patch.is_some(),
                        outcome.all_warnings().is_empty(),
                    ) {
                        (false, _, _) => paint(red, "REJECTED", 10),
                        (true, true, _) => paint(cyan, "MUTATED", 10),
                        (true, false, false) => paint(yellow, "WARNED", 10),
                        (true, false, true) => paint(green, "ACCEPTED", 10),
                    };
                    let mut lines = Vec::new();
                    if !outcome.message().is_empty() {
                        lines.push(outcome.message().to_string());
                    }
                    lines.extend(outcome.all_warnings().iter().map(|w| format!("warning: {w}")));
                    if let Some(patch) = &outcome.patch {
                        lines.push(format!("patch: {patch}"));
                    }
                    (verdict, lines.join("\n"))
                }
                Err(e) => {
                    wrong += 1;
                    (paint(on_red, "UNEXPECTED", 10), e)
                }
            };
            println!("  {verdict} {}  ({})", case.name, case.description);
            for line in detail.lines() {
                println!("      {line}");
            }
        }
        println!();
    }
    println!("{total} scenarios, {} as expected, {wrong} unexpected", total - wrong);
    if wrong == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
