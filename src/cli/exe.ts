// The main script of the standalone executable (scripts/build-cli-exe.mjs). Node runs it as
// CommonJS, as single executable applications require; it runs the CLI bundle, an asset of the
// executable, through the same per-command V8 code cache as the npm bundle (codeCache.ts),
// kept with this build's embedded files in the user's Holdfast home (core/standalone.ts).
import path from 'node:path';
import { standaloneAsset, standaloneRoot } from '../core/standalone';
import { cacheKey, runWithCodeCache } from './codeCache';

const CLI_ASSET = 'holdfast.cjs'; // scripts/build-cli-exe.mjs embeds it under this name

type Cli = { main: (argv: string[]) => Promise<number> };

const root = standaloneRoot();
const source = standaloneAsset(CLI_ASSET);
if (!root || source === null) throw new Error('this script runs only inside the standalone holdfast executable');
const run = runWithCodeCache<Cli>({
  source,
  filename: process.execPath,
  cacheDir: path.join(root, 'code-cache'),
  prefix: `${process.version}-${process.arch}`,
  key: cacheKey(process.argv.slice(2)),
});
void run.exports.main(process.argv).then((code) => {
  process.exitCode = code;
  run.save();
});
