//! Where a forward's time goes, operation by operation (`rocketjudge bench --op-times`): each
//! operation's wall time on the thread that called it, summed over its calls. Compared across
//! thread counts, an operation whose time falls by less than the thread count rises is where
//! threads wait (its work split too finely, a serial step inside it, workers that end unevenly), and
//! the time outside every operation is the serial glue between them. Off unless a backend was asked
//! for it ([`crate::backend::Backend::time_ops`]): then each operation reads the clock twice.

use std::sync::atomic::{AtomicU64, Ordering};
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

/// Calls and nanoseconds per operation since the last [`OpTimes::reset`].
#[derive(Debug, Default)]
pub struct OpTimes {
    calls: [AtomicU64; Op::ALL.len()],
    nanos: [AtomicU64; Op::ALL.len()],
}

/// One operation's share: `calls` calls that took `seconds` in all.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpTime {
    pub op: Op,
    pub calls: u64,
    pub seconds: f64,
}

impl OpTimes {
    pub fn reset(&self) {
        for c in self.calls.iter().chain(&self.nanos) {
            c.store(0, Ordering::Relaxed);
        }
    }

    /// Every operation called since the last reset, in [`Op::ALL`]'s order.
    pub fn snapshot(&self) -> Vec<OpTime> {
        Op::ALL
            .iter()
            .map(|&op| OpTime {
                op,
                calls: self.calls[op as usize].load(Ordering::Relaxed),
                seconds: self.nanos[op as usize].load(Ordering::Relaxed) as f64 * 1e-9,
            })
            .filter(|t| t.calls > 0)
            .collect()
    }

    /// A timer for one call of `op`, added to these times when dropped.
    pub fn start(self: &Arc<Self>, op: Op) -> OpTimer {
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
