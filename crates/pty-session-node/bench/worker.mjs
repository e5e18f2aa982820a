// The benchmark's Node.js run (crates/pty-session-bench, src/node.rs): the package's
// calls timed inside node, one round per request line, so that its rows stand beside the
// library's, MCP's and the raw PTY's in the same run.
//
//   node bench/worker.mjs <python>     then, one per line on stdin:
//   echo <data>   → "<ns> <whole 0|1>"  a `send` of <data> to `cat`
//   repl          → "<ns> <whole 0|1>"  `6*7` to python
// The first line out is "ready" (or the error that kept it from starting).
import { createInterface } from 'node:readline'

import { PtyService } from '../index.mjs'

const python = process.argv[2] ?? 'python3'
const pty = new PtyService()
const owner = 'bench'
let cat, repl
try {
  cat = (await pty.open(owner, { command: 'cat' })).sessionId
  repl = (await pty.open(owner, { command: `${python} -q` })).sessionId
} catch (err) {
  process.stdout.write(`error ${err.code}: ${err.message}\n`)
  process.exit(1)
}
process.stdout.write('ready\n')
for await (const line of createInterface({ input: process.stdin })) {
  const [command, ...rest] = line.split(' ')
  const data = rest.join(' ')
  if (command === 'echo') {
    const start = process.hrtime.bigint()
    const sent = await pty.send(owner, cat, { data })
    const ns = process.hrtime.bigint() - start
    const whole = sent.delta === `${data}\n${data}\n` && sent.settledBy === 'input'
    process.stdout.write(`${ns} ${whole ? 1 : 0}\n`)
  } else if (command === 'repl') {
    const start = process.hrtime.bigint()
    const sent = await pty.send(owner, repl, { data: '6*7' })
    const ns = process.hrtime.bigint() - start
    const whole = sent.delta === '>>> 6*7\n42\n' && sent.pending === '>>> ' && sent.settledBy === 'input'
    process.stdout.write(`${ns} ${whole ? 1 : 0}\n`)
  } else {
    break
  }
}
await pty.shutdown()
