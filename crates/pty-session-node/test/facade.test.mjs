// The facade from JavaScript: real programs on real PTYs through the addon.
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { getEventListeners, once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'

import { PtyService } from '../index.mjs'
import { allGone, alive, rejectsWith, service } from './helpers.mjs'

test('echo round trip: python answers 42, settled by its input wait', async (t) => {
  const pty = service(t)
  const opened = await pty.open('agent', { command: 'python3 -q' })
  assert.equal(opened.pending, '>>> ')
  assert.equal(opened.status, 'running')
  const sent = await pty.send('agent', opened.sessionId, { data: '6*7' })
  assert.equal(sent.delta, '>>> 6*7\n42\n')
  assert.equal(sent.settledBy, 'input')
  assert.deepEqual(await pty.close('agent', opened.sessionId), { closed: true })
})

test('the CommonJS entry point is the same class', async () => {
  const { createRequire } = await import('node:module')
  const required = createRequire(import.meta.url)('../index.js')
  assert.equal(required.PtyService, PtyService)
})

test('owners: another owner gets FOREIGN_SESSION, an unknown id UNKNOWN_SESSION', async (t) => {
  const pty = service(t)
  const { sessionId } = await pty.open('alice', { command: 'cat' })
  await rejectsWith(pty.send('bob', sessionId, { data: 'x' }), 'FOREIGN_SESSION')
  await rejectsWith(pty.tail('bob', sessionId), 'FOREIGN_SESSION')
  await rejectsWith(() => pty.screen('bob', sessionId), 'FOREIGN_SESSION')
  await rejectsWith(pty.close('bob', sessionId), 'FOREIGN_SESSION')
  await rejectsWith(pty.tail('alice', 'nosuchid'), 'UNKNOWN_SESSION')
  assert.deepEqual(pty.list('bob').sessions, [])
  const listed = pty.list('alice').sessions
  assert.equal(listed.length, 1)
  assert.equal(listed[0].id, sessionId)
  assert.equal(listed[0].command, 'cat')
})

test('the cursor never resends a line, and a small budget counts what it skipped', async (t) => {
  const pty = service(t)
  const { sessionId } = await pty.open('agent', { command: 'sh', settle: 'none' })
  await pty.send('agent', sessionId, { data: 'for i in $(seq 1 50); do echo line$i; done', lines: 1, until: 'line50' })
  // Everything was read (the budget only chose what to show): nothing is left unread.
  const after = await pty.tail('agent', sessionId)
  assert.equal(after.text, '')
  await pty.send('agent', sessionId, { data: 'seq 101 130', until: '^130$', read: false })
  const small = await pty.tail('agent', sessionId, 5)
  assert.equal(small.lines, 5)
  assert.ok(small.truncated)
  assert.ok(small.skipped >= 25, `skipped ${small.skipped}`)
  assert.match(small.text, /130\n$/)
  const again = await pty.tail('agent', sessionId, { lines: 100 })
  assert.equal(again.text, '', 'skipped lines are not delivered later')
  const reread = await pty.tail('agent', sessionId, { from: small.lineEnd - 2 })
  assert.equal(reread.text, '129\n130\n')
})

test('each settle reason', async (t) => {
  const pty = service(t)
  const exit = await pty.open('agent', { command: 'echo done; exit 3' })
  assert.equal(exit.settledBy, 'exit')
  assert.equal(exit.status, 'exited')
  assert.equal(exit.exitCode, 3)
  const shell = await pty.open('agent', { command: 'sh' })
  assert.equal(shell.settledBy, 'input')
  const id = shell.sessionId
  const match = await pty.send('agent', id, { data: 'echo ab""cd; sleep 5', until: 'abcd' })
  assert.equal(match.settledBy, 'match')
  const timeout = await pty.tail('agent', id, { timeoutMs: 300 })
  assert.equal(timeout.settledBy, 'timeout')
  await pty.send('agent', id, { data: '\u0003', submit: false })
  const quiet = await pty.send('agent', id, { data: 'echo q', settle: 'quiet', quietMs: 200 })
  assert.equal(quiet.settledBy, 'quiet')
  const none = await pty.send('agent', id, { data: 'echo n', settle: 'none' })
  assert.equal(none.settledBy, 'none')
})

test('an AbortSignal cancels a waiting call with CANCELLED; an aborted one before it starts', async (t) => {
  const pty = service(t)
  const { sessionId } = await pty.open('agent', { command: 'sh' })
  const controller = new AbortController()
  const started = Date.now()
  setTimeout(() => controller.abort(), 200)
  await rejectsWith(pty.send('agent', sessionId, { data: 'sleep 30', timeoutMs: 60_000 }, controller.signal), 'CANCELLED')
  assert.ok(Date.now() - started < 10_000, 'the abort ended the wait')
  await rejectsWith(pty.tail('agent', sessionId, { timeoutMs: 60_000 }, AbortSignal.abort()), 'CANCELLED')
  await rejectsWith(pty.open('agent', { command: 'sh' }, AbortSignal.abort()), 'CANCELLED')
  // Aborted before it starts, a send writes nothing.
  for (let i = 0; i < 10; i++) {
    await rejectsWith(pty.send('agent', sessionId, { data: 'echo never$((1+1))' }, AbortSignal.abort()), 'CANCELLED')
  }
  const typed = await pty.send('agent', sessionId, { data: 'echo after', until: '^after$' })
  assert.doesNotMatch(typed.delta, /never/)
  // One long-lived signal across many calls keeps no listener per call.
  const turn = new AbortController()
  for (let i = 0; i < 20; i++) await pty.tail('agent', sessionId, null, turn.signal)
  const waiting = pty.tail('agent', sessionId, { timeoutMs: 60_000 }, turn.signal)
  assert.equal(getEventListeners(turn.signal, 'abort').length, 1, 'a waiting call listens')
  turn.abort()
  await rejectsWith(waiting, 'CANCELLED')
  assert.equal(getEventListeners(turn.signal, 'abort').length, 0, 'an ended call does not')
  assert.equal(pty.list('agent').sessions.length, 1, 'the cancelled open left no session')
})

test('close is idempotent and dispose closes all of an owner', async (t) => {
  const pty = service(t)
  const { sessionId } = await pty.open('agent', { command: 'cat' })
  assert.deepEqual(await pty.close('agent', sessionId), { closed: true })
  assert.deepEqual(await pty.close('agent', sessionId), { closed: false })
  assert.deepEqual(await pty.close('agent', 'neverwas'), { closed: false })
  const a = await pty.open('agent', { command: 'cat' })
  const b = await pty.open('agent', { command: 'cat' })
  const other = await pty.open('other', { command: 'cat' })
  await pty.dispose('agent')
  assert.deepEqual(pty.list('agent').sessions, [])
  assert.ok(!alive(a.pid) && !alive(b.pid))
  assert.equal(pty.list('other').sessions.length, 1)
  assert.ok(alive(other.pid))
})

/** A shell that starts grandchildren (one in its own session) and prints their pids. */
const TREE = 'sleep 1000 & echo kid $!; setsid sleep 1000 & echo kid $!; sh -c "sleep 1000 & echo kid \\$!; wait" & wait'

function kids(text) {
  return [...text.matchAll(/^kid (\d+)$/gm)].map((m) => Number(m[1]))
}

test('close kills the whole tree, grandchildren in their own sessions too', async (t) => {
  const pty = service(t)
  const opened = await pty.open('agent', { command: TREE, until: '(kid \\d+\\n.*){3}', settle: 'quiet' })
  let text = opened.initialOutput
  while (kids(text).length < 3) text += (await pty.tail('agent', opened.sessionId, { until: 'kid', timeoutMs: 2000 })).text
  const pids = [opened.pid, ...kids(text)]
  assert.ok(pids.every(alive), `all running before close: ${pids}`)
  await pty.close('agent', opened.sessionId)
  await allGone(pids)
})

test('a SIGKILLed node process leaves none of its sessions’ processes behind', async () => {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./sigkill-child.mjs', import.meta.url))], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let out = ''
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (chunk) => (out += chunk))
  const deadline = Date.now() + 30_000
  while (!out.includes('\n') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
  const pids = JSON.parse(out.split('\n')[0])
  assert.ok(pids.length >= 6, `pids: ${pids}`)
  assert.ok(pids.every(alive), 'all running before the kill')
  child.kill('SIGKILL')
  await once(child, 'exit')
  await allGone(pids)
})

test('100 sessions driven concurrently from async code', async (t) => {
  const pty = service(t, { maxSessionsPerOwner: 100 })
  const started = Date.now()
  const answers = await Promise.all(
    Array.from({ length: 100 }, async (_, i) => {
      const { sessionId } = await pty.open('agent', { command: 'cat' })
      const sent = await pty.send('agent', sessionId, { data: `hello ${i}`, until: `^hello ${i}$`, timeoutMs: 30_000 })
      await pty.close('agent', sessionId)
      return sent.delta
    }),
  )
  answers.forEach((delta, i) => assert.equal(delta, `hello ${i}\nhello ${i}\n`))
  assert.ok(Date.now() - started < 60_000)
  assert.deepEqual(pty.list('agent').sessions, [])
})

test('bad arguments are INVALID_ARGUMENT, never a crash', async (t) => {
  const pty = service(t)
  const { sessionId } = await pty.open('agent', { command: 'cat' })
  const bad = [
    () => pty.open(42, { command: 'cat' }),
    () => pty.open('', { command: 'cat' }),
    () => pty.open('agent', 'cat'),
    () => pty.open('agent', {}),
    () => pty.open('agent', { command: 'cat', bogus: true }),
    () => pty.open('agent', { command: 1 }),
    () => pty.open('agent', { command: 'cat', cols: -1 }),
    () => pty.open('agent', { command: 'cat', cols: 100_000 }),
    () => pty.open('agent', { command: 'cat', until: '(' }),
    () => pty.open('agent', { command: 'cat' }, 'not a signal'),
    () => pty.open('agent', { command: 'cat', env: { A: () => 1 } }),
    () => pty.send('agent', sessionId, {}),
    () => pty.send('agent', sessionId, { data: 'x', keys: ['Enter'] }),
    () => pty.send('agent', sessionId, { data: 'x', id: sessionId }),
    () => pty.send('agent', 7, { data: 'x' }),
    () => pty.send('agent', sessionId, null),
    () => pty.tail('agent', sessionId, 'ten'),
    () => pty.tail('agent', sessionId, { lines: 0 }),
    () => pty.tail('agent', sessionId, { from: 'x' }),
    () => pty.screen('agent', sessionId, { frame: 'yes' }),
    () => pty.list(Symbol('x')),
    () => pty.close('agent', {}),
    () => pty.dispose(undefined),
    () => new PtyService({ nope: 1 }),
    () => new PtyService({ maxSessions: 0 }),
    () => new PtyService({ spawner: 'relative/path' }),
    () => new PtyService('config'),
  ]
  for (const [i, call] of bad.entries()) {
    const err = await rejectsWith(call, 'INVALID_ARGUMENT').catch((e) => {
      throw new Error(`bad call ${i} (${call}): ${e.message}`)
    })
    assert.ok(err.message.length > 0)
  }
  // The service still works after all of them.
  const sent = await pty.send('agent', sessionId, { data: 'still here', until: 'still here$' })
  assert.equal(sent.delta, 'still here\nstill here\n')
})

test('the spawner: found beside the addon, named by PTY_SESSION_SPAWNER_PATH, and no program to run by hand', async (t) => {
  const beside = fileURLToPath(new URL('../pty-session-spawner', import.meta.url))
  const byHand = spawnSync(beside, [], { encoding: 'utf8', env: {} })
  assert.equal(byHand.status, 2)
  assert.match(byHand.stderr, /spawner of pty-session services/)
  const saved = process.env.PTY_SESSION_SPAWNER_PATH
  t.after(() => {
    if (saved === undefined) delete process.env.PTY_SESSION_SPAWNER_PATH
    else process.env.PTY_SESSION_SPAWNER_PATH = saved
  })
  process.env.PTY_SESSION_SPAWNER_PATH = '/no/such/spawner'
  const err = await rejectsWith(() => new PtyService(), 'INVALID_ARGUMENT')
  assert.match(err.message, /spawner/)
  process.env.PTY_SESSION_SPAWNER_PATH = beside
  const pty = service(t)
  const { sessionId } = await pty.open('agent', { command: 'cat' })
  assert.equal((await pty.send('agent', sessionId, { data: 'x' })).delta, 'x\nx\n')
  // The option wins over the environment.
  process.env.PTY_SESSION_SPAWNER_PATH = '/no/such/spawner'
  const explicit = service(t, { spawner: beside })
  assert.equal((await explicit.open('agent', { command: 'echo ok' })).initialOutput, 'ok\n')
})
