//! The markdown table: one row per run of a workload, with the limit of the same run.

use crate::Plan;

/// Whether a row met its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The row has no target (the limit itself, a peer tool).
    None,
    Met,
    Missed,
}

/// One line of the table.
pub struct Row {
    pub workload: String,
    pub run: String,
    pub result: String,
    /// The comparison with the limit measured in the same run (overhead or ratio).
    pub versus: String,
    pub target: String,
    pub verdict: Verdict,
}

/// The table being built, and notes printed under it.
pub struct Report {
    quick: bool,
    rows: Vec<Row>,
    notes: Vec<String>,
    /// Tables of their own (markdown, with a title line), printed after the notes.
    tables: Vec<String>,
}

impl Report {
    pub fn new(quick: bool) -> Report {
        Report {
            quick,
            rows: Vec::new(),
            notes: Vec::new(),
            tables: Vec::new(),
        }
    }

    /// Adds a row; `met` is `None` where the row has no target.
    pub fn row(
        &mut self,
        workload: &str,
        run: &str,
        result: String,
        versus: String,
        target: &str,
        met: Option<bool>,
    ) {
        let verdict = match met {
            None => Verdict::None,
            Some(true) => Verdict::Met,
            Some(false) => Verdict::Missed,
        };
        eprintln!("   {run}: {result} {versus}");
        self.rows.push(Row {
            workload: workload.to_owned(),
            run: run.to_owned(),
            result,
            versus,
            target: target.to_owned(),
            verdict,
        });
    }

    /// A note under the table (a skipped peer, how a figure was taken).
    pub fn note(&mut self, note: impl Into<String>) {
        let note = note.into();
        eprintln!("   note: {note}");
        self.notes.push(note);
    }

    /// A table of its own (a breakdown), printed after the main table and its notes.
    pub fn table(&mut self, table: String) {
        eprintln!("{table}");
        self.tables.push(table);
    }

    /// How many rows missed their target.
    pub fn missed(&self) -> usize {
        self.rows
            .iter()
            .filter(|row| row.verdict == Verdict::Missed)
            .count()
    }

    pub fn print(&self, machine: &str, plan: &Plan) {
        let mode = if plan.quick {
            "`--quick`: small counts, no verdicts (a smoke test, not a measurement)"
        } else {
            "full run"
        };
        println!("Machine: {machine}. Mode: {mode}.");
        println!();
        println!("| workload | run | result | vs. the limit, same run | target | |");
        println!("|---|---|---|---|---|---|");
        let mut last = "";
        for row in &self.rows {
            let workload = if row.workload == last {
                ""
            } else {
                &row.workload
            };
            last = &row.workload;
            let verdict = match (self.quick, row.verdict) {
                (_, Verdict::None) => "",
                (true, _) => "(quick)",
                (false, Verdict::Met) => "met",
                (false, Verdict::Missed) => "**missed**",
            };
            println!(
                "| {workload} | {} | {} | {} | {} | {verdict} |",
                row.run, row.result, row.versus, row.target
            );
        }
        if !self.notes.is_empty() {
            println!();
            for note in &self.notes {
                println!("- {note}");
            }
        }
        for table in &self.tables {
            println!();
            print!("{table}");
        }
    }
}
