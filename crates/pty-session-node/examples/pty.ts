// The facade a consumer is handed, as the harness injects it (`ctx.pty`): the calls a
// consumer uses, typed by the package's own declarations.
import type { PtyService } from 'pty-session'

/** What a consumer module gets: `open`, `send`, `tail`, `close` and `dispose`. */
export type Pty = Pick<PtyService, 'open' | 'send' | 'tail' | 'close' | 'dispose'>
