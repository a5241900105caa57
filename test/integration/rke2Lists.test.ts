// RKE2's own *-image.txt lists (issue #37, item 6): once no archive is left at the top level of its
// images dir, RKE2 writes a list per image it pulls at start, and those lists pin what they name.
// Holdfast warns when a removal leaves the top level without an archive and says so beside the
// images dir — on RKE2 nodes only. Runs in both projects: on RKE2 nodes (integration-rke2) the
// lists appear and every warning is there; on k3s nodes (integration) none of it.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulateK3sStart, startLab, writeImageArchive, type Lab } from '../../lab';
import type { ArchivesReport } from '../../src/shared/archivesReport';
import type { AuditEntry } from '../../src/shared/domain/audit';
import type { ImageRef } from '../../src/shared/domain/images';
import type { Rke2ListsNotice } from '../../src/shared/rke2Lists';
import { addLabNode, labDistro, onTerminal, runCli, tempHome } from './support';

const D = labDistro();
const RKE2 = D.distro === 'rke2';
const RUNTIME = 'docker.io/rancher/rke2-runtime:v1.31.6-rke2r1';
const APP = 'registry.local/site/app:1';
// What the emulated start writes on RKE2 nodes (lab/k3s.ts rke2Images); k3s writes nothing.
const START = { rke2Images: { runtime: RUNTIME } };
const BRIEF = 'no archive at the top level: RKE2 writes its own image lists here at its next start';
const WARNING = 'Removing runtime.tar leaves no archive at the top level of the images dir of lists, so at its next start RKE2 writes its own <component>-image.txt lists there';

let lab: Lab;
let home: string;

beforeAll(async () => {
  lab = await startLab({ nodes: ['lists'] });
  home = tempHome();
});

afterAll(async () => {
  await lab?.stop();
});

async function cli(args: string[]): Promise<string> {
  const r = await runCli(args, { HOLDFAST_HOME: home });
  if (r.code !== 0) throw new Error(`holdfast ${args.join(' ')} exited ${r.code}\n${r.stderr}${r.stdout}`);
  return r.stdout;
}
const archives = async () => JSON.parse(await cli(['archives', 'lists', '--json'])) as ArchivesReport & { rke2Lists: Rke2ListsNotice | null };
const images = async () => JSON.parse(await cli(['images', 'lists', '--json'])) as ImageRef[];

describe(`${D.name}'s own image lists`, () => {
  it(`removing the last top-level archive: ${RKE2 ? 'warned, then the lists appear and archives says so' : 'no warning and no lists on k3s'}`, async () => {
    const n = lab.node('lists');
    await n.installDistroBinary(D.distro, D.release('v1.33.7+k3s1'));
    const dir = n.hostImagesDir;
    await writeImageArchive(path.join(dir, 'runtime.tar'), { format: 'docker', images: [{ name: RUNTIME }] });
    // A subfolder's archive does not count: RKE2 looks at the top level only.
    await writeImageArchive(path.join(dir, 'site', 'apps.tar'), { format: 'docker', images: [{ name: APP }] });
    await emulateK3sStart(n, START);
    expect(existsSync(path.join(dir, 'runtime-image.txt'))).toBe(false);
    await addLabNode(lab, n, home);
    expect((await archives()).rke2Lists).toBeNull();

    await cli(['pin', 'lists', '--archive', 'runtime.tar']);
    expect((await images()).find((r) => r.name === RUNTIME)).toMatchObject({ pin: 'durable' });
    // Every view of the images dir says the removal's verdict (shared/removalVerdict), before it is made.
    const before = (await archives()).archives.find((a) => a.path === 'runtime.tar')!;
    const table = (await onTerminal(['archives', 'lists'], 100, { HOLDFAST_HOME: home })).join('\n');
    const piped = await cli(['archives', 'lists']);
    const row = (text: string) => text.split('\n').find((l) => /^runtime\.tar\s/.test(l)) ?? '';
    expect(before).toMatchObject({ safeToRemove: true, removalTone: RKE2 ? 'caution' : 'safe' });
    for (const t of [table, piped]) expect(row(t)).toMatch(RKE2 ? /\syes, but\s*$/ : /\syes\s*$/);
    if (RKE2) {
      expect(before.removalWarnings).toEqual([{ brief: 'the last top-level archive: RKE2 writes its own lists without it', reason: expect.stringContaining(WARNING) }]);
      expect(before.reason).toContain(WARNING);
      expect(before.reason).not.toContain('loses nothing');
      // The short clause on a terminal, the warning in full piped and with --why.
      expect(table).toContain('runtime.tar: removable, but the last top-level archive: RKE2 writes its own lists without it');
      expect(table).toContain('(--why');
      for (const t of [piped, await cli(['archives', 'lists', '--why'])]) expect(t.replace(/\s+/g, ' ')).toContain(`runtime.tar: ${WARNING}`);
      const explained = await cli(['explain', 'lists', RUNTIME]);
      expect(explained.replace(/\s+/g, ' ')).toContain('runtime.tar: removable, with a warning — ');
    } else {
      expect(before.removalWarnings).toBeUndefined();
      expect(before.reason).toContain('loses nothing');
      expect(table + piped).not.toContain('yes, but');
    }
    const dry = await cli(['rm-archive', 'lists', 'runtime.tar', '--dry-run']);
    // The verdict's tone follows the warning (shared/removalVerdict): never "safely" beside it.
    expect(dry).toContain(RKE2 ? 'runtime.tar can be removed, but read the warning first' : 'runtime.tar can be removed safely');
    const removed = await cli(['rm-archive', 'lists', 'runtime.tar']);
    expect(removed).toMatch(/^removed runtime\.tar /);
    const log = JSON.parse(await cli(['log', 'lists', '--json'])) as AuditEntry[];
    const entry = log.find((e) => e.action === 'rm-archive' && e.archive?.path === 'runtime.tar')!;
    if (RKE2) {
      for (const out of [dry, removed]) {
        expect(out.replace(/\s+/g, ' ')).toContain(`warning: ${WARNING}`);
        expect(out.replace(/\s+/g, ' ')).toContain('they take over the durable pins of every image they name. Keep an archive at the top level to stop this.');
      }
      expect(entry.warnings?.[0]).toContain(WARNING);
      expect((await cli(['log', 'lists'])).replace(/\s+/g, ' ')).toContain(`warning: ${WARNING}`);
    } else {
      expect(dry + removed).not.toContain('warning:');
      expect(entry.warnings).toBeUndefined();
      expect(await cli(['log', 'lists'])).not.toContain('warning:');
    }

    // The next start: RKE2 writes its list, which pins what it names (the durable pin becomes RKE2's).
    await emulateK3sStart(n, START);
    const report = await archives();
    const runtime = (await images()).find((r) => r.name === RUNTIME)!;
    const terminal = (await onTerminal(['archives', 'lists'], 100, { HOLDFAST_HOME: home })).join('\n');
    const why = await cli(['archives', 'lists', '--why']);
    if (RKE2) {
      expect(readFileSync(path.join(dir, 'runtime-image.txt'), 'utf8')).toBe(`${RUNTIME}\n`);
      expect(report.archives.find((a) => a.path === 'runtime-image.txt')).toMatchObject({ kind: 'prepull' });
      expect(runtime).toMatchObject({ pin: 'distro', archive: 'runtime-image.txt' });
      expect(report.rke2Lists?.brief).toBe(BRIEF);
      expect(report.rke2Lists?.reason).toContain('Keep an archive at the top level of the images dir');
      expect(terminal).toContain(BRIEF);
      expect(why.replace(/\s+/g, ' ')).toContain('The top level of the images dir of lists holds no archive (no file but .txt lists and .json), so at every start RKE2 writes its own <component>-image.txt lists there');
    } else {
      expect(existsSync(path.join(dir, 'runtime-image.txt'))).toBe(false);
      expect(runtime).toMatchObject({ pin: 'durable' });
      expect(report.rke2Lists).toBeNull();
      expect(terminal + why).not.toContain('image lists');
    }
  });
});
