//! What leaves a session besides its scrollback: its recording and its live feed.
//!
//! The drain hands every chunk it reads to the session's [`Tap`] under the state lock.
//! Neither way out can slow it: the recording is queued on a bounded channel to a writer
//! task ([`crate::record`]), and the live feed is a `tokio::sync::broadcast` of a few
//! dozen chunks, created at the first [`PtyService::watch`](crate::PtyService::watch) and
//! only copied into while someone watches. A watcher that falls behind is skipped ahead
//! (it learns how many chunks it missed), never buffered for. Window resizes go both
//! ways too, in order with the output: a recording's `"r"` event, a watcher's
//! [`WatchEvent::Resize`](crate::WatchEvent::Resize).

use std::sync::Arc;

use tokio::sync::broadcast;

use crate::record::Recorder;

/// How many chunks (each at most one read, 64 KiB) the live feed keeps for its slowest
/// watcher: at most 4 MiB a watched session.
const LIVE_CHUNKS: usize = 64;

/// A session's recording and live feed, kept in its state.
pub(crate) struct Tap {
    recorder: Option<Recorder>,
    live: Option<broadcast::Sender<Live>>,
}

/// What the live feed carries.
#[derive(Debug, Clone)]
pub(crate) enum Live {
    /// Output, as read.
    Output(Arc<[u8]>),
    /// The window's new size, `(cols, rows)`.
    Resize(u16, u16),
}

impl Tap {
    /// A tap recording into `recorder` if any. Watchers learn the window from the
    /// session's state, which follows every resize.
    pub(crate) fn new(recorder: Option<Recorder>) -> Tap {
        Tap {
            recorder,
            live: None,
        }
    }

    /// Output the drain just read.
    pub(crate) fn output(&self, bytes: &[u8]) {
        if let Some(recorder) = &self.recorder {
            recorder.output(bytes);
        }
        if let Some(live) = &self.live
            && live.receiver_count() > 0
        {
            // Fails only without receivers, which was just checked (or they just left).
            let _ = live.send(Live::Output(Arc::from(bytes)));
        }
    }

    /// The window is now `cols`×`rows`.
    pub(crate) fn resize(&self, cols: u16, rows: u16) {
        if let Some(recorder) = &self.recorder {
            recorder.resize(cols, rows);
        }
        if let Some(live) = &self.live
            && live.receiver_count() > 0
        {
            let _ = live.send(Live::Resize(cols, rows));
        }
    }

    /// What an agent typed (a send): recorded only where the config says so.
    pub(crate) fn agent_input(&self, bytes: &[u8]) {
        if let Some(recorder) = &self.recorder {
            recorder.input(bytes);
        }
    }

    /// A receiver of every later chunk of output and resize.
    pub(crate) fn subscribe(&mut self) -> broadcast::Receiver<Live> {
        self.live
            .get_or_insert_with(|| broadcast::Sender::new(LIVE_CHUNKS))
            .subscribe()
    }

    /// The output has ended: the recording is finished and watchers see the end.
    pub(crate) fn end(&mut self) {
        self.recorder = None;
        self.live = None;
    }
}
