// Node names for a lab started by hand (`npm run lab`) that do not collide with another lab's:
// `lab1-n1`, `lab1-n2`, … then `lab2-n1` for the next lab. A technician adds a lab's nodes to
// Holdfast by name; a second lab that called its nodes n1–n3 again could not be added beside the
// first (or, after `node remove`, would sit under a name whose host key changed). A prefix is free
// when no node in the user's Holdfast node store is called `<prefix>-…` and no running lab holds
// it. A running lab holds its prefix by a directory under the claims dir (mkdir is atomic, so two
// labs starting at once never take the same one) with its pid; a claim whose process is gone is
// stale and taken over. The tests' labs keep the short n1…nN names: each test owns its own store.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { holdfastHome } from '../src/core/config/home.ts';
import { alive } from './lab.ts';

export const LAB_CLAIMS_DIR = '/run/holdfast-lab/prefixes';
const PREFIX = /^[a-z][a-z0-9]{0,11}$/;

export interface LabPrefix {
  prefix: string;
  /** `<prefix>-n1` … `<prefix>-n<count>`. */
  names(count: number): string[];
  release(): Promise<void>;
}

/** Node names in the user's Holdfast node store ($HOLDFAST_HOME/nodes.json); none when it is absent. */
export async function storedNodeNames(home = holdfastHome()): Promise<Set<string>> {
  let text: string;
  try {
    text = await readFile(join(home, 'nodes.json'), 'utf8');
  } catch {
    return new Set();
  }
  try {
    const parsed = JSON.parse(text) as { nodes?: Array<{ name?: unknown }> };
    return new Set((parsed.nodes ?? []).map((n) => n.name).filter((n): n is string => typeof n === 'string'));
  } catch {
    return new Set(); // Holdfast itself reports a damaged store; the lab only avoids names in it
  }
}

async function tryClaim(claims: string, prefix: string): Promise<boolean> {
  const dir = join(claims, prefix);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await mkdir(dir);
      await writeFile(join(dir, 'pid'), String(process.pid));
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const pid = Number((await readFile(join(dir, 'pid'), 'utf8').catch(() => '')).trim());
      // A claim without a pid yet is being written by a lab starting right now: taken.
      if (!Number.isInteger(pid) || pid <= 0 || alive(pid)) return false;
      await rm(dir, { recursive: true, force: true });
    }
  }
  return false;
}

/**
 * Claims `requested` (refused when it is taken), else the first free `labK`.
 * `taken`: names already in the node store (storedNodeNames()).
 */
export async function claimLabPrefix(opts: { requested?: string; taken: Set<string>; claimsDir?: string }): Promise<LabPrefix> {
  // HOLDFAST_LAB_CLAIMS: a private claims dir, so a test's labs do not meet the labs a person runs.
  const claims = opts.claimsDir ?? process.env.HOLDFAST_LAB_CLAIMS ?? LAB_CLAIMS_DIR;
  await mkdir(claims, { recursive: true });
  const usedInStore = (p: string): boolean => [...opts.taken].some((n) => n.startsWith(`${p}-`));
  const make = (prefix: string): LabPrefix => ({
    prefix,
    names: (count) => Array.from({ length: count }, (_, i) => `${prefix}-n${i + 1}`),
    release: () => rm(join(claims, prefix), { recursive: true, force: true }),
  });
  if (opts.requested !== undefined) {
    if (!PREFIX.test(opts.requested)) throw new Error(`--name wants a lower-case letter then up to 11 letters or digits, such as site2 (not ${JSON.stringify(opts.requested)})`);
    if (usedInStore(opts.requested)) throw new Error(`Holdfast already has nodes named ${opts.requested}-…: pick another --name, or remove them (holdfast node rm NAME)`);
    if (!(await tryClaim(claims, opts.requested))) throw new Error(`another running lab uses the name ${opts.requested}: pick another --name`);
    return make(opts.requested);
  }
  for (let k = 1; k < 1000; k++) {
    const prefix = `lab${k}`;
    if (!usedInStore(prefix) && (await tryClaim(claims, prefix))) return make(prefix);
  }
  throw new Error(`no free lab name: remove old lab nodes from Holdfast (holdfast node ls) or clear ${claims}`);
}
