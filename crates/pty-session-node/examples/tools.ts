// A small agent-tool wrapper around the facade, the way a harness exposes it to a model:
// four tools whose arguments and answers are plain JSON, errors included.
import type { Pty } from './pty.js'

/** A tool a model may call: its name, what it does, and the call. */
export interface AgentTool {
  name: string
  description: string
  run(args: Record<string, unknown>, signal?: AbortSignal): Promise<unknown>
}

/** A failed call as the model sees it: the code and the message. */
export interface ToolError {
  error: { code: string; message: string }
}

function str(args: Record<string, unknown>, key: string): string {
  const value = args[key]
  if (typeof value !== 'string') throw Object.assign(new Error(`${key}: must be a string`), { code: 'INVALID_ARGUMENT' })
  return value
}

async function answer(call: () => Promise<unknown>): Promise<unknown> {
  try {
    return await call()
  } catch (err) {
    const { code = 'INTERNAL', message = String(err) } = err as { code?: string; message?: string }
    return { error: { code, message } } satisfies ToolError
  }
}

/** The tools for one agent (`owner`), over `pty`. */
export function agentTools(pty: Pty, owner: string): AgentTool[] {
  return [
    {
      name: 'pty_open',
      description: 'Start a command on its own terminal; returns its sessionId and first output.',
      run: (args, signal) => answer(() => pty.open(owner, { command: str(args, 'command') }, signal)),
    },
    {
      name: 'pty_send',
      description: 'Type a line into a session; returns the new output once it settled.',
      run: (args, signal) => answer(() => pty.send(owner, str(args, 'id'), { data: str(args, 'data') }, signal)),
    },
    {
      name: 'pty_tail',
      description: 'Read output that arrived since the last reply.',
      run: (args, signal) =>
        answer(() => pty.tail(owner, str(args, 'id'), typeof args.lines === 'number' ? args.lines : undefined, signal)),
    },
    {
      name: 'pty_close',
      description: "Kill a session's whole process tree.",
      run: (args) => answer(() => pty.close(owner, str(args, 'id'))),
    },
  ]
}
