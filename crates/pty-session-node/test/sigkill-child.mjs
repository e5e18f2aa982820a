// Run by facade.test.mjs: opens sessions whose shells have grandchildren, prints every
// pid as one JSON line, then waits to be SIGKILLed.
import { PtyService } from '../index.mjs'

const pty = new PtyService()
const pids = []
for (let i = 0; i < 3; i++) {
  const opened = await pty.open('doomed', { command: 'sleep 1000 & echo kid $!; setsid sleep 1000 & echo kid $!; wait', until: 'kid' })
  let text = opened.initialOutput
  while ([...text.matchAll(/^kid (\d+)$/gm)].length < 2) {
    text += (await pty.tail('doomed', opened.sessionId, { until: 'kid', timeoutMs: 2000 })).text
  }
  pids.push(opened.pid, ...[...text.matchAll(/^kid (\d+)$/gm)].map((m) => Number(m[1])))
}
process.stdout.write(JSON.stringify(pids) + '\n')
setInterval(() => {}, 1000)
