//! Writes the seed corpus of every fuzz target (`syncguard_testkit::fuzz::seeds`, drawn from the
//! policies' fixtures) under the directory given as the first argument, one directory per
//! target: `fuzz-seeds <dir> [max-len]`. Used by `make fuzz`.

use std::path::PathBuf;
use std::process::ExitCode;
use syncguard_testkit::fuzz;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next().map(PathBuf::from) else {
        eprintln!("usage: fuzz-seeds <dir> [max-len]");
        return ExitCode::from(2);
    };
    let max_len = match args.next().map(|n| n.parse::<usize>()) {
        None => usize::MAX,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("fuzz-seeds: max-len: {e}");
            return ExitCode::from(2);
        }
    };
    for target in &fuzz::targets() {
        let target_dir = dir.join(target.name);
        if let Err(e) = std::fs::create_dir_all(&target_dir) {
            eprintln!("fuzz-seeds: {}: {e}", target_dir.display());
            return ExitCode::FAILURE;
        }
        let seeds = fuzz::seeds(target, max_len);
        for (i, seed) in seeds.iter().enumerate() {
            let path = target_dir.join(format!("seed-{i:03}"));
            if let Err(e) = std::fs::write(&path, seed) {
                eprintln!("fuzz-seeds: {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        }
        println!("{}: {} seeds in {}", target.name, seeds.len(), target_dir.display());
    }
    ExitCode::SUCCESS
}
