// Builds the package's spawner executable (`pty-session-spawner`, the helper the addon
// starts to fork its sessions' processes) with the addon's profile and puts it beside the
// addon, where the addon looks for it. Usage: node scripts/spawner.mjs release|debug
import { execFileSync } from 'node:child_process'
import { copyFileSync, chmodSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const profile = process.argv[2] === 'release' ? 'release' : 'debug'
const here = dirname(dirname(fileURLToPath(import.meta.url)))
const args = ['build', '-p', 'pty-session-node', '--bin', 'pty-session-spawner']
if (profile === 'release') args.push('--release')
execFileSync('cargo', args, { cwd: here, stdio: 'inherit' })
const metadata = JSON.parse(
  execFileSync('cargo', ['metadata', '--format-version', '1', '--no-deps'], { cwd: here, encoding: 'utf8' }),
)
const built = join(metadata.target_directory, profile, 'pty-session-spawner')
const placed = join(here, 'pty-session-spawner')
copyFileSync(built, placed)
chmodSync(placed, 0o755)
