// The .cache.json rules, table-driven over the scenarios of docs/k3s-facts.md ("The import cache
// (.cache.json)", measured on k3s's own start-up code): sub-second and whole-second mtimes,
// entries with and without `images`, a same-size copy with a newer mtime, a same-size replacement
// with an older mtime, a file away for one start, a .txt list, hidden and nested archives, and the
// digest references k3s adds. Each release line (v1.33.7: without the fix; v1.34.10: with k3s PRs
// #14266 and #14288) runs on its own lab node; before every emulated start Holdfast's forecast
// (`holdfast images --json`) is taken, and after it each reference's CRI label must agree with it.
// The expected table below pins the rules themselves, so the emulation and the forecast cannot
// agree on a wrong rule.
import { readFileSync, renameSync, statSync, utimesSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulateK3sStart, importArchive, listImages, startLab, writeImageArchive, type Lab } from '../../lab';
import type { ImageRef } from '../../src/shared/domain/images';
import { isImageIdRef } from '../../src/shared/protection';
import { addLabNode, runCli, tempHome } from './support';

const CRI = 'io.cri-containerd.pinned';
const LINE = process.env.HOLDFAST_LAB_CONTAINERD ?? '2';
const REPO = 'registry.local/cache';
/** An hour ago, on a whole second (as a file extracted from a tar, or touch -d, has it). */
const T0 = Math.floor(Date.now() / 1000) - 3600;

interface Scenario {
  id: string;
  file: string;
  /** The mtime before the first start: whole seconds, or with a fraction (a file written normally). */
  mtime: number;
}

const SCENARIOS: Scenario[] = [
  { id: 'sub', file: 'sub-second.tar', mtime: T0 + 0.5 },
  { id: 'whole', file: 'whole-second.tar', mtime: T0 },
  { id: 'noimages', file: 'no-images.tar', mtime: T0 },
  { id: 'copy', file: 'copy-newer.tar', mtime: T0 },
  { id: 'replace-old', file: 'replaced.tar', mtime: T0 },
  { id: 'away', file: 'away.tar', mtime: T0 },
  { id: 'hidden', file: '.hidden.tar', mtime: T0 },
  { id: 'nested', file: 'sub/nested.tar.gz', mtime: T0 + 0.25 },
];
const LIST = { file: 'site.txt', image: `${REPO}/listed:1`, mtime: T0 };

/** Pinned (P) or not (U) after the second start, per tag and per digest reference (`@`), as measured. */
const AFTER_SECOND_START: Record<'with-fix' | 'without-fix', Record<string, 'P' | 'U'>> = {
  'with-fix': {
    // re-imported: sub-second mtime, no images, newer mtime — every pin kept, digest reference too
    sub: 'P', 'sub@': 'P', noimages: 'P', 'noimages@': 'P', copy: 'P', 'copy@': 'P', nested: 'P', 'nested@': 'P',
    // skipped, recorded names re-pinned (the OLD name for the replacement), digest references not
    whole: 'P', 'whole@': 'U', 'replace-old': 'P', 'replace-old@': 'U', hidden: 'P', 'hidden@': 'U', listed: 'P', 'listed@': 'U',
    // not in the images dir at this start
    away: 'U', 'away@': 'U',
  },
  'without-fix': {
    // every same-size file is skipped and nothing is re-pinned
    sub: 'U', 'sub@': 'U', noimages: 'U', 'noimages@': 'U', copy: 'U', 'copy@': 'U', nested: 'U', 'nested@': 'U',
    whole: 'U', 'whole@': 'U', 'replace-old': 'U', 'replace-old@': 'U', hidden: 'U', 'hidden@': 'U', listed: 'U', 'listed@': 'U',
    away: 'U', 'away@': 'U',
  },
};

const LINES = [
  { node: 'cr-x', rule: 'without-fix' as const, version: 'v1.33.7+k3s1' },
  { node: 'cr-f', rule: 'with-fix' as const, version: 'v1.34.10+k3s1' },
];

let lab: Lab;
let home: string;

beforeAll(async () => {
  lab = await startLab({ nodes: LINES.map((l) => l.node) });
  home = tempHome();
});

afterAll(async () => {
  await lab?.stop();
});

/** Short key of a reference: the scenario id, with `@` for its digest reference. */
function keyOf(name: string): string | null {
  if (!name.startsWith(`${REPO}/`)) return null;
  const rest = name.slice(REPO.length + 1);
  const at = rest.indexOf('@');
  return at >= 0 ? `${rest.slice(0, at)}@` : rest.slice(0, rest.lastIndexOf(':'));
}

describe.each(LINES)('.cache.json at start: forecast and k3s agree, reference by reference ($rule)', (line) => {
  it(`${line.version} on containerd ${LINE}`, async () => {
    const node = lab.node(line.node);
    const dir = node.hostImagesDir;
    const outside = path.join(node.root, 'outside');
    mkdirSync(path.join(dir, 'sub'), { recursive: true });
    mkdirSync(outside, { recursive: true });
    await node.installDistroBinary('k3s', line.version);
    writeFileSync(path.join(dir, '.cache.json'), ''); // an empty file turns the cache on

    for (const s of SCENARIOS) {
      const file = path.join(dir, s.file);
      await writeImageArchive(file, { format: 'oci', compression: s.file.endsWith('.gz') ? 'gzip' : 'none', images: [{ name: `${REPO}/${s.id}:1` }] });
      utimesSync(file, s.mtime, s.mtime);
    }
    // The listed image comes from elsewhere (an archive outside the images dir); the list names it.
    await writeImageArchive(path.join(outside, 'listed.tar'), { format: 'oci', images: [{ name: LIST.image }] });
    await importArchive(node, path.join(outside, 'listed.tar'), { cacheFix: line.rule === 'with-fix' });
    writeFileSync(path.join(dir, LIST.file), `${LIST.image}\n`);
    utimesSync(path.join(dir, LIST.file), LIST.mtime, LIST.mtime);

    const k3s = { cacheFix: line.rule === 'with-fix' };
    const first = await emulateK3sStart(node, k3s);
    expect(first.failed).toEqual([]);
    await addLabNode(lab, node, home);

    // Between the first and the second start, as the facts sheet's scenarios do.
    const cacheFile = path.join(dir, '.cache.json');
    const cache = JSON.parse(readFileSync(cacheFile, 'utf8')) as Record<string, { images?: string[] }>;
    const inNode = (rel: string) => `/var/lib/rancher/k3s/agent/images/${rel}`;
    delete cache[inNode('no-images.tar')]!.images; // an entry written by a release before the fix
    writeFileSync(cacheFile, JSON.stringify(cache));
    utimesSync(path.join(dir, 'copy-newer.tar'), T0 + 60, T0 + 60); // same-size copy, newer mtime
    const before = statSync(path.join(dir, 'replaced.tar')).size;
    await writeImageArchive(path.join(dir, 'replaced.tar'), { format: 'oci', images: [{ name: `${REPO}/replace-new:1` }] });
    expect(statSync(path.join(dir, 'replaced.tar')).size).toBe(before); // same size, other content
    utimesSync(path.join(dir, 'replaced.tar'), T0 - 60, T0 - 60); // older mtime
    renameSync(path.join(dir, 'away.tar'), path.join(outside, 'away.tar'));

    const disagreements: string[] = [];
    const observed = new Map<string, 'P' | 'U'>();
    const startAndCompare = async (label: string): Promise<void> => {
      const r = await runCli(['images', line.node, '--json'], { HOLDFAST_HOME: home }, 120_000);
      expect(r.code, r.stderr).toBe(0);
      const predicted = JSON.parse(r.stdout) as ImageRef[];
      const report = await emulateK3sStart(node, k3s);
      expect(report.failed).toEqual([]);
      const after = new Map((await listImages(node)).map((i) => [i.name, i.labels]));
      observed.clear();
      for (const ref of predicted) {
        if (isImageIdRef(ref)) continue;
        const pinned = after.get(ref.name)?.[CRI] === 'pinned';
        const key = keyOf(ref.name);
        if (key) observed.set(key, pinned ? 'P' : 'U');
        if (pinned !== (ref.afterRestart === 'pinned')) disagreements.push(`${label} ${ref.name}: predicted ${ref.afterRestart} (${ref.reason}), really ${pinned ? 'pinned' : 'unpinned'}`);
      }
    };

    await startAndCompare('start 2');
    expect(Object.fromEntries([...observed].filter(([k]) => k in AFTER_SECOND_START[line.rule]).sort())).toEqual(
      Object.fromEntries(Object.entries(AFTER_SECOND_START[line.rule]).sort()),
    );

    // A file away for one start: its entry was dropped, so it is imported again on its return.
    renameSync(path.join(outside, 'away.tar'), path.join(dir, 'away.tar'));
    await startAndCompare('start 3');
    expect([observed.get('away'), observed.get('away@')]).toEqual(['P', 'P']);
    expect(disagreements).toEqual([]);

    // What archives --why says per file, from the same rule.
    const why = await runCli(['archives', line.node, '--why'], { HOLDFAST_HOME: home }, 120_000);
    expect(why.code, why.stderr).toBe(0);
    const text = why.stdout.replace(/\s+/g, ' ');
    if (line.rule === 'with-fix') {
      expect(text).toContain('sub-second.tar: k3s re-imports it at start: its mtime has a sub-second part');
      expect(text).toContain(`whole-second.tar: k3s skips it (unchanged to the second) and pins only its recorded names again: ${REPO}/whole:1`);
    } else {
      expect(text).toContain('whole-second.tar: k3s skips it (same size as recorded) and pins nothing it skips');
      expect(text).toContain('pins nothing it skips: their pins are lost at the next start although the archives are still there');
    }
  });
});
