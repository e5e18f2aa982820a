// The ESM entry point: the CommonJS binding, re-exported by name.
import { createRequire } from 'node:module'

const binding = createRequire(import.meta.url)('./index.js')

export const { PtyService } = binding
export default binding
