// Which code `holdfast` runs: the bundle `npm run build:cli` writes (out/cli, starts several
// times faster) or the TypeScript sources through tsx (no build step: `npx holdfast` right
// after `npm ci`). The bundle is used while it is at least as new as every file it was built
// from (out/cli/inputs.json), so a checkout never runs code older than its sources; an
// installed package ships the bundle without the sources. HOLDFAST_CLI=bundle|tsx decides
// instead (the test runner's integration step sets bundle, so a stale or missing bundle fails).
// Plain JavaScript, a few stat() calls: this runs before anything else at every start.
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** @returns {{ kind: 'bundle' | 'tsx', file: string, why: string }} */
export function cliEntry(root, env = process.env) {
  const bundle = path.join(root, 'out', 'cli', 'holdfast.mjs');
  const sources = path.join(root, 'src', 'cli', 'main.ts');
  const tsx = (why) => ({ kind: 'tsx', file: sources, why });
  const built = (why) => ({ kind: 'bundle', file: bundle, why });
  const forced = env.HOLDFAST_CLI;
  if (forced === 'tsx') return tsx('HOLDFAST_CLI=tsx');
  if (forced === 'bundle') {
    if (!existsSync(bundle)) throw new Error(`HOLDFAST_CLI=bundle but ${bundle} is missing: run \`npm run build:cli\``);
    return built('HOLDFAST_CLI=bundle');
  }
  if (forced) throw new Error(`HOLDFAST_CLI must be "bundle" or "tsx", not "${forced}"`);
  if (!existsSync(bundle)) return tsx('no bundle (npm run build:cli)');
  if (!existsSync(sources)) return built('installed: no sources');
  const stale = staleness(root);
  return stale ? tsx(stale) : built('fresh');
}

/** Why the bundle is older than its sources (the first input newer than its build, or gone), or null. */
export function staleness(root) {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(path.join(root, 'out', 'cli', 'inputs.json'), 'utf8'));
  } catch {
    return 'out/cli/inputs.json is unreadable';
  }
  for (const rel of manifest.inputs) {
    let mtime;
    try {
      mtime = statSync(path.join(root, rel)).mtimeMs;
    } catch {
      return `${rel} is gone`;
    }
    if (mtime > manifest.builtAt) return `${rel} changed since the bundle was built`;
  }
  return null;
}
