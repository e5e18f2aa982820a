// Helpers of the package's tests: a service per test, and processes looked up in /proc.
import { readFileSync } from 'node:fs'

import { PtyService } from '../index.mjs'

/** A fresh service; `t.after` shuts it down, so no test leaves a session behind. */
export function service(t, config) {
  const pty = new PtyService(config)
  t.after(() => pty.shutdown())
  return pty
}

/** Whether process `pid` still runs (a zombie, dead and waiting to be reaped, does not). */
export function alive(pid) {
  let stat
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return false
  }
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
  return state !== 'Z' && state !== 'X'
}

/** Waits until none of `pids` runs; throws naming those still running after `ms`. */
export async function allGone(pids, ms = 10_000) {
  const deadline = Date.now() + ms
  for (;;) {
    const left = pids.filter(alive)
    if (left.length === 0) return
    if (Date.now() > deadline) throw new Error(`still running after ${ms} ms: ${left.join(', ')}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Expects `promise` (or the call `f`) to fail with an Error whose code is `code`. */
export async function rejectsWith(promiseOrFn, code) {
  try {
    await (typeof promiseOrFn === 'function' ? promiseOrFn() : promiseOrFn)
  } catch (err) {
    if (!(err instanceof Error)) throw new Error(`not an Error: ${err}`)
    if (err.code !== code) throw new Error(`expected ${code}, got ${err.code}: ${err.message}`)
    return err
  }
  throw new Error(`expected ${code}, but the call succeeded`)
}
