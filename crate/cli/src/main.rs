//! `rocketjudge`: the command-line face of the judge. Glue only: argument parsing, files, progress and
//! exit codes live here; everything that decides a number lives in `rocketjudge-core` (and the engine).
//!
//! Exit codes: 0 success, 1 failure, 2 usage error, 3 malformed or inconsistent input, 4 I/O error.

mod app;
mod commands;
mod inputs;
mod judges;
mod knobs;
mod live;
mod models;
mod net;
mod output;
mod shard;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "rocketjudge", version, about = "A private LLM judge: grade responses against instance-specific checklists with a small local model, then score, rank and meta-evaluate.", long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Grade(commands::grade::Args),
    Merge(commands::merge::Args),
    Bench(commands::bench::Args),
    Direct(commands::direct::Args),
    Reason(commands::reason::Args),
    Generate(commands::generate::Args),
    Serve(commands::serve::Args),
    Site(commands::site::Args),
    Rank(commands::rank::Args),
    Replay(commands::replay::Args),
    Score(commands::score::Args),
    Calibrate(commands::calibrate::Args),
    Meta(commands::meta::Args),
    /// Export judgments in other tools' formats (Chatbot Arena's battles).
    #[command(subcommand)]
    Export(commands::export::Export),
    /// Checklists: create them with a strong model, or print the creation prompt.
    #[command(subcommand)]
    Checklist(commands::checklist::ChecklistCmd),
    /// Judge models: list, fetch, verify.
    #[command(subcommand)]
    Models(commands::models::Models),
}

/// The exit code an error maps to: 3 for bad input data (malformed, or well-formed but unusable
/// together, such as rankings with too few models in common; and shards that cannot be merged), 4 for
/// I/O, 1 otherwise.
fn exit_code(error: &anyhow::Error) -> u8 {
    use rocketjudge_core::Error as Core;
    if error.downcast_ref::<rocketjudge_core::FormatError>().is_some()
        || error.downcast_ref::<inputs::InputProblems>().is_some()
        || error.downcast_ref::<commands::merge::Refused>().is_some()
        // Well-formed inputs that cannot be used together (too few models in common, no comparisons).
        || matches!(error.downcast_ref::<Core>(), Some(Core::Format(_) | Core::Invalid(_)))
    {
        3
    } else if error.downcast_ref::<std::io::Error>().is_some() {
        4
    } else {
        1
    }
}

/// glibc serves each allocation above a threshold (128 kB, rising to at most 32 MB) with a fresh
/// `mmap` and returns it on free; the engine allocates its activations afresh for every step of a
/// forward (up to tens of MB each), so every step paid for page faults and the kernel's zeroing of
/// new pages (13 % of a CPU prefill of the 1.5B judge, `perf`). Serving them from the heap and
/// keeping freed memory for reuse removes that; the process holds at most its own peak.
///
/// One arena for every thread: a forward runs on a thread of the CPU pool (`Backend::enter`), so
/// its activations would come from that thread's arena while the memory freed after loading stays
/// in the main thread's, and each arena would hold a peak of its own (the 0.5B's peak memory +22
/// MiB). The engine's tasks allocate little, so they hardly contend for the one arena.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn keep_freed_memory() {
    // SAFETY: mallopt only sets allocator parameters; called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 30);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn keep_freed_memory() {}

fn main() -> ExitCode {
    keep_freed_memory();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Grade(a) => commands::grade::run(a),
        Command::Merge(a) => commands::merge::run(a),
        Command::Bench(a) => commands::bench::run(a),
        Command::Direct(a) => commands::direct::run(a),
        Command::Reason(a) => commands::reason::run(a),
        Command::Generate(a) => commands::generate::run(a),
        Command::Serve(a) => commands::serve::run(a),
        Command::Site(a) => commands::site::run(a),
        Command::Rank(a) => commands::rank::run(a),
        Command::Replay(a) => commands::replay::run(a),
        Command::Score(a) => commands::score::run(a),
        Command::Calibrate(a) => commands::calibrate::run(a),
        Command::Meta(a) => commands::meta::run(a),
        Command::Export(e) => commands::export::run(e),
        Command::Checklist(c) => commands::checklist::run(c),
        Command::Models(m) => commands::models::run(m),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line: the cause chain joined, so scripts and people see what went wrong where.
            eprintln!("rocketjudge: error: {e:#}");
            ExitCode::from(exit_code(&e))
        }
    }
}
