//! Giving freed memory back to the system.
//!
//! A session's scrollback, screen and buffers are freed when it closes, but glibc's
//! allocator keeps freed pages in its arenas (one per thread that allocated, and tokio's
//! workers all do) for reuse: after sixty sessions opened and closed the server stayed at
//! twice its starting size. Nothing was held: `malloc_trim` gave it all back. So a task
//! looks every few seconds at how much the allocator holds free and trims when it is
//! worth it. Other allocators and platforms: nothing to do.

use std::time::Duration;

/// How often the allocator is looked at.
pub const PERIOD: Duration = Duration::from_secs(2);

/// Free memory the allocator may keep without being trimmed.
pub const KEEP_FREE_BYTES: usize = 4 * 1024 * 1024;

/// Whether an allocator holding `free` bytes should give them back: a pure rule.
pub fn worth_trimming(free: usize) -> bool {
    free > KEEP_FREE_BYTES
}

/// Trims the allocator every [`PERIOD`] when it holds more than [`KEEP_FREE_BYTES`] free;
/// runs until the runtime ends.
pub async fn return_freed() {
    if !supported() {
        return;
    }
    let mut ticks = tokio::time::interval(PERIOD);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        // Both walk the arenas under their locks: off the reactor's threads.
        let _ = tokio::task::spawn_blocking(trim_if_worth_it).await;
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn supported() -> bool {
    true
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn supported() -> bool {
    false
}

/// Trims if the allocator holds enough free memory; returns the bytes it held free.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn trim_if_worth_it() -> usize {
    // SAFETY: mallinfo2 and malloc_trim only read and reorganize the allocator's own
    // state, under its locks.
    let free = unsafe { libc::mallinfo2() }.fordblks;
    if worth_trimming(free) {
        // SAFETY: as above.
        unsafe { libc::malloc_trim(0) };
    }
    free
}

/// Nothing to trim here.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn trim_if_worth_it() -> usize {
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_little_free_memory_is_kept() {
        assert!(!worth_trimming(0));
        assert!(!worth_trimming(KEEP_FREE_BYTES));
        assert!(worth_trimming(KEEP_FREE_BYTES + 1));
    }

    fn rss_kib() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kib| kib.parse().ok())
            .unwrap()
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn freed_memory_goes_back_to_the_system() {
        if !pty_session_testkit::in_own_process(
            "memory::tests::freed_memory_goes_back_to_the_system",
        ) {
            return;
        }
        // 64 MiB in small blocks from several threads, freed but for the last block of
        // each, which keeps the freed ones below it from going back by themselves.
        let kept: Vec<Vec<u8>> = (0..4)
            .map(|_| {
                std::thread::spawn(|| {
                    let mut blocks: Vec<Vec<u8>> = (0..16_384).map(|_| vec![1u8; 1024]).collect();
                    let last = blocks.pop().unwrap();
                    drop(blocks);
                    last
                })
            })
            .map(|thread| thread.join().unwrap())
            .collect();
        let before = rss_kib();
        let held = trim_if_worth_it();
        let after = rss_kib();
        eprintln!("held free {} KiB; RSS {before} → {after} KiB", held / 1024);
        assert!(held > 8 << 20, "the freed blocks are held: {held}");
        assert!(
            after + 8 * 1024 < before,
            "given back: {before} → {after} KiB"
        );
        drop(kept);
    }
}
