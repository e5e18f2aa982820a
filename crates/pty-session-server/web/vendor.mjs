// Refreshes vendor/ from the xterm.js that `npm ci` installed (pinned, with its
// integrity, by package-lock.json), and writes vendor/manifest.json: the package, its
// version and integrity as the lock has them, and each vendored file's source and sha256.
// The server's tests check the vendored files against that manifest and the lock.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";

const name = "@xterm/xterm";
const installed = `node_modules/${name}`;
const locked = JSON.parse(readFileSync("package-lock.json", "utf8")).packages[installed];
const version = JSON.parse(readFileSync(`${installed}/package.json`, "utf8")).version;
if (version !== locked.version) {
  throw new Error(`${name} ${version} is installed but the lock pins ${locked.version}: run npm ci`);
}

// The source map is not shipped, so the comment pointing to it goes (a browser would ask
// the server for it).
const noSourceMap = (text) => text.replace(/\/\/# sourceMappingURL=\S+\s*$/, "");
const files = [
  { file: "xterm.js", from: "lib/xterm.js", change: "the trailing sourceMappingURL comment dropped", edit: noSourceMap },
  { file: "xterm.css", from: "css/xterm.css" },
  { file: "xterm-LICENSE", from: "LICENSE" },
];

const manifest = { package: name, version, integrity: locked.integrity, files: [] };
for (const { file, from, change, edit } of files) {
  let text = readFileSync(`${installed}/${from}`, "utf8");
  if (edit) text = edit(text);
  writeFileSync(`vendor/${file}`, text);
  const sha256 = createHash("sha256").update(text, "utf8").digest("hex");
  manifest.files.push(change ? { file, from, change, sha256 } : { file, from, sha256 });
}
writeFileSync("vendor/manifest.json", JSON.stringify(manifest, null, 2) + "\n");
