//! Prints what each check decides on the bundled example scenarios (every policy's
//! test_data/cases.yml), evaluated through the built .wasm modules by `syncguard run` (or the
//! engine named by `KWCTL`). Exits non-zero if any decision differs from the expected one.

use e2e_tests::{Engine, annotated_module, check_case, policies};
use std::process::ExitCode;
use syncguard_testkit::cases as testing;

fn main() -> ExitCode {
    let engine = Engine::from_env();
    let color = std::env::var_os("NO_COLOR").is_none() && std::io::IsTerminal::is_terminal(&std::io::stdout());
    let paint = |code: &str, text: &str| {
        if color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    };
    let (mut total, mut wrong) = (0, 0);
    println!(
        "Evaluating the example scenarios with {} ({})\n",
        engine.name,
        engine.program.display()
    );
    for policy in policies() {
        let module = annotated_module(&policy);
        println!("{}", paint("1", &format!("== {policy}")));
        for case in testing::load(&policy).cases {
            total += 1;
            let (verdict, detail) = match check_case(&engine, &policy, &module, &case) {
                Ok(_) if case.expect.settings_invalid.is_some() => (paint("33", "SETTINGS REFUSED"), String::new()),
                Ok(outcome) => {
                    let verdict = match (outcome.allowed, outcome.patch.is_some(), outcome.warnings.is_empty()) {
                        (false, _, _) => paint("31", "REJECTED"),
                        (true, true, _) => paint("36", "MUTATED"),
                        (true, false, false) => paint("33", "WARNED"),
                        (true, false, true) => paint("32", "ACCEPTED"),
                    };
                    let mut lines = Vec::new();
                    if !outcome.message.is_empty() {
                        lines.push(outcome.message.clone());
                    }
                    lines.extend(outcome.warnings.iter().map(|w| format!("warning: {w}")));
                    if let Some(patch) = &outcome.patch {
                        lines.push(format!("patch: {patch}"));
                    }
                    (verdict, lines.join("\n"))
                }
                Err(e) => {
                    wrong += 1;
                    (paint("41", "UNEXPECTED"), e)
                }
            };
            println!("  {verdict:<10} {}  ({})", case.name, case.description);
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
