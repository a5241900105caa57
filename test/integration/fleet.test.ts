// Many nodes at once over the lab: `holdfast inspect` agrees with `images`/`archives --json`
// node by node, finds drift, survives an unreachable and a hanging node, writes a
// self-contained HTML page and a CSV that parses back; groups, node edit, ssh_config import
// and bulk add feed it.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulateK3sStart, startLab, writeImageArchive, type Lab, type LabNodeHandle } from '../../lab';
import { freePort } from '../../lab/node';
import type { FleetReport } from '../../src/core/usecases/fleet';
import type { ArchivesReport } from '../../src/shared/archivesReport';
import type { ImageRef } from '../../src/shared/domain/images';
import { pinReading, protectionKey } from '../../src/shared/protection';
import { runCli, tempHome } from './support';

let lab: Lab;
let home: string;
let deadPort: number;
let hang: net.Server;
let hangPort: number;
const work = mkdtempSync(path.join(os.tmpdir(), 'hf-fleet-'));

const APP = 'docker.io/library/app:1';
const COMMON = 'docker.io/library/common:1';
const TOOL = 'docker.io/library/tool:1';

async function cli(args: string[], h = home) {
  return runCli(args, { HOLDFAST_HOME: h }, 120_000);
}

async function addNode(n: LabNodeHandle, group: string, h = home): Promise<void> {
  const r = await cli(['node', 'add', n.name, '--host', n.host, '--port', String(n.port), '--identity', lab.clientKey, '--known-hosts', lab.knownHosts, '--group', group], h);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
}

beforeAll(async () => {
  lab = await startLab({ nodes: ['f1', 'f2', 'f3', 'f4'] });
  home = tempHome();
  const [f1, f2, f3, f4] = ['f1', 'f2', 'f3', 'f4'].map((n) => lab.node(n)) as [LabNodeHandle, LabNodeHandle, LabNodeHandle, LabNodeHandle];
  // f1: app + common, k3s-pinned, archive kept.
  await writeImageArchive(path.join(f1.hostImagesDir, 'apps.tar'), { format: 'docker', images: [{ name: APP }, { name: COMMON }] });
  await emulateK3sStart(f1);
  // f2: common + tool, k3s-pinned, then the archive is deleted: both lose their pin at the next start.
  const f2Archive = path.join(f2.hostImagesDir, 'base.tar.gz');
  await writeImageArchive(f2Archive, { format: 'oci', compression: 'gzip', images: [{ name: COMMON }, { name: TOOL }] });
  await emulateK3sStart(f2);
  rmSync(f2Archive);
  // f3: common imported by hand, never pinned.
  const loose = path.join(work, 'loose.tar');
  await writeImageArchive(loose, { format: 'docker', images: [{ name: COMMON }] });
  await f3.ctr(['images', 'import', '--all-platforms', '--no-unpack', loose]);
  // f4: nothing, and a 64 MiB images dir: low on disk.
  await f4.limitImagesDir(64 * 1024 * 1024);

  await addNode(f1, 'north');
  await addNode(f2, 'north');
  await addNode(f3, 'south');
  await addNode(f4, 'south');
  deadPort = await freePort();
  const r = await cli(['node', 'add', 'dead', '--host', '127.0.0.1', '--port', String(deadPort), '--identity', lab.clientKey, '--known-hosts', lab.knownHosts, '--group', 'south', '--no-check']);
  expect(r.code).toBe(0);
  // A node that accepts TCP and never says a word (a hung sshd, a black-holing firewall).
  hang = net.createServer(() => undefined);
  await new Promise<void>((res) => hang.listen(0, '127.0.0.1', res));
  hangPort = (hang.address() as net.AddressInfo).port;
});

afterAll(async () => {
  hang?.close();
  await lab?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('holdfast inspect over a fleet', () => {
  let report: FleetReport;

  it('reports every node, exits 1 because one is unreachable, and agrees with images/archives --json', async () => {
    const r = await cli(['inspect', '--json']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('1 of 5 nodes unreachable: dead');
    report = JSON.parse(r.stdout) as FleetReport;
    expect(Object.keys(report).sort()).toEqual(['drift', 'generatedAt', 'nodes', 'summary']);
    expect(report.nodes.map((n) => n.node)).toEqual(['f1', 'f2', 'f3', 'f4', 'dead']);
    // embeddedRegistry and registries only where the node has something to say about them.
    for (const n of report.nodes) {
      expect(Object.keys(n).filter((k) => k !== 'embeddedRegistry' && k !== 'registries').sort()).toEqual(['archives', 'disk', 'error', 'guard', 'images', 'importCache', 'lostPins', 'needs', 'node', 'reachable', 'versions', 'warnings']);
    }
    for (const d of report.drift) expect(Object.keys(d).sort()).toEqual(['missingOn', 'name', 'pinnedOn', 'presentOn', 'unpinnedOn']);

    for (const name of ['f1', 'f2', 'f3', 'f4']) {
      const n = report.nodes.find((x) => x.node === name)!;
      expect(n).toMatchObject({ reachable: true, error: null });
      expect(n.versions?.containerdVersion).toMatch(/\d+\.\d+/);
      const images = JSON.parse((await cli(['images', name, '--json'])).stdout) as ImageRef[];
      const archives = JSON.parse((await cli(['archives', name, '--json'])).stdout) as ArchivesReport;
      expect(n.images).toEqual(images);
      // the report's per-node files and cache health are the CLI's: the health once for the node, in no file
      expect(n.archives).toEqual(archives.archives);
      expect(n.importCache).toEqual(archives.importCache);
      for (const a of n.archives ?? []) expect(Object.keys(a)).not.toContain('importCache');
      expect(n.disk!.freeBytes).toBeGreaterThan(0);
      expect(n.disk!.totalBytes!).toBeGreaterThanOrEqual(n.disk!.freeBytes);
    }
    // f1 keeps an archive: its cache health is there (not null), once.
    expect(report.nodes[0]!.importCache?.state).toMatch(/^(absent|ignored|unreadable|on)$/);
    const dead = report.nodes[4]!;
    expect(dead).toMatchObject({ reachable: false, versions: null, images: null, archives: null, importCache: null, disk: null, error: { code: 'UNREACHABLE' } });
    expect(dead.error!.message).toContain('connection refused');

    const f4 = report.nodes[3]!;
    expect(f4.disk).toMatchObject({ path: '/var/lib/rancher/k3s/agent/images', totalBytes: 64 * 1024 * 1024, via: 'statvfs' });
  });

  it('finds the drift between reachable nodes (pinned = pinned now) and never blames the unreachable one', () => {
    const byName = new Map(report.drift.map((d) => [d.name, d]));
    expect(byName.get(APP)).toEqual({ name: APP, presentOn: ['f1'], missingOn: ['f2', 'f3', 'f4'], pinnedOn: ['f1'], unpinnedOn: [] });
    expect(byName.get(COMMON)).toEqual({ name: COMMON, presentOn: ['f1', 'f2', 'f3'], missingOn: ['f4'], pinnedOn: ['f1', 'f2'], unpinnedOn: ['f3'] });
    expect(byName.get(TOOL)).toMatchObject({ presentOn: ['f2'], missingOn: ['f1', 'f3', 'f4'], pinnedOn: ['f2'] });
    for (const d of report.drift) expect([...d.presentOn, ...d.missingOn]).not.toContain('dead');
  });

  it('summarises who is at risk and why', () => {
    const s = report.summary;
    expect(s).toMatchObject({ nodes: 5, reachable: 4, unreachable: 1, lowDisk: 1 });
    const f2 = report.nodes[1]!.images!.filter((i) => i.pin !== 'none' && i.afterRestart === 'unpinned');
    expect(f2.length).toBeGreaterThanOrEqual(2); // tags (and digest references) of common and tool
    // Counted per image, as kubelet sees it (shared/protection): common and tool.
    expect(s.losingPins).toBe(new Set(f2.map((i) => i.imageId)).size);
    expect(s.losingPins).toBe(2);
    expect(s.atRisk[0]!.losingImages!.map((p) => p.refs.find((n) => !n.includes('@') && !n.startsWith('sha256:'))).sort()).toEqual([COMMON, TOOL].sort());
    for (const i of f2) expect(i).toMatchObject({ imagePinnedNow: true, imagePinnedAfterRestart: false });
    expect(s.atRisk.map((r) => r.node)).toEqual(['f2', 'f4', 'dead']);
    expect(s.atRisk[1]!.reasons[0]).toMatch(/^low disk: /);
  });

  it('prints a readable table by default, with drift and what needs attention', async () => {
    const r = await cli(['inspect']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^NODE\s+GROUP\s+STATUS/);
    expect(r.stdout).toMatch(/dead\s+south\s+UNREACHABLE/);
    expect(r.stdout).toContain('Drift: ');
    expect(r.stdout).toMatch(/f4: low disk/);
    expect(r.stdout).toMatch(/f2: 2 images lose their pin at the next k3s start \(as kubelet sees them\)/);
  });

  it('selects a group, and exits 0 when every selected node answers', async () => {
    const r = await cli(['inspect', '--group', 'north', '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const rep = JSON.parse(r.stdout) as FleetReport;
    expect(rep.nodes.map((n) => n.node)).toEqual(['f1', 'f2']);
    expect(rep.drift.map((d) => d.name)).toContain(APP);
    const named = JSON.parse((await cli(['inspect', 'f3', 'f1', '--json'])).stdout) as FleetReport;
    expect(named.nodes.map((n) => n.node)).toEqual(['f3', 'f1']);
    const none = await cli(['inspect', '--group', 'nowhere']);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no node in group "nowhere" — Groups: north, south.');
    expect((await cli(['inspect', 'f1', '--all'])).code).toBe(2);
  });

  it('writes one self-contained HTML file and a CSV that parses back', async () => {
    const html = path.join(work, 'out', 'fleet.html');
    const csv = path.join(work, 'out', 'fleet.csv');
    const r = await cli(['inspect', '--html', html, '--csv', csv]);
    expect(r.code).toBe(1);
    const page = readFileSync(html, 'utf8');
    expect(page).not.toMatch(/https?:|src=|<link|<script|@import|url\(/i);
    expect(page).toMatch(/<style>[\s\S]*@media print[\s\S]*<\/style>/);
    const summary = page.indexOf('id="summary"');
    expect(summary).toBeGreaterThan(0);
    expect(summary).toBeLessThan(page.indexOf('id="details"'));
    // <wbr> marks where a long name may wrap: the text a reader sees has none.
    const text = page.replace(/<wbr>/g, '');
    for (const s of ['Nodes at risk', 'dead', 'connection refused', 'low disk', 'Images that will lose their pin', TOOL]) expect(text).toContain(s);

    const rows = parseRfc4180(readFileSync(csv, 'utf8'));
    expect(rows[0]).toEqual(['node', 'reachable', 'reference', 'digest', 'imageId', 'pin', 'afterRestart', 'reason', 'archive', 'imageAfterRestart', 'imageReason', 'siteNeed', 'atRisk', 'neededBy', 'signature']);
    const body = rows.slice(1);
    // A row per reference (one for a node without any), and one per needed image a node lacks.
    const expected = report.nodes.reduce((s, n) => s + Math.max(1, n.images?.length ?? 0) + (n.needs?.missing.length ?? 0), 0);
    expect(body).toHaveLength(expected);
    const f1 = report.nodes[0]!.images!;
    for (const i of f1) {
      const image = i.imagePinnedAfterRestart ? 'pinned' : 'unpinned';
      // (pin as every view reads it: CRI's sha256:<id> record with its image's, shared/protection)
      const pin = pinReading(i, f1.filter((x) => protectionKey(x) === protectionKey(i))).pin;
      expect(body).toContainEqual([
        'f1', 'true', i.name, i.digest, i.imageId ?? '', pin, i.afterRestart, i.reason, i.archive ?? '', image, expect.stringMatching(/./),
        i.need!.verdict, String(i.need!.atRisk), expect.any(String), 'never verified', // imported without --key
      ]);
    }
    expect(body).toContainEqual(['dead', 'false', '', '', '', '', '', report.nodes[4]!.error!.message, '', '', '', '', '', '', '']);
  });

  it('bounds a node that never answers by --timeout, and reports the others', async () => {
    const h = tempHome();
    await addNode(lab.node('f1'), 'x', h);
    expect((await cli(['node', 'add', 'hung', '--host', '127.0.0.1', '--port', String(hangPort), '--identity', lab.clientKey, '--known-hosts', lab.knownHosts, '--no-check'], h)).code).toBe(0);
    // The node never answers: only the per-node --timeout can end this run (TIMEOUT below). The
    // same deadline bounds f1, a real node, whose inspection (a new CLI process on a loaded
    // 2-core machine) took over 2 s in a clean-clone run: 10 s is a hang guard for both.
    const r = await cli(['inspect', '--json', '--timeout', '10'], h);
    expect(r.code).toBe(1);
    const rep = JSON.parse(r.stdout) as FleetReport;
    expect(rep.nodes[0], JSON.stringify(rep.nodes[0]!.error)).toMatchObject({ node: 'f1', reachable: true });
    expect(rep.nodes[1]).toMatchObject({ node: 'hung', reachable: false, error: { code: 'TIMEOUT' } });
  });
});

describe('inventory: groups, edit, ssh_config import, bulk add', () => {
  it('node ls shows and filters groups', async () => {
    const ls = await cli(['node', 'ls']);
    expect(ls.stdout).toMatch(/f1\s+north\s+127\.0\.0\.1:/);
    const south = JSON.parse((await cli(['node', 'ls', '--group', 'south', '--json'])).stdout) as { name: string; group: string }[];
    expect(south.map((n) => [n.name, n.group])).toEqual([['f3', 'south'], ['f4', 'south'], ['dead', 'south']]);
  });

  it('node edit changes fields, checks a new address, and can drop the group', async () => {
    const h = tempHome();
    const n = lab.node('f3');
    await addNode(n, 'one', h);
    let r = await cli(['node', 'edit', 'f3', '--group', 'two', '--namespace', 'k8s.io'], h);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('group: one → two');
    expect(r.stdout).not.toContain('namespace');
    // A wrong port is refused by the check and nothing is saved…
    r = await cli(['node', 'edit', 'f3', '--port', String(deadPort)], h);
    expect(r.code).toBe(1);
    expect(JSON.parse((await cli(['node', 'ls', '--json'], h)).stdout)[0].port).toBe(n.port);
    // …unless --no-check; then inspect shows it unreachable, and editing it back (checked) fixes it.
    expect((await cli(['node', 'edit', 'f3', '--port', String(deadPort), '--no-check'], h)).code).toBe(0);
    expect((await cli(['inspect', '--group', 'two', '--json'], h)).code).toBe(1);
    r = await cli(['node', 'edit', 'f3', '--port', String(n.port), '--no-group'], h);
    expect(r.stdout).toContain('(checked)');
    const [def] = JSON.parse((await cli(['node', 'ls', '--json'], h)).stdout);
    expect(def).toMatchObject({ name: 'f3', port: n.port });
    expect(def.group).toBeUndefined();
    expect((await cli(['inspect', 'f3', '--json'], h)).code).toBe(0);
    expect((await cli(['node', 'edit', 'nope', '--group', 'x'], h)).code).toBe(1);
  });

  it('imports concrete Host entries from an ssh config, with dry run, patterns, groups and jump hosts', async () => {
    const h = tempHome();
    const [f1, f2] = [lab.node('f1'), lab.node('f2')];
    const cfg = path.join(work, 'ssh_config');
    writeFileSync(
      cfg,
      [
        '# site east',
        `Host east-1`,
        `  HostName 127.0.0.1`,
        `  Port ${f1.port}`,
        `Host east-2`,
        `  HostName 127.0.0.1`,
        `  Port ${f2.port}`,
        `  ProxyJump east-1`,
        `Host far`,
        `  HostName 10.9.9.9`,
        `  ProxyJump gate.example`,
        `Host east-*`,
        `  User root`,
        `  IdentityFile ${lab.clientKey}`,
        `  UserKnownHostsFile ${lab.knownHosts}`,
        `Match host east-1`,
        `  User nobody`,
        '',
      ].join('\n'),
    );
    let r = await cli(['node', 'import-ssh-config', '--file', cfg, '--group', 'east', '--dry-run'], h);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/east-1\s+127\.0\.0\.1:\d+\s+root/);
    expect(r.stdout).toMatch(/east-2\s+.*east-1\s+east/);
    expect(r.stdout).toMatch(/skipped far: ProxyJump gate\.example: .*unsupported for now/);
    expect(r.stdout).toContain('dry run: would import 2 nodes');
    expect(r.stderr).toContain('Match blocks are not evaluated');
    expect(JSON.parse((await cli(['node', 'ls', '--json'], h)).stdout)).toEqual([]);

    r = await cli(['node', 'import-ssh-config', '--file', cfg, '--group', 'east', 'east-1'], h);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('imported 1 node');
    r = await cli(['node', 'import-ssh-config', '--file', cfg, '--group', 'east', 'east-*', '--json'], h);
    const out = JSON.parse(r.stdout);
    expect(out.nodes.map((n: { name: string; jump?: string }) => [n.name, n.jump])).toEqual([['east-2', 'east-1']]);
    expect(out.skipped).toEqual([{ alias: 'east-1', reason: expect.stringMatching(/already configured/) }]);

    const ls = JSON.parse((await cli(['node', 'ls', '--group', 'east', '--json'], h)).stdout);
    expect(ls).toEqual([
      expect.objectContaining({ name: 'east-1', host: '127.0.0.1', port: f1.port, user: 'root', identity: lab.clientKey, knownHosts: lab.knownHosts, group: 'east' }),
      expect.objectContaining({ name: 'east-2', port: f2.port, jump: 'east-1', group: 'east' }),
    ]);
    // east-1 is the lab's f1; east-2 (f2) is reached through east-1, as ssh would.
    const r2 = await cli(['inspect', '--group', 'east', '--json'], h);
    expect(r2.stderr).toBe('');
    expect(r2.code).toBe(0);
    const rep = JSON.parse(r2.stdout) as FleetReport;
    expect(rep.nodes[0]!.images!.map((i) => i.name)).toContain(APP);
    expect(rep.nodes[1]!.images!.map((i) => i.name)).toContain(TOOL);
    // Selecting only the jumped node still finds its (unselected) jump host.
    expect((await cli(['inspect', 'east-2', '--json'], h)).code).toBe(0);
  });

  it('add-bulk adds every row in one write, or nothing when any row is wrong', async () => {
    const h = tempHome();
    const [f1, f2] = [lab.node('f1'), lab.node('f2')];
    const good = path.join(work, 'nodes.csv');
    writeFileSync(good, `name,host,port,user,identity,group\nb1,127.0.0.1,${f1.port},root,${lab.clientKey},bulk\n"b2",127.0.0.1,${f2.port},,${lab.clientKey},bulk\n`);
    const bad = path.join(work, 'bad.csv');
    writeFileSync(bad, `name,host,port\nb3,127.0.0.1,22\nb 4,127.0.0.1,22\nb5,127.0.0.1,0\n`);
    let r = await cli(['node', 'add-bulk', bad], h);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('line 3: name:');
    expect(r.stderr).toContain('line 4: port:');
    expect(r.stderr).toContain('2 problems');
    expect(JSON.parse((await cli(['node', 'ls', '--json'], h)).stdout)).toEqual([]);

    r = await cli(['node', 'add-bulk', good, '--known-hosts', lab.knownHosts], h);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('added 2 nodes');
    expect((await cli(['node', 'add-bulk', good, '--known-hosts', lab.knownHosts], h)).stderr).toContain('"b1" is already configured');
    const rep = await cli(['inspect', '--group', 'bulk', '--json'], h);
    expect(rep.code).toBe(0);
    expect((JSON.parse(rep.stdout) as FleetReport).nodes.map((n) => [n.node, n.reachable])).toEqual([['b1', true], ['b2', true]]);
  });
});

/** An independent RFC 4180 reader (not the one under test). */
function parseRfc4180(text: string): string[][] {
  const rows: string[][] = [];
  const re = /("(?:[^"]|"")*"|[^,\r\n]*)(,|\r\n|$)/g;
  let row: string[] = [];
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) && m[0] !== '') {
    const f = m[1]!;
    row.push(f.startsWith('"') ? f.slice(1, -1).replace(/""/g, '"') : f);
    if (m[2] !== ',') {
      rows.push(row);
      row = [];
    }
  }
  return rows;
}
