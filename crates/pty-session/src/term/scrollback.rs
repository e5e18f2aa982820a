//! The scrollback: the newest completed lines of a session within a line and byte budget,
//! numbered from 0, and the session's one read cursor.
//!
//! A stale cursor is data, not an error: lines that fell out before they were read are
//! counted in `skipped`.

use std::collections::VecDeque;

use crate::Output;
use crate::request::Rest;

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
        let skip = from.saturating_sub(self.begin).min(self.lines.len() as u64);
        self.lines.range(skip as usize..).map(String::as_str)
    }

    /// The read cursor: the number of the next line to deliver.
    pub(crate) fn cursor(&self) -> u64 {
        self.cursor
    }

    /// Delivers the unread lines, the newest that fit `budget`, and moves the cursor to the
    /// end. Every line is delivered at most once.
    pub(crate) fn read(&mut self, budget: Budget) -> Output {
        let end = self.line_end();
        let fell_out = self.begin.saturating_sub(self.cursor);
        let first_kept = self.cursor.max(self.begin).min(end);
        let taken = self.take(first_kept, end, budget, Take::Newest);
        self.cursor = end;
        let skipped = fell_out + (end - first_kept - taken.count);
        let rest = (taken.start > first_kept).then(|| Rest {
            lines: taken.start - first_kept,
            from: first_kept,
        });
        taken.into_output(skipped, rest)
    }

    /// Re-reads the completed lines from `from` on (from the oldest kept if `from` fell
    /// out), the oldest first, as many as fit `budget`. The cursor does not move; `skipped`
    /// counts the asked-for lines that are gone from the scrollback.
    pub(crate) fn reread(&self, from: u64, budget: Budget) -> Output {
        let end = self.line_end();
        let from = from.min(end);
        let first = from.max(self.begin);
        let taken = self.take(first, end, budget, Take::Oldest);
        let after = taken.start + taken.count;
        let rest = (after < end).then(|| Rest {
            lines: end - after,
            from: after,
        });
        taken.into_output(self.begin.saturating_sub(from), rest)
    }

    /// The kept lines `first..end` (line numbers) that fit `budget`, from the chosen end.
    /// When not even one line fits, the one next in turn is cut to the byte budget, so a
    /// reply always makes progress.
    fn take(&self, first: u64, end: u64, budget: Budget, from: Take) -> Taken {
        let index = |number: u64| (number - self.begin) as usize;
        let range = self.lines.range(index(first)..index(end));
        let most = range.len().min(budget.lines);
        let mut bytes = 0;
        let mut count = 0;
        let mut fits = |line: &String| {
            let fits = count < most && bytes + line.len() < budget.bytes;
            if fits {
                bytes += line.len() + 1;
                count += 1;
            }
            fits
        };
        match from {
            Take::Newest => range.rev().take_while(|line| fits(line)).for_each(drop),
            Take::Oldest => range.take_while(|line| fits(line)).for_each(drop),
        }
        let count = count as u64;
        if count == 0 && most > 0 {
            let number = match from {
                Take::Newest => end - 1,
                Take::Oldest => first,
            };
            let line = &self.lines[index(number)];
            let mut text = String::with_capacity(budget.bytes);
            text.push_str(&line[..char_floor(line, budget.bytes.saturating_sub(1))]);
            text.push('\n');
            return Taken {
                text,
                start: number,
                count: 1,
                cut: 1,
            };
        }
        let start = match from {
            Take::Newest => end - count,
            Take::Oldest => first,
        };
        let mut text = String::with_capacity(bytes);
        for line in self.lines.range(index(start)..index(start + count)) {
            text.push_str(line);
            text.push('\n');
        }
        Taken {
            text,
            start,
            count,
            cut: 0,
        }
    }

    /// How many completed lines came after the cursor (some may have fallen out since).
    pub(crate) fn unread(&self) -> u64 {
        self.line_end() - self.cursor
    }
}

/// A reply's budgets: at most `lines` lines and `bytes` bytes of text (each line with its
/// `\n`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    pub(crate) lines: usize,
    pub(crate) bytes: usize,
}

/// Which lines a reply prefers when not all fit.
#[derive(Debug, Clone, Copy)]
enum Take {
    /// The newest (a read after the cursor: what happened last matters most).
    Newest,
    /// The oldest (a re-read pages forward from where it was asked to start).
    Oldest,
}

/// The lines [`Scrollback::take`] chose.
struct Taken {
    text: String,
    /// The number of the first line in `text`.
    start: u64,
    count: u64,
    /// How many lines were cut to the byte budget (0 or 1).
    cut: usize,
}

impl Taken {
    fn into_output(self, skipped: u64, rest: Option<Rest>) -> Output {
        Output {
            text: self.text,
            lines: self.count as usize,
            truncated: skipped > 0 || rest.is_some(),
            skipped,
            cut_lines: self.cut,
            first_line: self.start,
            rest,
        }
    }
}

/// The largest char boundary of `text` at or below `at`.
fn char_floor(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A budget of `lines` lines and no byte limit to speak of.
    fn lines(lines: usize) -> Budget {
        Budget {
            lines,
            bytes: usize::MAX,
        }
    }

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
        let first = s.read(lines(10));
        assert_eq!(
            (first.text.as_str(), first.lines, first.truncated),
            ("0\n1\n2\n", 3, false)
        );
        let again = s.read(lines(10));
        assert_eq!(
            (again.text.as_str(), again.lines, again.skipped),
            ("", 0, 0)
        );
        s.push("3".into());
        assert_eq!(s.read(lines(10)).text, "3\n");
    }

    #[test]
    fn over_budget_gives_the_newest_and_counts_the_rest() {
        let mut s = filled(100, 1 << 20, 10);
        let out = s.read(lines(3));
        assert_eq!(out.text, "7\n8\n9\n");
        assert_eq!((out.truncated, out.skipped), (true, 7));
        assert_eq!(s.unread(), 0);
    }

    #[test]
    fn lines_that_fell_out_unread_are_skipped() {
        let mut s = filled(4, 1 << 20, 10);
        assert_eq!((s.line_begin(), s.line_end()), (6, 10));
        let out = s.read(lines(100));
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
        assert_eq!(s.read(lines(10)).skipped, 3);
    }

    #[test]
    fn lines_from_skips_what_is_gone() {
        let s = filled(3, 1 << 20, 6);
        assert_eq!(s.lines_from(0).collect::<Vec<_>>(), ["3", "4", "5"]);
        assert_eq!(s.lines_from(5).collect::<Vec<_>>(), ["5"]);
        assert_eq!(s.lines_from(6).count(), 0);
    }

    #[test]
    fn rereads_page_forward_without_moving_the_cursor() {
        let mut s = filled(5, 1 << 20, 12);
        assert_eq!(s.read(lines(2)).text, "10\n11\n");
        let out = s.reread(3, lines(3));
        assert_eq!(out.text, "7\n8\n9\n");
        assert_eq!(
            (out.skipped, out.first_line),
            (4, 7),
            "lines 3 to 6 are gone"
        );
        assert_eq!(out.rest, Some(Rest { lines: 2, from: 10 }));
        assert!(out.truncated);
        let out = s.reread(10, lines(3));
        assert_eq!(
            (out.text.as_str(), out.skipped, out.rest),
            ("10\n11\n", 0, None)
        );
        assert!(!out.truncated);
        assert_eq!(
            s.reread(12, lines(3)),
            Output {
                first_line: 12,
                ..Output::default()
            }
        );
        assert_eq!(s.reread(99, lines(3)).first_line, 12);
        assert_eq!(s.unread(), 0, "re-reads leave the cursor alone");
        s.push("12".into());
        assert_eq!(s.read(lines(9)).text, "12\n");
    }

    #[test]
    fn a_read_over_budget_says_where_the_rest_is() {
        let mut s = filled(100, 1 << 20, 10);
        s.read(lines(1));
        s.push("10".into());
        s.push("11".into());
        let out = s.read(lines(1));
        assert_eq!((out.text.as_str(), out.skipped), ("11\n", 1));
        assert_eq!(out.rest, Some(Rest { lines: 1, from: 10 }));
    }

    #[test]
    fn byte_budget_takes_the_lines_that_fit_and_cuts_one_too_long() {
        let mut s = Scrollback::new(100, 1 << 20);
        for line in ["aaaa", "bbbb", "cccc"] {
            s.push(line.into());
        }
        let budget = Budget {
            lines: 10,
            bytes: 10,
        };
        let out = s.reread(0, budget);
        assert_eq!((out.text.as_str(), out.cut_lines), ("aaaa\nbbbb\n", 0));
        let out = s.read(budget);
        assert_eq!((out.text.as_str(), out.skipped), ("bbbb\ncccc\n", 1));
        s.push("é".repeat(10));
        let out = s.read(Budget {
            lines: 10,
            bytes: 6,
        });
        assert_eq!(
            (out.text.as_str(), out.lines, out.cut_lines),
            ("éé\n", 1, 1)
        );
        assert!(
            !out.truncated,
            "the cut line was delivered, nothing skipped"
        );
    }

    /// One step of a random session: a line arrives, a reader reads after the cursor, or
    /// re-reads from a line.
    #[derive(Debug, Clone)]
    enum Step {
        Push(usize),
        Read(Budget),
        Reread(u64, Budget),
    }

    fn budget() -> impl proptest::strategy::Strategy<Value = Budget> {
        use proptest::prelude::*;
        (1usize..40, 1usize..3000).prop_map(|(lines, bytes)| Budget { lines, bytes })
    }

    fn step() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        prop_oneof![
            3 => (0usize..300).prop_map(Step::Push),
            1 => budget().prop_map(Step::Read),
            1 => (0u64..120, budget()).prop_map(|(from, b)| Step::Reread(from, b)),
        ]
    }

    /// Line `n` of a random session: its number, then `len` characters of one or two bytes.
    fn line(n: u64, len: usize) -> String {
        let mut line = format!("{n}:");
        line.extend((0..len).map(|i| if i % 3 == 0 { 'é' } else { 'x' }));
        line
    }

    /// Checks that `out` holds the consecutive lines `first..first + out.lines` of `all`,
    /// within `budget`, a too-long single line cut to it on a char boundary.
    fn check_lines(
        out: &Output,
        all: &[String],
        first: u64,
        budget: Budget,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        proptest::prop_assert!(out.lines <= budget.lines);
        proptest::prop_assert!(
            out.text.len() <= budget.bytes,
            "{} > {}",
            out.text.len(),
            budget.bytes
        );
        proptest::prop_assert_eq!(out.first_line, first);
        let got: Vec<&str> = out.text.split_terminator('\n').collect();
        proptest::prop_assert_eq!(got.len(), out.lines);
        for (i, got) in got.iter().enumerate() {
            let want = &all[(first + i as u64) as usize];
            if out.cut_lines == 1 {
                proptest::prop_assert_eq!(out.lines, 1);
                proptest::prop_assert!(want.len() >= budget.bytes && want.starts_with(got));
                proptest::prop_assert!(
                    got.len() + 1 + 4 > budget.bytes,
                    "cut no shorter than needed"
                );
            } else {
                proptest::prop_assert_eq!(got, want);
            }
        }
        Ok(())
    }

    proptest::proptest! {
        /// Through the cursor every line is delivered at most once and in order, `skipped`
        /// accounts exactly for what was left out, and the budgets hold; re-reads give the
        /// asked-for lines that are kept, count the gone ones, and never move the cursor.
        #[test]
        fn delivery_is_exact_and_bounded(
            max_lines in 1usize..50,
            max_bytes in 1usize..2000,
            steps in proptest::collection::vec(step(), 0..300),
        ) {
            let mut s = Scrollback::new(max_lines, max_bytes);
            let mut all: Vec<String> = Vec::new();
            let mut next_unseen = 0u64;
            let mut accounted = 0u64;
            let everything = Budget { lines: usize::MAX, bytes: usize::MAX };
            for step in steps.iter().cloned().chain([Step::Read(everything)]) {
                let pushed = all.len() as u64;
                match step {
                    Step::Push(len) => {
                        let line = line(pushed, len);
                        all.push(line.clone());
                        s.push(line);
                    }
                    Step::Read(budget) => {
                        let out = s.read(budget);
                        // The newest lines, consecutive up to the end, never before the cursor.
                        let first = pushed - out.lines as u64;
                        proptest::prop_assert!(first >= next_unseen || out.lines == 0);
                        check_lines(&out, &all, first, budget)?;
                        proptest::prop_assert_eq!(
                            out.skipped + out.lines as u64,
                            pushed - next_unseen,
                            "skipped counts exactly the unread lines left out"
                        );
                        proptest::prop_assert_eq!(out.truncated, out.skipped > 0);
                        let kept_from = next_unseen.max(s.line_begin());
                        let rest = (first > kept_from).then(|| Rest { lines: first - kept_from, from: kept_from });
                        proptest::prop_assert_eq!(out.rest, rest);
                        accounted += out.skipped + out.lines as u64;
                        next_unseen = pushed;
                    }
                    Step::Reread(from, budget) => {
                        let cursor = s.cursor();
                        let out = s.reread(from, budget);
                        proptest::prop_assert_eq!(s.cursor(), cursor, "a re-read never moves the cursor");
                        let from = from.min(pushed);
                        let first = from.max(s.line_begin());
                        check_lines(&out, &all, first, budget)?;
                        proptest::prop_assert_eq!(out.skipped, s.line_begin().saturating_sub(from));
                        proptest::prop_assert!(out.lines > 0 || first == pushed, "a re-read makes progress");
                        let after = first + out.lines as u64;
                        let rest = (after < pushed).then(|| Rest { lines: pushed - after, from: after });
                        proptest::prop_assert_eq!(out.rest, rest);
                        proptest::prop_assert_eq!(out.truncated, out.skipped > 0 || rest.is_some());
                    }
                }
                proptest::prop_assert!(s.lines.len() <= max_lines);
                proptest::prop_assert!(s.bytes <= max_bytes || s.lines.len() == 1);
                proptest::prop_assert_eq!(s.line_end(), all.len() as u64);
            }
            proptest::prop_assert_eq!(accounted, all.len() as u64);
        }
    }
}
