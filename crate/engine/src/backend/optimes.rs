//! Where a forward's time goes, operation by operation (`rocketjudge bench --op-times`): each
//! operation's wall time on the thread that called it, summed over its calls. Compared across
//! thread counts, an operation whose time falls by less than the thread count rises is where
//! threads wait (its work split too finely, a serial step inside it, workers that end unevenly), and
//! the time outside every operation is the serial glue between them. Off unless a backend was asked
//! for it ([`crate::backend::Backend::time_ops`]): then each operation reads the clock twice.
//!
//! Where asked too ([`crate::backend::Backend::time_splits`]), each operation's parallel steps are
//! added up beside its time ([`Split`]): how its work spread over the threads.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The operations timed, as the [`crate::backend::Backend`] trait names them. None is timed inside
/// another: `logits` is the head's rows for the ids asked, a whole head's product counts as `matmul`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Embed,
    RmsNorm,
    Matmul,
    Rope,
    Add,
    GatedActivation,
    SelectRows,
    AppendCache,
    Attention,
    Logits,
}

impl Op {
    pub const ALL: [Op; 10] = [
        Op::Embed,
        Op::RmsNorm,
        Op::Matmul,
        Op::Rope,
        Op::Add,
        Op::GatedActivation,
        Op::SelectRows,
        Op::AppendCache,
        Op::Attention,
        Op::Logits,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Op::Embed => "embed",
            Op::RmsNorm => "rms_norm",
            Op::Matmul => "matmul",
            Op::Rope => "rope",
            Op::Add => "add",
            Op::GatedActivation => "gated_activation",
            Op::SelectRows => "select_rows",
            Op::AppendCache => "append_cache",
            Op::Attention => "attention",
            Op::Logits => "logits",
        }
    }
}

/// The operation whose timer started last (`usize::MAX` before any): where a parallel step found
/// inside it is counted. One forward runs at a time where operations are timed (a benchmark).
static CURRENT: AtomicUsize = AtomicUsize::new(usize::MAX);

/// The operation timed now, if any.
pub(crate) fn current_op() -> Option<Op> {
    Op::ALL.get(CURRENT.load(Ordering::Relaxed)).copied()
}

/// Calls and nanoseconds per operation since the last [`OpTimes::reset`], and their parallel
/// steps where those are timed.
#[derive(Debug, Default)]
pub struct OpTimes {
    calls: [AtomicU64; Op::ALL.len()],
    nanos: [AtomicU64; Op::ALL.len()],
    /// Per operation: regions, tasks, then the nanoseconds of the regions' walls, of their tasks
    /// and of their busiest workers (as [`Split`]'s fields), and of the timing of the regions
    /// itself, left out of the operation's time.
    split: [[AtomicU64; 6]; Op::ALL.len()],
}

/// One operation's share: `calls` calls that took `seconds` in all (less what timing its parallel
/// steps took, where they were timed).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpTime {
    pub op: Op,
    pub calls: u64,
    pub seconds: f64,
    /// Its parallel steps (zero where they were not timed, or it has none).
    pub split: Split,
}

/// An operation's parallel steps, summed over its calls. A *region* is one fork and join of the
/// thread pool, a list of *tasks* that run on whichever thread is free.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Split {
    pub regions: u64,
    pub tasks: u64,
    /// The regions' wall time on the thread that started them.
    pub wall_s: f64,
    /// Their tasks' times added up (every thread's work).
    pub work_s: f64,
    /// Per region, the time the region could not be shorter than given how its work was split:
    /// the busiest worker's work on a pool of many threads, or, where the tasks ran on one thread
    /// split as for P, the tasks replayed on P workers ([`crate::backend::Backend::time_splits`]).
    pub busiest_s: f64,
    /// The time spent timing them outside their walls (left out of the operation's time).
    pub timing_s: f64,
}

impl OpTimes {
    pub fn reset(&self) {
        for c in self.calls.iter().chain(&self.nanos).chain(self.split.iter().flatten()) {
            c.store(0, Ordering::Relaxed);
        }
    }

    /// One parallel step of `op`: `tasks` tasks, its wall time, its tasks' work and its busiest
    /// worker's (see [`Split`]), and the time spent timing it, outside its wall, in nanoseconds.
    pub(crate) fn add_region(&self, op: Op, tasks: u64, wall: u64, work: u64, busiest: u64, timing: u64) {
        for (c, v) in self.split[op as usize].iter().zip([1, tasks, wall, work, busiest, timing]) {
            c.fetch_add(v, Ordering::Relaxed);
        }
    }

    /// Every operation called since the last reset, in [`Op::ALL`]'s order.
    pub fn snapshot(&self) -> Vec<OpTime> {
        Op::ALL
            .iter()
            .map(|&op| {
                let [regions, tasks, wall, work, busiest, timing] = self.split[op as usize].each_ref().map(|c| c.load(Ordering::Relaxed));
                let nanos = self.nanos[op as usize].load(Ordering::Relaxed).saturating_sub(timing);
                OpTime {
                    op,
                    calls: self.calls[op as usize].load(Ordering::Relaxed),
                    seconds: nanos as f64 * 1e-9,
                    split: Split {
                        regions,
                        tasks,
                        wall_s: wall as f64 * 1e-9,
                        work_s: work as f64 * 1e-9,
                        busiest_s: busiest as f64 * 1e-9,
                        timing_s: timing as f64 * 1e-9,
                    },
                }
            })
            .filter(|t| t.calls > 0)
            .collect()
    }

    /// A timer for one call of `op`, added to these times when dropped.
    pub fn start(self: &Arc<Self>, op: Op) -> OpTimer {
        CURRENT.store(op as usize, Ordering::Relaxed);
        OpTimer { times: Arc::clone(self), op, started: Instant::now() }
    }
}

/// Adds its call's wall time to its operation when dropped.
pub struct OpTimer {
    times: Arc<OpTimes>,
    op: Op,
    started: Instant,
}

impl Drop for OpTimer {
    fn drop(&mut self) {
        let i = self.op as usize;
        let nanos = u64::try_from(self.started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.times.calls[i].fetch_add(1, Ordering::Relaxed);
        self.times.nanos[i].fetch_add(nanos, Ordering::Relaxed);
    }
}
