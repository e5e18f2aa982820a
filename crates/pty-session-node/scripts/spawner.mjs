// Puts the package's spawner executable (`pty-session-spawner`, the helper the addon
// starts to fork its sessions' processes) beside the addon, where the addon looks for it,
// built with the addon's profile.
//
//   node scripts/spawner.mjs release|debug            builds it, then copies it here
//   node scripts/spawner.mjs debug --built --addon    copies what `cargo build --workspace`
//                                                     already built, the addon too (CI)
import { execFileSync } from 'node:child_process'
import { chmodSync, copyFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const profile = process.argv[2] === 'release' ? 'release' : 'debug'
const built = process.argv.includes('--built')
const addon = process.argv.includes('--addon')
const here = dirname(dirname(fileURLToPath(import.meta.url)))
// `napi build` builds for the host's triple by name (`--target`), into target/<triple>/:
// the spawner is built the same way, so that it shares the addon's dependencies instead
// of building them all again; what `cargo build --workspace` built is under target/.
const host = /^host: (.+)$/m.exec(execFileSync('rustc', ['-vV'], { encoding: 'utf8' }))[1]
if (!built) {
  const args = ['build', '-p', 'pty-session-node', '--bin', 'pty-session-spawner', '--target', host]
  if (profile === 'release') args.push('--release')
  execFileSync('cargo', args, { cwd: here, stdio: 'inherit' })
}
const metadata = JSON.parse(
  execFileSync('cargo', ['metadata', '--format-version', '1', '--no-deps'], { cwd: here, encoding: 'utf8' }),
)
const dir = built ? join(metadata.target_directory, profile) : join(metadata.target_directory, host, profile)
copyFileSync(join(dir, 'pty-session-spawner'), join(here, 'pty-session-spawner'))
chmodSync(join(here, 'pty-session-spawner'), 0o755)
if (addon) {
  // The file name the generated loader (index.js) looks for on this machine.
  copyFileSync(join(dir, 'libpty_session_node.so'), join(here, `pty-session.linux-${process.arch}-gnu.node`))
}
