//! How evenly each operation's parallel work spreads over the threads (`rocketjudge bench
//! --splits`). Every parallel step of this backend (a *region*: one fork and join of the pool) goes
//! through [`Tasks`], whose items are its *tasks*. Where asked ([`start`]), each task's time is
//! taken, and each region's wall time on the thread that started it, and added to the operation
//! timed at the moment ([`OpTimes::add_region`]). Two readings:
//!
//! - **On a pool of T threads**, each worker's busy time per region: the busiest worker is as short
//!   as the region can be given how its work fell; the wall time beyond it is the pool's own cost
//!   (waking threads, stealing, joining); the work added up, against one thread's, is what the
//!   machine adds (lower clocks, shared caches and memory).
//! - **On one thread with the work split as for P threads** ([`Replay::As`]), the tasks' times
//!   replayed on P workers in their order, each task to the first free worker (what a pool that
//!   steals work does at best, with no cost of its own): the speed-up the split alone allows at P,
//!   measured on a machine with fewer cores. Consecutive tasks of a region with a minimum length
//!   go as one, as the pool splits them.
//!
//! Off, a region costs one atomic load. A region started inside another's task is counted in that
//! task (the backend starts none).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rayon::iter::{IndexedParallelIterator, ParallelIterator};

use crate::backend::optimes::{current_op, OpTimes};

/// How the tasks' times are read ([`start`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replay {
    /// On the pool as it runs: each worker's busy time.
    Pool,
    /// Every task on one thread, replayed on this many workers.
    As(usize),
}

static ON: AtomicBool = AtomicBool::new(false);
/// Regions open now (one, or zero).
static DEPTH: AtomicUsize = AtomicUsize::new(0);
/// 0 for [`Replay::Pool`], else the workers replayed.
static REPLAY_AS: AtomicUsize = AtomicUsize::new(0);
static TIMES: Mutex<Option<Arc<OpTimes>>> = Mutex::new(None);
/// The open region's tasks in the order they ran ([`Replay::As`]).
static REPLAYED: Mutex<Vec<u64>> = Mutex::new(Vec::new());

/// Workers whose busy time is kept apart; a pool larger than this counts the rest in the last.
const MAX_WORKERS: usize = 256;
/// One worker's busy nanoseconds and tasks in the open region, on a cache line of its own: the
/// workers write nothing in common while they are timed.
#[repr(align(128))]
struct Busy {
    nanos: AtomicU64,
    tasks: AtomicU64,
}
static BUSY: [Busy; MAX_WORKERS] = [const { Busy { nanos: AtomicU64::new(0), tasks: AtomicU64::new(0) } }; MAX_WORKERS];

/// Time every task from now on into `times`, read as `replay` says.
pub(crate) fn start(times: Arc<OpTimes>, replay: Replay) {
    *TIMES.lock().unwrap_or_else(|e| e.into_inner()) = Some(times);
    REPLAY_AS.store(if let Replay::As(p) = replay { p.max(1) } else { 0 }, Relaxed);
    ON.store(true, Relaxed);
}

/// `f` as one timed task, where tasks are timed.
#[inline]
fn task<R>(f: impl FnOnce() -> R) -> R {
    if !ON.load(Relaxed) {
        return f();
    }
    let t = Instant::now();
    let r = f();
    let ns = nanos(t);
    if REPLAY_AS.load(Relaxed) > 0 {
        REPLAYED.lock().unwrap_or_else(|e| e.into_inner()).push(ns);
    } else {
        let b = &BUSY[rayon::current_thread_index().unwrap_or(0).min(MAX_WORKERS - 1)];
        b.nanos.fetch_add(ns, Relaxed);
        b.tasks.fetch_add(1, Relaxed);
    }
    r
}

/// `f`, a region whose items are tasks of at least `min_len` items, timed where asked.
fn region<R>(min_len: usize, f: impl FnOnce() -> R) -> R {
    if !ON.load(Relaxed) {
        return f();
    }
    if DEPTH.fetch_add(1, Relaxed) > 0 {
        // Inside another region's task: counted in that task.
        let r = f();
        DEPTH.fetch_sub(1, Relaxed);
        return r;
    }
    let entered = Instant::now();
    let workers = rayon::current_num_threads().clamp(1, MAX_WORKERS);
    for b in &BUSY[..workers] {
        b.nanos.store(0, Relaxed);
        b.tasks.store(0, Relaxed);
    }
    REPLAYED.lock().unwrap_or_else(|e| e.into_inner()).clear();
    let t = Instant::now();
    let r = f();
    let wall = nanos(t);
    let left = Instant::now();
    DEPTH.fetch_sub(1, Relaxed);
    let (tasks, work, busiest) = match REPLAY_AS.load(Relaxed) {
        0 => {
            let busy = BUSY[..workers].iter().map(|b| b.nanos.load(Relaxed));
            (BUSY[..workers].iter().map(|b| b.tasks.load(Relaxed)).sum(), busy.clone().sum(), busy.max().unwrap_or(0))
        }
        p => {
            let replayed = REPLAYED.lock().unwrap_or_else(|e| e.into_inner());
            let merged: Vec<u64> = replayed.chunks(min_len.max(1)).map(|c| c.iter().sum()).collect();
            (replayed.len() as u64, merged.iter().sum(), makespan(&merged, p))
        }
    };
    if let (Some(op), Some(times)) = (current_op(), TIMES.lock().unwrap_or_else(|e| e.into_inner()).as_ref()) {
        // This function's own time outside the region's wall, as near its end as can be taken.
        let timing = (t - entered).as_nanos() as u64 + nanos(left);
        times.add_region(op, tasks, wall, work, busiest, timing);
    }
    r
}

fn nanos(t: Instant) -> u64 {
    u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// When the last of `tasks` ends if each, in order, goes to whichever of `workers` is free first.
pub(crate) fn makespan(tasks: &[u64], workers: usize) -> u64 {
    let mut free: BinaryHeap<Reverse<u64>> = (0..workers.max(1)).map(|_| Reverse(0)).collect();
    for &t in tasks {
        let Reverse(at) = free.pop().expect("at least one worker");
        free.push(Reverse(at + t));
    }
    free.into_iter().map(|Reverse(at)| at).max().unwrap_or(0)
}

/// A parallel step whose items are timed tasks ([`start`]): rayon's `for_each` and
/// `for_each_init` with a minimum number of items per piece (`with_min_len`).
pub(crate) trait Tasks: IndexedParallelIterator {
    fn each_task<F>(self, min_len: usize, f: F)
    where
        F: Fn(Self::Item) + Sync + Send,
    {
        region(min_len, || self.with_min_len(min_len).for_each(|x| task(|| f(x))))
    }

    fn each_task_init<T, I, F>(self, min_len: usize, init: I, f: F)
    where
        I: Fn() -> T + Sync + Send,
        F: Fn(&mut T, Self::Item) + Sync + Send,
    {
        region(min_len, || self.with_min_len(min_len).for_each_init(init, |s, x| task(|| f(s, x))))
    }
}

impl<P: IndexedParallelIterator> Tasks for P {}

#[cfg(test)]
mod tests {
    use super::makespan;

    /// Each task in order to the first free worker: worked by hand.
    #[test]
    fn tasks_go_to_the_first_free_worker() {
        // Workers end at 3 | 3, then 5 | 5, then the last task on the first: 7.
        assert_eq!(makespan(&[3, 3, 2, 2, 2], 2), 7);
        // In order, not sorted: the long task last holds one worker alone.
        assert_eq!(makespan(&[1, 1, 1, 1, 4], 2), 6);
        assert_eq!(makespan(&[4, 1, 1, 1, 1], 2), 4);
        assert_eq!(makespan(&[5, 5], 1), 10);
        assert_eq!(makespan(&[5, 5], 8), 5);
        assert_eq!(makespan(&[], 4), 0);
    }
}
