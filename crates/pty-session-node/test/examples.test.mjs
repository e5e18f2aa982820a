// The TypeScript consumer examples (compiled by `tsc -p examples` before the tests run),
// driven through a real service: gdb to a breakpoint, and the agent-tool wrapper.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'

import { service } from './helpers.mjs'

const require = createRequire(import.meta.url)
const { runToBreakpoint } = require('../build/examples/gdb.js')
const { agentTools } = require('../build/examples/tools.js')

test('the gdb consumer runs a program to a breakpoint and ends gdb with -gdb-exit', async (t) => {
  for (const tool of ['gdb', 'gcc']) {
    try {
      execFileSync(tool, ['--version'], { stdio: 'ignore' })
    } catch {
      throw new Error(`this test needs ${tool} (CI installs it)`)
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'pty-node-gdb-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'prog.c'), 'int twice(int x) {\n  return 2 * x;\n}\n\nint main(void) {\n  return twice(21) - 42;\n}\n')
  execFileSync('gcc', ['-g', '-O0', '-o', join(dir, 'prog'), join(dir, 'prog.c')])
  const pty = service(t)
  const stop = await runToBreakpoint(pty, 'gdb-agent', join(dir, 'prog'), 'twice')
  assert.deepEqual(stop, { func: 'twice', line: 2, ended: 'exit' })
  assert.deepEqual(pty.list('gdb-agent').sessions, [])
})

test('the agent tools open, send, tail and close, and answer errors as data', async (t) => {
  const pty = service(t)
  const tools = Object.fromEntries(agentTools(pty, 'model').map((tool) => [tool.name, tool]))
  const opened = await tools.pty_open.run({ command: 'python3 -q' })
  assert.equal(opened.pending, '>>> ')
  const sent = await tools.pty_send.run({ id: opened.sessionId, data: '6*7' })
  assert.equal(sent.delta, '>>> 6*7\n42\n')
  assert.equal(sent.settledBy, 'input')
  const tail = await tools.pty_tail.run({ id: opened.sessionId, lines: 10 })
  assert.equal(tail.text, '')
  assert.deepEqual(await tools.pty_close.run({ id: opened.sessionId }), { closed: true })
  const gone = await tools.pty_send.run({ id: opened.sessionId, data: '1' })
  assert.equal(gone.error.code, 'UNKNOWN_SESSION')
  const bad = await tools.pty_send.run({ id: 5, data: '1' })
  assert.equal(bad.error.code, 'INVALID_ARGUMENT')
})

test("README's ten lines, in TypeScript: python answers 42, settled by input", () => {
  const script = fileURLToPath(new URL('../build/examples/hello.mjs', import.meta.url))
  const out = execFileSync(process.execPath, [script], { encoding: 'utf8', timeout: 30_000 })
  assert.deepEqual(JSON.parse(out), { delta: '>>> 6*7\n42\n', settledBy: 'input' })
})
