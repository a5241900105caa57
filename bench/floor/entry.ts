// Runs bench/floor/sshTrue.ts's bundle (floor.cjs beside this file) through the CLI's code cache.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { runWithCodeCache } from '../../src/cli/codeCache';

const dir = path.dirname(fileURLToPath(import.meta.url));
const filename = path.join(dir, 'floor.cjs');
const run = runWithCodeCache<{ main: (argv: string[]) => Promise<number> }>({ source: readFileSync(filename, 'latin1'), filename, cacheDir: dir, prefix: 'floor', key: 'true' });
process.exitCode = await run.exports.main(process.argv);
run.save();
