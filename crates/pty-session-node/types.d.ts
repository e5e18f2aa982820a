/* The argument and result types of pty-session's calls: the MCP tools' arguments and
 * results (docs/tools.md), under the same camelCase names. The class below is generated
 * from the Rust sources by napi-rs. */

/** What ends a wait: "exit", an input wait ("input"; over ssh "prompt"), an `until`
 * match ("match"), quiet ("quiet"), the timeout ("timeout"), or none ("none"). */
export type SettledBy = 'exit' | 'input' | 'prompt' | 'match' | 'quiet' | 'timeout' | 'none'

/** The settle options and reply budgets that open, send and tail take. */
export interface SettleOptions {
  /** "auto" (default): return at exit, an input wait, an `until` match or the timeout;
   * "quiet": ignore input waits, return after quietMs without output; "none": return
   * after the write. */
  settle?: 'auto' | 'quiet' | 'none'
  /** A regex: also return when a new line or the pending line matches it. */
  until?: string
  /** Milliseconds without output that count as quiet (default 300). */
  quietMs?: number
  /** The longest wait in ms (default 5000); for send it also bounds the write. */
  timeoutMs?: number
  /** The most lines in the reply (default 200); the newest come, skipped counts the rest. */
  lines?: number
  /** The most bytes of lines in the reply (default 32768); a longer line is cut to it. */
  maxBytes?: number
}

/** The arguments of `open` (pty_open's). */
export interface OpenRequest extends SettleOptions {
  /** The command line, e.g. "python3 -q" (run by /bin/sh -c). */
  command: string
  /** The working directory (default: the process's). */
  cwd?: string
  /** Environment variables, name to value, set literally. */
  env?: Record<string, string>
  /** Terminal width (default 120). */
  cols?: number
  /** Terminal height (default 40). */
  rows?: number
  /** Whether the terminal echoes input (default true). */
  echo?: boolean
  /** "none" (default), "workspace" or "read-only". */
  sandbox?: 'none' | 'workspace' | 'read-only'
}

/** The arguments of `send` (pty_send's, less `id`): give `data` or `keys`. */
export interface SendRequest extends SettleOptions {
  /** Text to type, written exactly (at most 1 MiB; "\u0003" is Ctrl-C). */
  data?: string
  /** Keys to press, tmux names: Enter, Tab, Escape, Up, C-c, M-x, F1..F12, ... */
  keys?: string[]
  /** Press Enter after (default true with data, false with keys). */
  submit?: boolean
  /** Resize to this many columns first. */
  cols?: number
  /** Resize to this many rows first. */
  rows?: number
  /** Read the new lines into delta (default true); false only types. */
  read?: boolean
}

/** The arguments of `tail` (pty_tail's, less `id`). */
export interface TailRequest extends SettleOptions {
  /** Re-read lines from this number on, leaving unread lines unread. */
  from?: number
}

/** The arguments of `screen`. */
export interface ScreenRequest {
  /** Also return frame, for terminal viewers (default false). */
  frame?: boolean
}

/** The options of `new PtyService(config)`. */
export interface PtyServiceConfig {
  /** The helper executable that forks the sessions' processes (absolute path). Default:
   * $PTY_SESSION_SPAWNER_PATH, else the `pty-session-spawner` built beside the addon. */
  spawner?: string
  /** Lines a reply returns at most when the call gives no budget (default 200). */
  tailLines?: number
  /** Bytes of lines a reply returns at most when the call gives no budget (default 32768). */
  tailBytes?: number
  /** Completed lines a session keeps (default 10000). */
  scrollbackLines?: number
  /** Bytes of completed lines a session keeps (default 8 MiB). */
  scrollbackBytes?: number
  /** Running sessions an owner may have at once (default 32). */
  maxSessionsPerOwner?: number
  /** Running sessions the service may have at once (default 1024). */
  maxSessions?: number
  /** Exited sessions an owner keeps readable (default 32). */
  maxExitedPerOwner?: number
  /** How long close waits after SIGHUP/SIGTERM before SIGKILL (default 500). */
  closeGraceMs?: number
  /** Environment defaults merged over the built-in ones; "" removes one. */
  defaultEnv?: Record<string, string>
}

/** How a process ended, present once it has. */
export interface ExitFields {
  /** "running" or "exited". */
  status: 'running' | 'exited'
  /** The exit code, once exited normally. */
  exitCode?: number
  /** The signal that killed it, e.g. "SIGKILL". */
  signal?: string
}

/** A cursor position. */
export interface CursorPosition {
  /** The row, 0 at the top. */
  row: number
  /** The column, 0 at the left. */
  col: number
}

/** What the read budget left out, common to open, send and tail. */
export interface Budgeted {
  /** The unfinished last line (a prompt); "" if none. */
  pending: string
  /** Whether unread lines were left out. */
  truncated: boolean
  /** How many unread lines were left out (the cursor never resends them). */
  skipped: number
  /** Lines cut to maxBytes. */
  cutLines: number
}

/** The result of `open` (pty_open's). */
export interface OpenResult extends ExitFields, Budgeted {
  /** The id for the other calls. */
  sessionId: string
  /** The process id. */
  pid: number
  /** The completed lines so far, each ending in "\n". */
  initialOutput: string
  /** What ended the wait. */
  settledBy: SettledBy
  /** True while a full-screen program has the alternate screen on. */
  altScreen?: boolean
  /** While altScreen: the visible rows. */
  screen?: string
  /** While altScreen: the cursor. */
  cursor?: CursorPosition
}

/** The result of `send` (pty_send's). */
export interface SendResult extends ExitFields, Budgeted {
  /** The lines not delivered before, each ending in "\n"; absent with read false. */
  delta?: string
  /** What ended the wait. */
  settledBy: SettledBy
  /** True while a full-screen program has the alternate screen on. */
  altScreen?: boolean
  /** While altScreen: the visible rows. */
  screen?: string
  /** While altScreen: the cursor. */
  cursor?: CursorPosition
}

/** The result of `tail` (pty_tail's). */
export interface TailResult extends ExitFields, Budgeted {
  /** The unread lines (with from: the re-read ones), each ending in "\n". */
  text: string
  /** How many lines `text` holds. */
  lines: number
  /** Lines completed since the start. */
  totalLines: number
  /** The number of the oldest kept line (from 0). */
  lineBegin: number
  /** One past the newest kept line (= totalLines). */
  lineEnd: number
  /** What ended the wait, if it waited. */
  settledBy?: SettledBy
  /** True while a full-screen program has the alternate screen on. */
  altScreen?: boolean
}

/** The result of `screen` (pty_screen's). */
export interface ScreenResult extends ExitFields {
  /** The visible rows, trailing blanks trimmed, joined by "\n". */
  screen: string
  /** Where the cursor is. */
  cursor: CursorPosition
  /** The terminal's width. */
  cols: number
  /** The terminal's height. */
  rows: number
  /** Whether a full-screen program has the alternate screen on. */
  altScreen: boolean
  /** With frame true: ANSI bytes that redraw the screen in its colours. */
  frame?: string
}

/** One session in `list`. */
export interface ListedSession extends ExitFields {
  /** The session's id. */
  id: string
  /** The command it was opened with. */
  command: string
  /** The pid of its process. */
  pid: number
  /** Its working directory. */
  cwd: string
  /** When it was opened (RFC 3339, UTC). */
  startedAt: string
  /** Lines not yet delivered. */
  unreadLines: number
  /** The unfinished last line (a prompt); "" if none. */
  pending: string
  /** Whether a full-screen program has the alternate screen on. */
  altScreen: boolean
  /** The sandbox it runs in. */
  sandbox: 'none' | 'workspace' | 'read-only'
}

/** The result of `list`. */
export interface ListResult {
  /** The owner's sessions, oldest first, exited ones until closed. */
  sessions: ListedSession[]
}

/** The result of `close`. */
export interface CloseResult {
  /** False if it was already closed or never existed. */
  closed: boolean
}

/** The error of every failed call: an `Error` with the library's code. */
export interface PtyError extends Error {
  /** FOREIGN_SESSION, UNKNOWN_SESSION, INVALID_ARGUMENT, SPAWN_FAILED, SESSION_LIMIT,
   * NOT_RUNNING, WRITE_TIMEOUT, CANCELLED or SANDBOX_UNAVAILABLE. */
  code: string
}
