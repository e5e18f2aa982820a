//! The scrollback: the newest completed lines of a session within a line and byte budget,
//! numbered from 0, and the session's one read cursor.
//!
//! A stale cursor is data, not an error: lines that fell out before they were read are
//! counted in `skipped`.

use std::collections::VecDeque;

use crate::Output;

/// How many dropped lines' strings [`Scrollback::push_recycling`] lets `spare` hold: as
/// many as the lines of one 64 KiB read of short lines (`seq` gives about 8,000), so a
/// flood allocates nothing per line once its scrollback is full.
const SPARE_LINES: usize = 8192;
/// The largest string it hands back, in bytes of capacity: short lines are the ones whose
/// allocation costs most per byte; a full pool holds at most about 1.2 MB.
const SPARE_CAPACITY: usize = 128;

/// The completed lines of one session and its read cursor.
#[derive(Debug)]
pub(crate) struct Scrollback {
    lines: VecDeque<String>,
    /// The number of the oldest line in `lines` (`lineBegin`).
    begin: u64,
    /// The bytes held in `lines`.
    bytes: usize,
    max_lines: usize,
    max_bytes: usize,
    /// The number of the next line to deliver.
    cursor: u64,
}

impl Scrollback {
    pub(crate) fn new(max_lines: usize, max_bytes: usize) -> Scrollback {
        Scrollback {
            lines: VecDeque::new(),
            begin: 0,
            bytes: 0,
            max_lines: max_lines.max(1),
            max_bytes,
            cursor: 0,
        }
    }

    /// Appends one completed line (without its `\n`), dropping the oldest lines past the
    /// budget. A line alone larger than the byte budget is still kept, so the newest line
    /// is always readable.
    #[cfg(test)]
    pub(crate) fn push(&mut self, line: String) {
        self.push_recycling(line, &mut Vec::new());
    }

    /// [`push`](Self::push), putting the dropped lines' strings, emptied, into `spare`
    /// for new lines to be written into (a few, and only small ones).
    pub(crate) fn push_recycling(&mut self, line: String, spare: &mut Vec<String>) {
        self.bytes += line.len();
        self.lines.push_back(line);
        while self.lines.len() > self.max_lines
            || (self.bytes > self.max_bytes && self.lines.len() > 1)
        {
            let mut dropped = self.lines.pop_front().expect("more than one line");
            self.bytes -= dropped.len();
            self.begin += 1;
            if spare.len() < SPARE_LINES && dropped.capacity() <= SPARE_CAPACITY {
                dropped.clear();
                spare.push(dropped);
            }
        }
    }

    /// `lineBegin`: the oldest line still kept.
    pub(crate) fn line_begin(&self) -> u64 {
        self.begin
    }

    /// `lineEnd` = `totalLines`: lines completed so far.
    pub(crate) fn line_end(&self) -> u64 {
        self.begin + self.lines.len() as u64
    }

    /// Completed lines numbered `from..` that are still kept (for `until` matching).
    pub(crate) fn lines_from(&self, from: u64) -> impl Iterator<Item = &str> {
        let skip = from.saturating_sub(self.begin);
        self.lines
            .iter()
            .skip(usize::try_from(skip).unwrap_or(usize::MAX))
            .map(String::as_str)
    }

    /// Delivers the unread lines, the newest `budget` of them, and moves the cursor to the
    /// end. Every line is delivered at most once.
    pub(crate) fn read(&mut self, budget: usize) -> Output {
        let end = self.line_end();
        let fell_out = self.begin.saturating_sub(self.cursor);
        let first_kept = self.cursor.max(self.begin);
        let available = end - first_kept;
        let taken = available.min(budget as u64);
        let skipped = fell_out + (available - taken);
        let mut text = String::new();
        for line in self.lines_from(end - taken) {
            text.push_str(line);
            text.push('\n');
        }
        self.cursor = end;
        Output {
            text,
            lines: taken as usize,
            truncated: skipped > 0,
            skipped,
        }
    }

    /// Whether completed lines wait to be read.
    #[cfg(test)]
    pub(crate) fn unread(&self) -> u64 {
        self.line_end() - self.cursor
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropped_lines_come_back_emptied_few_and_small() {
        let mut scrollback = Scrollback::new(2, 1 << 20);
        let mut spare = Vec::new();
        scrollback.push_recycling("x".repeat(2000), &mut spare);
        let n = SPARE_LINES + 100;
        for i in 0..n {
            scrollback.push_recycling(format!("line {i}"), &mut spare);
        }
        // n - 1 lines dropped: the large one is not kept, and at most SPARE_LINES are.
        assert_eq!(spare.len(), SPARE_LINES);
        assert!(
            spare
                .iter()
                .all(|s| s.is_empty() && s.capacity() <= SPARE_CAPACITY)
        );
        assert_eq!(scrollback.line_end(), n as u64 + 1);
        let last = [format!("line {}", n - 2), format!("line {}", n - 1)];
        assert_eq!(scrollback.lines_from(0).collect::<Vec<_>>(), last);
    }

    fn filled(max_lines: usize, max_bytes: usize, n: u64) -> Scrollback {
        let mut scrollback = Scrollback::new(max_lines, max_bytes);
        for i in 0..n {
            scrollback.push(i.to_string());
        }
        scrollback
    }

    #[test]
    fn reads_deliver_each_line_once_in_order() {
        let mut s = filled(100, 1 << 20, 3);
        let first = s.read(10);
        assert_eq!(
            (first.text.as_str(), first.lines, first.truncated),
            ("0\n1\n2\n", 3, false)
        );
        assert_eq!(s.read(10), Output::default());
        s.push("3".into());
        assert_eq!(s.read(10).text, "3\n");
    }

    #[test]
    fn over_budget_gives_the_newest_and_counts_the_rest() {
        let mut s = filled(100, 1 << 20, 10);
        let out = s.read(3);
        assert_eq!(out.text, "7\n8\n9\n");
        assert_eq!((out.truncated, out.skipped), (true, 7));
        assert_eq!(s.unread(), 0);
    }

    #[test]
    fn lines_that_fell_out_unread_are_skipped() {
        let mut s = filled(4, 1 << 20, 10);
        assert_eq!((s.line_begin(), s.line_end()), (6, 10));
        let out = s.read(100);
        assert_eq!(out.text, "6\n7\n8\n9\n");
        assert_eq!((out.truncated, out.skipped), (true, 6));
    }

    #[test]
    fn byte_budget_drops_old_lines_but_keeps_the_newest() {
        let mut s = Scrollback::new(100, 10);
        s.push("aaaa".into());
        s.push("bbbb".into());
        s.push("cccc".into());
        assert_eq!(s.line_begin(), 1);
        s.push("x".repeat(50));
        assert_eq!((s.line_begin(), s.line_end()), (3, 4));
        assert_eq!(s.read(10).skipped, 3);
    }

    #[test]
    fn lines_from_skips_what_is_gone() {
        let s = filled(3, 1 << 20, 6);
        assert_eq!(s.lines_from(0).collect::<Vec<_>>(), ["3", "4", "5"]);
        assert_eq!(s.lines_from(5).collect::<Vec<_>>(), ["5"]);
        assert_eq!(s.lines_from(6).count(), 0);
    }

    /// One step of a random session: a line arrives, or a reader reads.
    #[derive(Debug, Clone)]
    enum Step {
        Push(usize),
        Read(usize),
    }

    fn step() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        prop_oneof![
            3 => (0usize..300).prop_map(Step::Push),
            1 => (1usize..40).prop_map(Step::Read),
        ]
    }

    proptest::proptest! {
        /// Every line is delivered at most once and in order, `skipped` accounts exactly
        /// for what was left out, and the budgets hold after every step.
        #[test]
        fn delivery_is_exact_and_bounded(
            max_lines in 1usize..50,
            max_bytes in 1usize..2000,
            steps in proptest::collection::vec(step(), 0..300),
        ) {
            let mut s = Scrollback::new(max_lines, max_bytes);
            let mut pushed = 0u64;
            let mut next_unseen = 0u64;
            let mut accounted = 0u64;
            for step in steps.iter().cloned().chain([Step::Read(usize::MAX)]) {
                match step {
                    Step::Push(len) => {
                        let mut line = format!("{pushed}:");
                        line.push_str(&"x".repeat(len));
                        s.push(line);
                        pushed += 1;
                    }
                    Step::Read(budget) => {
                        let out = s.read(budget);
                        let numbers: Vec<u64> = out
                            .text
                            .lines()
                            .map(|l| l.split(':').next().unwrap().parse().unwrap())
                            .collect();
                        proptest::prop_assert_eq!(numbers.len(), out.lines);
                        proptest::prop_assert!(out.lines <= budget);
                        // In order, never before the cursor, consecutive up to the end.
                        if let Some(&first) = numbers.first() {
                            proptest::prop_assert!(first >= next_unseen);
                            let expected: Vec<u64> = (first..pushed).collect();
                            proptest::prop_assert_eq!(&numbers, &expected);
                        }
                        proptest::prop_assert_eq!(
                            out.skipped + out.lines as u64,
                            pushed - next_unseen,
                            "skipped counts exactly the unread lines left out"
                        );
                        proptest::prop_assert_eq!(out.truncated, out.skipped > 0);
                        accounted += out.skipped + out.lines as u64;
                        next_unseen = pushed;
                    }
                }
                proptest::prop_assert!(s.lines.len() <= max_lines);
                proptest::prop_assert!(s.bytes <= max_bytes || s.lines.len() == 1);
                proptest::prop_assert_eq!(s.line_end(), pushed);
            }
            proptest::prop_assert_eq!(accounted, pushed);
        }
    }
}
