// Output for people (issue #33) on seeded lab nodes: every command that prints a table, run by the
// built CLI on a real pseudo-terminal (util-linux `script`) 80 and 100 columns wide, prints no line
// wider than the terminal; references keep their registry and their tag; --wide and a pipe print
// every cell whole, the pipe exactly as scripts have always read it; a reason is one short clause
// on a terminal, whole with --why, and `holdfast explain` prints everything about one reference.
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulateK3sStart, labelsOf, listImages, startLab, writeImageArchive, type Lab } from '../../lab';
import { SEED_ARCHIVE, SEED_REPORT_IMAGE, SEED_SAMPLE_IMAGE, seedWorkloads, writeSeedArchive } from '../../lab/seed.ts';
import { workloadList } from '../../lab/workloads';
import { textWidth } from '../../src/cli/fit';
import { pinStateText } from '../../src/cli/pinText';
import { shellQuote } from '../../src/core/ssh/quote';
import type { ImageRef } from '../../src/shared/domain/images';
import { pinReading } from '../../src/shared/protection';
import { repoRoot, runCli, tempHome } from './support';

const K3S_RELEASE = 'v1.33.7+k3s1';
const bin = path.join(repoRoot, 'bin', 'holdfast.mjs');
/** A name as long as real ones get: a registry with a port, a deep path, a build tag. */
const LONG = 'registry.example.com:5000/platform/holdfast-telemetry:2.5.1-build.1234';
const LONG_ARCHIVE = 'extra/site-apps/holdfast-telemetry-collector-2.5.1-build.1234.tar.zst';
const WIDTHS = [80, 100] as const;

let lab: Lab;
let home: string;
let work: string;

interface TtyRun {
  code: number | null;
  /** The lines as the terminal shows them: what a carriage return left, escape sequences gone. */
  lines: string[];
}

/** The built CLI on a pseudo-terminal `cols` wide (stdout and stderr both on it, as for a person). */
function onTerminal(args: string[], cols: number): Promise<TtyRun> {
  // Fixed words and shell-quoted arguments: nothing is interpreted by the shell `script` starts.
  const command = `stty cols ${cols} rows 50; exec ${shellQuote([process.execPath, bin, ...args])}`;
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], { env: { ...process.env, HOLDFAST_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const lines = out
        .split('\n')
        .map((l) => l.replace(/\r$/, ''))
        // oxlint-disable-next-line no-control-regex -- escape sequences are what this removes
        .map((l) => l.slice(l.lastIndexOf('\r') + 1).replace(/\x1b\[[0-9;?]*[A-Za-z]/g, ''));
      while (lines.length && lines[lines.length - 1] === '') lines.pop();
      resolve({ code, lines });
    });
  });
}

async function piped(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const r = await runCli(args, { HOLDFAST_HOME: home, ...env });
  expect(r.code, `${args.join(' ')}\n${r.stderr}`).toBe(0);
  return r.stdout;
}

/** Without whitespace: a sentence wrapped (or a long word cut) across lines still matches. */
const squeeze = (s: string) => s.replace(/\s+/g, '');

beforeAll(async () => {
  lab = await startLab({ nodes: ['w1', 'w2'] });
  home = tempHome();
  work = path.join(lab.dir, 'terminal-width');
  mkdirSync(work, { recursive: true });
  // The seed (lab/seed.ts) on both nodes, and an archive whose name and image are as long as
  // real ones; a k3s start imports and pins them.
  for (const node of lab.nodes) {
    await writeSeedArchive(node.hostImagesDir);
    await writeImageArchive(path.join(node.hostImagesDir, LONG_ARCHIVE), { format: 'oci', compression: 'zstd', images: [{ name: LONG, platforms: ['linux/amd64', 'linux/arm64'] }] });
    expect((await emulateK3sStart(node)).failed).toEqual([]);
  }
  // w1 is the server: its kubectl answers the seed's Deployment (running on w1) and CronJob.
  const w1 = lab.node('w1');
  const version = (await w1.ctr(['version'])).match(/Server:[\s\S]*?Version:\s+(\S+)/)?.[1] ?? '';
  const digests = Object.fromEntries((await listImages(w1)).map((i) => [i.name, i.digest]));
  const fixture = workloadList(seedWorkloads(['w1', 'w2'], K3S_RELEASE, `containerd://${version}`, digests));
  await w1.installDistroBinary('k3s', K3S_RELEASE, { workloads: fixture });
  await lab.node('w2').installDistroBinary('k3s', K3S_RELEASE);
  for (const node of lab.nodes) {
    const r = await runCli(['node', 'add', node.name, '--host', node.host, '--port', String(node.port), '--identity', lab.clientKey, '--known-hosts', lab.knownHosts, '--group', 'site-a'], {
      HOLDFAST_HOME: home,
    });
    expect(r.code, r.stderr).toBe(0);
  }
  // w1: the seed archive goes, so the Deployment's image loses its pin at the next k3s start.
  rmSync(path.join(w1.hostImagesDir, SEED_ARCHIVE));
  // w2: every k3s pin made durable (the log gets an entry), then one removed behind Holdfast's back.
  await piped(['pin', 'w2', '--all-k3s']);
  await lab.node('w2').ctr(['images', 'label', LONG, 'io.cri-containerd.pinned=']);
  expect(await labelsOf(lab.node('w2'), LONG)).not.toHaveProperty('io.cri-containerd.pinned');
  // The node imports read files: a key file deep in a home directory.
  writeFileSync(path.join(work, 'nodes.csv'), `name,host,port,user,identity,group\nedge-site-a-01,10.20.0.11,22,root,/home/technician/.ssh/holdfast/site-a/id_ed25519_site_a_edge,site-a\n`);
  writeFileSync(path.join(work, 'ssh_config'), `Host edge-site-b-01\n  HostName 10.30.0.11\n  User ops\n  IdentityFile /home/technician/.ssh/holdfast/site-b/id_ed25519_site_b_edge\n`);
});

afterAll(async () => {
  await lab?.stop();
});

/** Every command that prints a table (or reasons), as a technician types it. */
const COMMANDS: { args: () => string[]; code?: number }[] = [
  { args: () => ['images', 'w1'] },
  { args: () => ['images', 'w2'] },
  { args: () => ['images', 'w1', '--why'] },
  { args: () => ['images', 'w2', '--lost'] },
  { args: () => ['archives', 'w1'] },
  { args: () => ['archives', 'w1', '--why'] },
  { args: () => ['inspect'] },
  { args: () => ['inspect', '--why'] },
  { args: () => ['disk', 'w1'] },
  { args: () => ['prune', 'w1', 'w2', '--dry-run'] },
  { args: () => ['log'] },
  { args: () => ['node', 'ls'] },
  { args: () => ['pin', 'w1', '--needed', '--dry-run'] },
  { args: () => ['rm-archive', 'w1', LONG_ARCHIVE, '--dry-run'], code: 3 },
  { args: () => ['node', 'add-bulk', path.join(work, 'nodes.csv'), '--dry-run'] },
  { args: () => ['node', 'import-ssh-config', '--file', path.join(work, 'ssh_config'), '--dry-run'] },
  { args: () => ['explain', 'w1', SEED_SAMPLE_IMAGE] },
  { args: () => ['explain', 'w2', LONG] },
];

describe('on a terminal 80 and 100 columns wide', () => {
  for (const cols of WIDTHS) {
    it(`no command prints a line wider than ${cols} columns`, async () => {
      for (const c of COMMANDS) {
        const args = c.args();
        const r = await onTerminal(args, cols);
        expect(r.code, `holdfast ${args.join(' ')}\n${r.lines.join('\n')}`).toBe(c.code ?? 0);
        expect(r.lines.length, `holdfast ${args.join(' ')} printed something`).toBeGreaterThan(0);
        const over = r.lines.filter((l) => textWidth(l) > cols);
        expect(over, `holdfast ${args.join(' ')} at ${cols} columns:\n${r.lines.join('\n')}`).toEqual([]);
      }
    });
  }

  it('the reference column keeps the registry and the tag (or the digest) of every reference', async () => {
    const refs = JSON.parse(await piped(['images', 'w2', '--json'])) as ImageRef[];
    for (const cols of WIDTHS) {
      const { lines } = await onTerminal(['images', 'w2'], cols);
      const header = lines.findIndex((l) => l.startsWith('REFERENCE '));
      const cells = lines.slice(header + 1).filter((l) => /^\S/.test(l) && !l.startsWith('--wide') && !l.startsWith('*')).map((l) => l.split(/\s{2,}/)[0]!);
      // (a registry as long as LONG's keeps its start when the column leaves no room for all of it)
      const registryOf = (name: string) => name.slice(0, Math.min(name.indexOf('/') + 1, 12));
      const tags = refs.filter((r) => !r.name.includes('@') && !r.name.startsWith('sha256:'));
      for (const t of tags) {
        const tag = t.name.slice(t.name.lastIndexOf(':'));
        expect(cells.some((c) => c.startsWith(registryOf(t.name)) && c.endsWith(tag)), `${t.name} at ${cols}: ${cells.join(' | ')}`).toBe(true);
      }
      for (const d of refs.filter((r) => r.name.includes('@sha256:'))) {
        const hex = d.name.slice(d.name.indexOf('@sha256:') + 8);
        expect(cells.some((c) => c.startsWith(registryOf(d.name)) && c.includes(`@sha256:${hex.slice(0, 6)}`) && c.endsWith(hex.slice(-4))), `${d.name} at ${cols}`).toBe(true);
      }
      // The long name is elided in its middle, and the table says how to see it whole.
      expect(cells).toContainEqual(expect.stringMatching(/^registry\.exam.*….*:2\.5\.1-build\.1234$/));
      expect(lines).toContainEqual(expect.stringMatching(/^--wide also shows .*whole names\.$/));
    }
  });

  it("CRI's sha256:<id> record reads as its image: the image's pin, marked, beside the image's fate", async () => {
    const { lines } = await onTerminal(['images', 'w1'], 100);
    const records = lines.filter((l) => /^sha256:[0-9a-f]/.test(l));
    expect(records.length).toBeGreaterThan(0);
    // The seed's image on w1: pinned by k3s now, its pin lost at the next start (the archive went).
    for (const l of records) expect(l).toMatch(/^sha256:\S+\s+k3s\*\s+(pinned|LOSES PIN)\s/);
    expect(lines).toContain("* CRI's sha256:<id> record: no labels of its own, it shows its image's pin.");
  });
});

describe('--wide and a pipe', () => {
  it('--wide on a terminal fits nothing: every reference whole, wider than the terminal', async () => {
    const { lines } = await onTerminal(['--wide', 'images', 'w2'], 80);
    const refs = JSON.parse(await piped(['images', 'w2', '--json'])) as ImageRef[];
    for (const r of refs) expect(lines.some((l) => l.startsWith(`${r.name} `)), r.name).toBe(true);
    expect(lines.some((l) => textWidth(l) > 80)).toBe(true);
    expect(lines.join('\n')).not.toContain('…');
    // the option after the command works too
    expect((await onTerminal(['images', 'w2', '--wide'], 80)).lines).toEqual(lines);
  });

  it('piped, the output is what scripts have always read, whatever the terminal', async () => {
    const out = await piped(['images', 'w1']);
    // the same bytes with a terminal width in the environment: a pipe is never fitted
    expect(await piped(['images', 'w1'], { COLUMNS: '80' })).toBe(out);
    const lines = out.split('\n');
    // The classic layout: every column starts where its heading does, four spaces at least between.
    const header = lines[0]!;
    const heads = ['REFERENCE', 'PIN', 'AFTER RESTART', 'SITE NEED', 'IMAGE ID', 'SIZE', 'PLATFORMS'];
    const starts = heads.map((h) => header.indexOf(h));
    expect(header).toBe(heads.map((h, i) => h.padEnd(i + 1 < heads.length ? starts[i + 1]! - starts[i]! : 0)).join(''));
    const refs = JSON.parse(await piped(['images', 'w1', '--json'])) as ImageRef[];
    const rows = lines.slice(1, 1 + refs.length);
    expect(rows.map((l) => l.slice(0, starts[1]).trimEnd())).toEqual(refs.map((r) => r.name));
    for (const l of rows) for (const s of starts.slice(1)) expect(l.slice(s - 4, s), l).toBe('    ');
    // CRI's record reads as its image, marked and explained, as on a terminal (one counting rule:
    // #49 item 6); nothing fitted, no hint.
    for (const r of refs.filter((x) => x.name.startsWith('sha256:'))) {
      const shown = pinReading(r, refs.filter((x) => x.imageId === r.imageId));
      expect(rows.find((l) => l.startsWith(r.name))!.slice(starts[1], starts[2]).trim()).toBe(shown.inherited ? `${pinStateText(shown.pin)}*` : pinStateText(r.pin));
    }
    expect(out).not.toMatch(/…|--wide also shows|\(--why/);
    expect(out).toContain("* CRI's sha256:<id> record: no labels of its own, it shows its image's pin.");
    // Reasons in full, as they always were.
    const sample = refs.find((r) => r.name === SEED_SAMPLE_IMAGE)!;
    expect(out).toContain(`  ${SEED_SAMPLE_IMAGE}: ${sample.need!.because}`);
  });
});

describe('disk agrees with images', () => {
  it("a k3s pin the next start strips reads as lost at restart, as images says LOSES PIN", async () => {
    const images = JSON.parse(await piped(['images', 'w1', '--json'])) as ImageRef[];
    expect(images.find((r) => r.name === SEED_SAMPLE_IMAGE)).toMatchObject({ pin: 'distro', afterRestart: 'unpinned' });
    const out = await piped(['disk', 'w1']);
    const row = out.split('\n').find((l) => l.startsWith(SEED_SAMPLE_IMAGE));
    expect(row).toMatch(/ {2}k3s pin, lost at restart {2}/);
    expect(out).toMatch(/pinned by k3s \(1 loses the pin at the next k3s start\)/);
    // one percentage format: no "70.0 %" beside "85 %"
    expect(out).not.toMatch(/\d\.0 %/);
  });
});

describe('reasons', () => {
  it('one short clause on a terminal; --why prints each whole', async () => {
    const refs = JSON.parse(await piped(['images', 'w1', '--json'])) as ImageRef[];
    const because = refs.find((r) => r.name === SEED_SAMPLE_IMAGE)!.need!.because;
    const short = await onTerminal(['images', 'w1'], 80);
    expect(squeeze(short.lines.join('\n'))).toContain(squeeze(`  - ${SEED_SAMPLE_IMAGE}: at risk at restart: needed by Deployment default/sample +2`));
    expect(squeeze(short.lines.join('\n'))).not.toContain(squeeze(because));
    expect(short.lines).toContain('(--why: reasons in full; holdfast explain w1 REF: one reference in full)');
    const why = await onTerminal(['images', 'w1', '--why'], 80);
    expect(squeeze(why.lines.join('\n'))).toContain(squeeze(because));
    // the missing CronJob image: needed, not on the node
    expect(squeeze(why.lines.join('\n'))).toContain(squeeze(`${SEED_REPORT_IMAGE}: needed by CronJob default/nightly-report`));
  });

  it('archives: why each cannot go in a clause with the command that fixes it; --why lists every problem', async () => {
    const short = await onTerminal(['archives', 'w1'], 80);
    expect(short.lines).toContainEqual(expect.stringMatching(/: its images are not durably pinned yet$/));
    expect(short.lines.join('\n')).toContain(`  → holdfast pin w1 --archive \\\n    ${LONG_ARCHIVE}`);
    const check = (JSON.parse(await piped(['archives', 'w1', '--json'])) as { archives: { path: string; reason: string }[] }).archives;
    const long = check.find((a) => a.path === LONG_ARCHIVE)!;
    const why = await onTerminal(['archives', 'w1', '--why'], 80);
    expect(squeeze(why.lines.join('\n'))).toContain(squeeze(long.reason));
  });

  it('explain prints everything about one reference, every reason whole', async () => {
    const refs = JSON.parse(await piped(['images', 'w1', '--json'])) as ImageRef[];
    const sample = refs.find((r) => r.name === SEED_SAMPLE_IMAGE)!;
    for (const cols of WIDTHS) {
      const { lines, code } = await onTerminal(['explain', 'w1', SEED_SAMPLE_IMAGE], cols);
      expect(code).toBe(0);
      const text = squeeze(lines.join('\n'));
      // its own fate and the need, in full (the fate says why: k3s strips the pin, no archive brings it back)
      expect(sample.afterRestart).toBe('unpinned');
      expect(text).toContain(squeeze(sample.reason));
      expect(text).toContain(squeeze(sample.need!.because));
      for (const w of sample.need!.workloads) expect(text).toContain(squeeze(`${w.kind} ${w.namespace}/${w.name}`));
      expect(lines).toContainEqual(expect.stringMatching(/^After restart +the image: LOSES ITS PIN — /));
      expect(lines).toContainEqual(expect.stringMatching(/^What to do +The site needs it: make its pins durable/));
      expect(lines).toContainEqual(expect.stringMatching(/^ +holdfast pin w1 --needed$/));
    }
    // A reference as a fitted table shows it (elided), or the image id, names the same reference.
    const record = refs.find((r) => r.name.startsWith('sha256:') && r.imageId === sample.imageId)!;
    const byId = await piped(['explain', 'w1', sample.imageId!.slice(7, 19), '--json']);
    expect(JSON.parse(byId)).toMatchObject({ ref: SEED_SAMPLE_IMAGE, present: true });
    const elided = `${record.name.slice(0, 19)}…${record.name.slice(-4)}`;
    expect(JSON.parse(await piped(['explain', 'w1', elided, '--json']))).toMatchObject({ ref: record.name, image: { shown: { pin: 'distro', inherited: true } } });
    // A needed image the node lacks: explained too; a name the node neither has nor needs: an error that says what to do.
    expect(JSON.parse(await piped(['explain', 'w1', SEED_REPORT_IMAGE, '--json']))).toMatchObject({ present: false, need: { verdict: 'missing' } });
    const none = await runCli(['explain', 'w1', 'docker.io/library/nothing:1'], { HOLDFAST_HOME: home });
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain('holdfast: no reference "docker.io/library/nothing:1" on w1');
  });
});
