// The ten lines of README's "From JavaScript/TypeScript": python answers 6*7.
import { PtyService } from 'pty-session'

const pty = new PtyService()
const { sessionId } = await pty.open('agent-1', { command: 'python3 -q' })
const { delta, settledBy } = await pty.send('agent-1', sessionId, { data: '6*7' })
console.log(JSON.stringify({ delta, settledBy }))
await pty.close('agent-1', sessionId)
