//! `pty-session ls`: the sessions of a `serve` and of the background server, one a line.

use std::io::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, bail};

use crate::cli::RemoteArgs;
use crate::http::proof;
use crate::people::listing::Listing;
use crate::people::remote::{PERSIST_NAME, Places, default_serve, remote_of, sessions};
use crate::people::shown::shown;
use crate::persist;

/// `pty-session ls`: prints the sessions of `serve` and of the background server, one a
/// line; an error when neither runs, or when one that runs cannot be asked. Another
/// program at the default address of `serve` is named, not taken for a `serve`.
pub async fn ls(remote: &RemoteArgs, persist_only: bool) -> anyhow::Result<()> {
    let places = Places::of(remote, persist_only);
    let mut rows: Vec<(String, Listing)> = Vec::new();
    let mut asked: Vec<String> = Vec::new();
    let mut not_running: Vec<String> = Vec::new();
    let mut problems: Vec<String> = Vec::new();
    // Another program at the default address of `serve`: said, and no failure.
    let mut elsewhere: Option<String> = None;
    if matches!(places, Places::Persist | Places::Both) {
        match persist::sessions().await {
            Ok(Some(sessions)) => {
                asked.push(PERSIST_NAME.to_owned());
                rows.extend(sessions.into_iter().map(|s| (persist_place(&s), s)));
            }
            Ok(None) if matches!(places, Places::Persist) => {
                bail!(
                    "no background server of `pty-session mcp --persist` runs (no {})",
                    persist::socket_path()
                );
            }
            Ok(None) => not_running
                .push("no background server of `pty-session mcp --persist` runs".to_owned()),
            Err(err) if matches!(places, Places::Persist) => return Err(err),
            Err(err) => problems.push(format!("{PERSIST_NAME}: {err:#}")),
        }
    }
    match places {
        Places::Serve(args) => {
            let remote = remote_of(args)?;
            let sessions = sessions(&remote).await?;
            asked.push(format!("`pty-session serve` at {}", remote.authority));
            rows.extend(sessions.into_iter().map(|s| ("serve".to_owned(), s)));
        }
        Places::Both => {
            let (authority, listening) = default_serve().await?;
            if listening && !proof::is_serve(&authority).await {
                // Not ours to fail on: another program may hold the default port.
                elsewhere = Some(format!(
                    "something else listens at {authority} (not a `pty-session serve`)"
                ));
            } else if listening {
                let listed = match remote_of(remote) {
                    Ok(remote) => sessions(&remote).await,
                    Err(err) => Err(err),
                };
                match listed {
                    Ok(sessions) => {
                        asked.push(format!("`pty-session serve` at {authority}"));
                        rows.extend(sessions.into_iter().map(|s| ("serve".to_owned(), s)));
                    }
                    Err(err) => {
                        problems.push(format!("`pty-session serve` at {authority}: {err:#}"))
                    }
                }
            } else {
                not_running.push(format!("no `pty-session serve` listens at {authority}"));
            }
        }
        Places::Persist => {}
    }
    if asked.is_empty() && problems.is_empty() {
        bail!(
            "no server runs: {}",
            not_running
                .into_iter()
                .chain(elsewhere)
                .collect::<Vec<_>>()
                .join(", and ")
        );
    }
    rows.sort_by_key(|(_, s)| s.started_at_ms);
    let out = if rows.is_empty() {
        let notes: Vec<String> = (!asked.is_empty())
            .then(|| format!("asked {}", asked.join(" and ")))
            .into_iter()
            .chain(not_running)
            .chain(elsewhere)
            .collect();
        format!("no sessions ({})\n", notes.join("; "))
    } else {
        if let Some(elsewhere) = &elsewhere {
            eprintln!("pty-session ls: {elsewhere}");
        }
        table(&rows, terminal_width())
    };
    std::io::stdout()
        .write_all(out.as_bytes())
        .context("cannot write to stdout")?;
    if !problems.is_empty() {
        bail!("{}", problems.join("; "));
    }
    Ok(())
}

/// Where a session of the background server lives, as `ls` shows it: `persist:` and its
/// owner, a home directory shown as `~`.
fn persist_place(session: &Listing) -> String {
    let owner = session.owner.as_deref().unwrap_or_default();
    let home = std::env::var("HOME").unwrap_or_default();
    let owner = match owner.strip_prefix(home.as_str()) {
        Some(rest) if home.len() > 1 && (rest.is_empty() || rest.starts_with('/')) => {
            format!("~{rest}")
        }
        _ => owner.to_owned(),
    };
    format!("persist:{}", shown(&owner))
}

/// The width of the terminal `ls` prints to, if it prints to one; a pipe gets whole rows.
fn terminal_width() -> Option<usize> {
    let size = rustix::termios::tcgetwinsize(std::io::stdout()).ok()?;
    (size.ws_col > 0).then_some(usize::from(size.ws_col))
}

/// The sessions as a table: a column for where each lives, one for its sandbox only if
/// one is sandboxed. Given a `width` (a terminal's), every row fits in it: a long status
/// or prompt is cut to its start, a long place to its end (the project's own directory),
/// and the command to what is left; when the command would still get less than
/// [`COMMAND_ROOM`], the place and then the prompt give up more.
fn table(rows: &[(String, Listing)], width: Option<usize>) -> String {
    let table_width = width.unwrap_or(usize::MAX);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let sandboxed = rows.iter().any(|(_, s)| s.sandbox != "none");
    let mut header = vec!["ID", "STATUS", "AGE", "UNREAD", "WHERE"];
    // Each column's widest cut before the table is squeezed: the status, the place and
    // the prompt are cut to these.
    let narrow = |cap: usize| if width.is_some() { cap } else { usize::MAX };
    let mut caps = vec![usize::MAX, narrow(17), usize::MAX, usize::MAX, narrow(20)];
    if sandboxed {
        header.push("SANDBOX");
        caps.push(usize::MAX);
    }
    header.extend(["PROMPT", "COMMAND"]);
    caps.extend([narrow(20), usize::MAX]);
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|(place, s)| {
            let mut row = vec![
                shown(&s.id).into_owned(),
                shown(&s.status).into_owned(),
                age(now.saturating_sub(s.started_at_ms) / 1000),
                s.unread_lines.to_string(),
                place.clone(),
            ];
            if sandboxed {
                row.push(shown(&s.sandbox).into_owned());
            }
            let prompt = s
                .prompt_pending
                .then(|| shown(s.pending.trim()).into_owned());
            row.push(prompt.unwrap_or_default());
            row.push(shown(&s.command).into_owned());
            row
        })
        .collect();
    let last = header.len() - 1;
    let mut widths: Vec<usize> = (0..last)
        .map(|column| {
            cells
                .iter()
                .map(|row| row[column].chars().count().min(caps[column]))
                .chain([header[column].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    // The place first, then the prompt, down to a dozen characters each.
    for column in [4, last - 1] {
        let used: usize = widths.iter().map(|w| w + 2).sum();
        let over = (used + COMMAND_ROOM).saturating_sub(table_width);
        let floor = header[column].len().max(12);
        widths[column] -= over.min(widths[column].saturating_sub(floor));
    }
    let command_room = table_width
        .saturating_sub(widths.iter().map(|w| w + 2).sum::<usize>())
        .max(COMMAND_ROOM);
    let line = |cells: &[&str]| {
        let mut out = String::new();
        for (column, (cell, &width)) in cells.iter().zip(&widths).enumerate() {
            let cell = if column == 4 {
                cut_start(cell, width)
            } else {
                cut(cell, width)
            };
            out.push_str(&cell);
            out.push_str(&" ".repeat(width - cell.chars().count() + 2));
        }
        out.push_str(&cut(cells[last], command_room));
        // Only cells past any sense (a count of a billion lines) get here.
        let mut out = cut(out.trim_end(), table_width);
        out.push('\n');
        out
    };
    let mut out = line(&header);
    for row in &cells {
        out.push_str(&line(&row.iter().map(String::as_str).collect::<Vec<_>>()));
    }
    out
}

/// `text` in at most `chars` characters: `…` and its end if it is longer.
fn cut_start(text: &str, chars: usize) -> String {
    let count = text.chars().count();
    if count <= chars {
        return text.to_owned();
    }
    let end: String = text.chars().skip(count + 1 - chars.max(1)).collect();
    format!("…{end}")
}

/// The fewest columns the command gets before the other columns give up room.
const COMMAND_ROOM: usize = 16;

/// `text` in at most `chars` characters: its start and `…` if it is longer.
fn cut(text: &str, chars: usize) -> String {
    if text.chars().count() <= chars {
        return text.to_owned();
    }
    let start: String = text.chars().take(chars.saturating_sub(1)).collect();
    format!("{start}…")
}

fn age(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        _ => format!("{}h{}m", secs / 3600, secs / 60 % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(id: &str, pending: &str, command: &str, sandbox: &str) -> Listing {
        Listing {
            id: id.to_owned(),
            command: command.to_owned(),
            pid: 1,
            status: "running".to_owned(),
            running: true,
            started_at_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            unread_lines: 3,
            pending: pending.to_owned(),
            prompt_pending: !pending.is_empty(),
            alt_screen: false,
            sandbox: sandbox.to_owned(),
            owner: None,
        }
    }

    /// An 80-column terminal.
    const TABLE_WIDTH: usize = 80;

    #[test]
    fn the_table_fits_80_columns_and_keeps_what_a_prompt_asks() {
        let long = "cargo build --release --workspace --all-targets && ./target/release/x";
        let rows = vec![
            (
                "persist:~/src/a-rather-long-project-name".to_owned(),
                listing("k3v8q2mx", "Password for build@host: ", long, "none"),
            ),
            (
                "serve".to_owned(),
                listing("p7k2m9q4", ">>> ", "python3", "none"),
            ),
        ];
        let out = table(&rows, Some(TABLE_WIDTH));
        for line in out.lines() {
            assert!(line.chars().count() <= TABLE_WIDTH, "{line:?}");
        }
        assert!(
            out.contains("Password for"),
            "what is asked comes first: {out}"
        );
        assert!(out.contains("cargo build"), "{out}");
        assert!(out.contains("…roject-name"), "a place keeps its end: {out}");
        assert!(!out.contains("SANDBOX"), "no sandbox, no column: {out}");
        let header = out.lines().next().unwrap();
        let command_at = header.find("COMMAND").unwrap();
        let row = out.lines().nth(2).unwrap();
        assert_eq!(row.find("python3"), Some(command_at), "{out}");
    }

    #[test]
    fn the_longest_cells_still_fit() {
        let mut session = listing("k3v8q2mx", &"x".repeat(300), &"y".repeat(300), "read-only");
        session.status = "killed by SIGKILL".to_owned();
        session.unread_lines = 123_456_789;
        let rows = vec![("persist:".to_owned() + &"z".repeat(200), session)];
        for line in table(&rows, Some(TABLE_WIDTH)).lines() {
            assert!(line.chars().count() <= TABLE_WIDTH, "{line:?}");
        }
    }

    #[test]
    fn a_pipe_gets_whole_rows() {
        let long = "y".repeat(300);
        let rows = vec![("serve".to_owned(), listing("k3v8q2mx", "$ ", &long, "none"))];
        assert!(table(&rows, None).lines().nth(1).unwrap().ends_with(&long));
    }

    #[test]
    fn a_sandboxed_session_brings_its_column() {
        let rows = vec![(
            "serve".to_owned(),
            listing("k3v8q2mx", "$ ", "bash", "workspace"),
        )];
        let out = table(&rows, Some(TABLE_WIDTH));
        assert!(out.lines().next().unwrap().contains("SANDBOX"), "{out}");
        assert!(out.contains("workspace"), "{out}");
    }

    #[test]
    fn ages_and_cuts() {
        assert_eq!(age(59), "59s");
        assert_eq!(age(61), "1m");
        assert_eq!(age(3 * 3600 + 120), "3h2m");
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("abc", 4), "abc");
        assert_eq!(cut_start("abcdef", 4), "…def");
    }
}
