// out/cli/holdfast.mjs, what bin/holdfast.mjs imports when the bundle is fresh: runs the CLI
// bundle beside it (holdfast.cjs, one CommonJS file) through the V8 code cache (codeCache.ts).
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheKey, runWithCodeCache } from './codeCache';

type Cli = { main: (argv: string[]) => Promise<number> };

export async function main(argv: string[]): Promise<number> {
  const dir = path.dirname(fileURLToPath(import.meta.url));
  const filename = path.join(dir, 'holdfast.cjs');
  const st = statSync(filename);
  const run = runWithCodeCache<Cli>({
    // latin1: the build checks the bundle is ASCII (assertAscii), for which it reads the same as
    // UTF-8 in about half the time.
    source: readFileSync(filename, 'latin1'),
    filename,
    // Beside out/cli, not in it: what npm packs and the desktop packages copy is out/cli, and a
    // cache is only good for the Node that wrote it. An install nobody can write to has none.
    cacheDir: path.join(dir, '..', 'cli-cache'),
    // Per Node version: V8 would reject another's, and two Nodes sharing a checkout would take turns.
    // And per bundle (its size and mtime): V8 checks a cache against the source's length only, so
    // a rebuilt bundle of the same length would run the old bytecode (seen: a message whose one
    // changed letter did not show). The build clears the old caches.
    prefix: `${process.version}-${process.arch}-${st.size}-${Math.trunc(st.mtimeMs)}`,
    key: cacheKey(argv.slice(2)),
    owner: st.uid,
  });
  const code = await run.exports.main(argv);
  run.save();
  return code;
}

// Run directly too (`node out/cli/holdfast.mjs …`, e.g. from a packaged app's resources/cli).
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv);
}
