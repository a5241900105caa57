// Runs one of bench/floor's bundles beside this file through the CLI's code cache:
//   entry.mjs true  HOST PORT USER KEY FINGERPRINT            (sshTrue.ts)
//   entry.mjs names HOST PORT USER KEY KNOWN_HOSTS SOCKET     (listNames.ts)
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { runWithCodeCache } from '../../src/cli/codeCache';

const PROGRAMS = { true: 'floor.cjs', names: 'names.cjs' } as const;
const which = process.argv[2] as keyof typeof PROGRAMS;
if (!Object.hasOwn(PROGRAMS, which)) throw new Error(`usage: entry.mjs ${Object.keys(PROGRAMS).join('|')} ARGS…`);
const dir = path.dirname(fileURLToPath(import.meta.url));
const filename = path.join(dir, PROGRAMS[which]);
const run = runWithCodeCache<{ main: (argv: string[]) => Promise<number> }>({ source: readFileSync(filename, 'latin1'), filename, cacheDir: dir, prefix: 'floor', key: which });
process.exitCode = await run.exports.main(process.argv);
run.save();
