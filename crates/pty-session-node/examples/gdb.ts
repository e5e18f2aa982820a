// A consumer module shaped like the seed's gdb driver: handed a `pty` facade, it drives
// `gdb -q -i=mi2` over the machine interface to a breakpoint, reads where it stopped, and
// ends gdb with `-gdb-exit`.
import type { Pty } from './pty.js'

/** Where the program stopped at the breakpoint. */
export interface Stop {
  /** The function, e.g. "main". */
  func: string
  /** The source line. */
  line: number
  /** How gdb's session ended: "exit" once `-gdb-exit` was answered. */
  ended: string
}

/** The MI prompt: gdb waits for the next command. */
const PROMPT = '^\\(gdb\\) ?$'

/**
 * Runs `program` under gdb for `owner` until it stops at a breakpoint on `breakpoint`
 * (a function or file:line), then quits gdb. `signal` cancels a wait.
 */
export async function runToBreakpoint(
  pty: Pty,
  owner: string,
  program: string,
  breakpoint: string,
  signal?: AbortSignal,
): Promise<Stop> {
  const opened = await pty.open(owner, { command: `gdb -q -i=mi2 ${program}`, until: PROMPT, timeoutMs: 20_000 }, signal)
  const id = opened.sessionId
  try {
    const inserted = await pty.send(owner, id, { data: `-break-insert ${breakpoint}`, until: PROMPT }, signal)
    if (!/\^done,bkpt=/.test(inserted.delta ?? '')) throw new Error(`no breakpoint: ${inserted.delta}`)
    // `*stopped` is an async record: it may come after the prompt that answered ^running.
    let seen = (await pty.send(owner, id, { data: '-exec-run', until: '^\\*stopped', timeoutMs: 20_000 }, signal)).delta ?? ''
    while (!/^\*stopped/m.test(seen)) {
      const more = await pty.tail(owner, id, { until: '^\\*stopped', timeoutMs: 20_000 }, signal)
      if (more.settledBy === 'timeout' || more.status === 'exited') throw new Error(`gdb never stopped: ${seen}`)
      seen += more.text
    }
    const stopped = seen.split('\n').find((line) => line.startsWith('*stopped')) ?? ''
    const func = /func="([^"]*)"/.exec(stopped)?.[1] ?? ''
    const line = Number(/line="(\d+)"/.exec(stopped)?.[1] ?? NaN)
    const exit = await pty.send(owner, id, { data: '-gdb-exit' }, signal)
    return { func, line, ended: exit.settledBy }
  } finally {
    await pty.close(owner, id)
  }
}
