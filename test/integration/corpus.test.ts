// Every archive of the corpus (made by podman, buildah, skopeo, umoci and `ctr images export`,
// in every compression k3s imports: test/corpus/build.ts) through the whole Holdfast path on lab
// nodes running k3s's watcher: local inspection → `holdfast upload` → k3s's import → `holdfast
// pin --archive` → `holdfast rm-archive` → an emulated k3s restart. What k3s would do is
// asserted at each step from containerd (names, labels), CRI (what kubelet's GC reads) and the
// bytes on the node; the corpus table is printed at the end.
//
// Archives are grouped per lab node (all nodes in one lab, the groups in parallel, each group in
// order), so the suite's time is bounded by the largest group, not the corpus.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, it, type ExpectStatic } from 'vitest';
import { emulateK3sStart, labelsOf, startK3sWatcher, startLab, type FailedImport, type ImportedArchive, type K3sWatcher, type Lab, type LabNodeHandle } from '../../lab';
import { criImageStatus, criPinned } from '../../lab/cri';
import { readLocalArchive } from '../../src/core/usecases/import/localArchive';
import type { ImageRef } from '../../src/shared/domain/images';
import type { PinPlan } from '../../src/shared/domain/pins';
import { addCtrExports, buildCorpus, type Corpus, type CorpusArchive } from '../corpus/build';
import { runCli, tempHome } from './support';

const CRI = 'io.cri-containerd.pinned';
const K3S = 'io.cattle.k3s.pinned';
const NODES = ['k1', 'k2', 'k3', 'k4', 'k5'];
/** The node the ctr exports are made on: it never imports them itself. */
const EXPORTER = 'k5';

let lab: Lab;
let home: string;
let corpus: Corpus;
let archives: CorpusArchive[] = [];
const watchers = new Map<string, K3sWatcher>();
const groups = new Map<string, CorpusArchive[]>();
const ownCorpusDir = !process.env['HOLDFAST_CORPUS_DIR'];
const corpusDir = process.env['HOLDFAST_CORPUS_DIR'] ?? mkdtempSync(path.join(os.tmpdir(), 'hf-corpus-'));
const timings: Record<string, number> = {};

interface Row {
  archive: string;
  tool: string;
  format: string;
  inspect: string;
  import: string;
  durable: string;
  fate: string;
}
const rows = new Map<string, Row>();
/** Time spent per step over all archives (printed with the table; never asserted). */
const stepMs: Record<string, number[]> = {};
async function step<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const t = Date.now();
  try {
    return await fn();
  } finally {
    (stepMs[name] ??= []).push(Date.now() - t);
  }
}

const env = () => ({ HOLDFAST_HOME: home });
const sha256File = (f: string) => createHash('sha256').update(readFileSync(f)).digest('hex');
const named = (a: CorpusArchive) => a.images.filter((i): i is typeof i & { name: string } => i.name !== null);

beforeAll(async () => {
  let t = Date.now();
  corpus = await buildCorpus(corpusDir);
  timings['corpus build (podman/buildah/skopeo/umoci)'] = corpus.reused ? 0 : Date.now() - t;
  t = Date.now();
  lab = await startLab({ nodes: NODES });
  home = tempHome();
  await Promise.all(
    lab.nodes.map(async (n) => {
      const r = await runCli(['node', 'add', n.name, '--host', n.host, '--port', String(n.port), '--identity', lab.clientKey, '--known-hosts', lab.knownHosts], env());
      if (r.code !== 0) throw new Error(`node add ${n.name}: ${r.stderr}`);
    }),
  );
  timings['lab start (5 nodes)'] = Date.now() - t;
  t = Date.now();
  const exported = await addCtrExports(corpus, lab.node(EXPORTER));
  timings['ctr exports'] = Date.now() - t;
  archives = [...corpus.archives, ...exported];
  const importers = NODES.filter((n) => n !== EXPORTER);
  archives.forEach((a, i) => {
    // the ctr exports go to the other nodes; everything else round-robin over all
    const node = a.format.startsWith('ctr-export') ? importers[i % importers.length]! : NODES[i % NODES.length]!;
    groups.set(node, [...(groups.get(node) ?? []), a]);
  });
  for (const n of lab.nodes) watchers.set(n.name, startK3sWatcher(n, { settleMs: 1000 }));
}, 300_000);

afterAll(async () => {
  for (const w of watchers.values()) await w.stop();
  await lab?.stop();
  if (ownCorpusDir) rmSync(corpusDir, { recursive: true, force: true });
  const table = [...rows.values()];
  const cols: (keyof Row)[] = ['archive', 'tool', 'format', 'inspect', 'import', 'durable', 'fate'];
  const width = Object.fromEntries(cols.map((c) => [c, Math.max(c.length, ...table.map((r) => r[c].length))])) as Record<keyof Row, number>;
  const line = (r: Record<keyof Row, string>) => `| ${cols.map((c) => r[c].padEnd(width[c])).join(' | ')} |`;
  const out = [
    `corpus: ${archives.length} archives built by ${Object.values(corpus?.versions ?? {}).join(', ')}`,
    ...Object.entries(timings).map(([k, v]) => `  ${k}: ${(v / 1000).toFixed(1)} s`),
    ...Object.entries(stepMs).map(([k, v]) => `  ${k}: ${v.length} × ${(v.reduce((x, y) => x + y, 0) / v.length / 1000).toFixed(1)} s on average`),
    `  node groups (in parallel): ${(groupsMs / 1000).toFixed(1)} s`,
    line(Object.fromEntries(cols.map((c) => [c, c])) as Record<keyof Row, string>),
    `|${cols.map((c) => '-'.repeat(width[c] + 2)).join('|')}|`,
    ...table.map(line),
  ];
  console.log(out.join('\n'));
});

/**
 * What the node's k3s watcher did with `file`: imported or failed. A file it does neither with
 * within the bound is a lab that cannot import it: fail loudly with that, never wait silently.
 */
async function k3sOutcome(node: LabNodeHandle, file: string): Promise<{ imported?: ImportedArchive; failed?: FailedImport }> {
  const w = watchers.get(node.name)!;
  for (let waited = 0; waited < 60_000; waited += 100) {
    const imported = w.imported.find((x) => x.archive === file);
    if (imported) return { imported };
    const failed = w.failed.find((x) => x.archive === file);
    if (failed) return { failed };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${node.name}: the lab's k3s watcher neither imported nor failed ${file} in 60 s`);
}

/** One archive through inspect → upload → k3s import → pin → rm-archive, its row filled in. */
async function throughHoldfast(expect: ExpectStatic, node: LabNodeHandle, a: CorpusArchive): Promise<void> {
  const base = path.basename(a.file);
  const row: Row = { archive: base, tool: a.tool, format: `${a.format}, ${a.compression}`, inspect: '', import: '', durable: '', fate: '' };
  rows.set(a.id, row);

  // 1. local inspection: the images, platforms and names as k3s will name them, and what to know
  const ins = await step('inspect', () => readLocalArchive(a.file));
  expect.soft(ins.images.map((i) => i.name), `${base}: names`).toEqual(a.images.map((i) => i.name));
  expect.soft(ins.images.map((i) => i.configDigest), `${base}: image ids`).toEqual(a.images.map((i) => i.imageId));
  expect.soft(ins.images.map((i) => i.platforms), `${base}: platforms`).toEqual(a.images.map((i) => i.platforms));
  const want: RegExp[] = [
    ...(a.missingPlatforms ?? []).map((p) => new RegExp(`${p} is listed but its blobs are not in the archive`)),
    ...a.images.filter((i) => i.name === null).map(() => /has no name in the archive: k3s imports its content but creates no image/),
    ...(a.k3sRetagFails ? named(a).map((i) => new RegExp(`^${i.name.replace(/\./g, '\\.')} is only a tag`)) : []),
  ];
  expect.soft(ins.warnings.length, `${base}: warnings ${JSON.stringify(ins.warnings)}`).toBe(want.length);
  for (const w of want) expect.soft(ins.warnings.some((x) => w.test(x)), `${base}: a warning ${w}`).toBe(true);
  row.inspect = `${ins.format}: ${ins.images.map((i) => `${i.name ?? '(unnamed)'} [${i.platforms.join('+')}]`).join(', ')}${ins.warnings.length ? ` — ${ins.warnings.length} warning(s)` : ''}`;

  // 2. upload: verified bytes in the node's images dir
  const up = await step('holdfast upload', () => runCli(['upload', node.name, a.file], env(), 120_000));
  expect.soft(up.code, `${base}: upload ${up.stderr}`).toBe(0);
  const onNode = path.join(node.hostImagesDir, base);
  expect.soft(existsSync(onNode) && sha256File(onNode), `${base}: bytes on the node`).toBe(ins.sha256);

  // 3. k3s's watcher imports it: exactly the names k3s gives, pinned by k3s
  const k3s = await step('k3s watcher import', () => k3sOutcome(node, onNode));
  const names = named(a).map((i) => i.name);
  if (a.k3sRetagFails) {
    // k3s pins the bare-tag name, then fails to retag it and logs the import as failed
    expect.soft(k3s.failed?.error, `${base}: k3s's error`).toMatch(new RegExp(`failed to retag images: failed to parse tag for image ${names[0]!.replace(/\./g, '\\.')}`));
    expect.soft(k3s.failed?.images, `${base}: pinned before the error`).toEqual(names);
    row.import = `k3s pins ${names.join(', ')}, then logs "failed to parse tag"`;
  } else {
    expect.soft(k3s.failed?.error, `${base}: k3s import failed`).toBeUndefined();
    expect.soft(k3s.imported?.images, `${base}: names k3s created`).toEqual(names);
    row.import = names.length ? `imported: ${names.join(', ')}` : 'content imported, no image created';
  }
  for (const img of a.images) {
    if (img.name === null) {
      // k3s creates no image for it: CRI (kubelet) does not know the image at all
      expect.soft(await criImageStatus(node, img.imageId), `${base}: unnamed image unknown to CRI`).toBeNull();
      continue;
    }
    const labels = await labelsOf(node, img.name).catch(() => ({}) as Record<string, string>);
    expect.soft({ ref: img.name, k3s: labels[K3S], cri: labels[CRI] }).toEqual({ ref: img.name, k3s: 'pinned', cri: 'pinned' });
    expect.soft(await criPinned(node, img.imageId, true), `${base}: CRI sees ${img.name} pinned`).toBe(true);
  }

  // 4. durable pins for what the archive brings
  const pin = await step('holdfast pin --archive', () => runCli(['pin', node.name, '--archive', base, '--json'], env()));
  expect.soft(pin.code, `${base}: pin ${pin.stderr}`).toBe(0);
  const plan = (pin.code === 0 ? JSON.parse(pin.stdout) : { changes: [], unchanged: [] }) as PinPlan;
  for (const n of names) expect.soft(plan.changes.map((c) => c.ref), `${base}: pin changed`).toContain(n);
  for (const img of named(a)) {
    const labels = await labelsOf(node, img.name).catch(() => ({}) as Record<string, string>);
    expect.soft({ ref: img.name, k3s: labels[K3S], cri: labels[CRI] }).toEqual({ ref: img.name, k3s: undefined, cri: 'pinned' });
    expect.soft(await criPinned(node, img.imageId, true), `${base}: CRI sees ${img.name} pinned (durable)`).toBe(true);
  }
  row.durable = names.length ? `${plan.changes.length} refs durable` : `nothing to pin (${plan.changes.length} changes)`;

  // 5. safe removal: allowed once everything it brings is durable; refused when k3s kept nothing
  const rm = await step('holdfast rm-archive', () => runCli(['rm-archive', node.name, base], env()));
  if (names.length === a.images.length) {
    expect.soft(rm.code, `${base}: rm-archive ${rm.stderr}`).toBe(0);
    expect.soft(rm.stdout, `${base}: rm-archive output`).toMatch(new RegExp(`^removed ${base.replace(/\./g, '\\.')} \\(`));
    expect.soft(existsSync(onNode), `${base}: gone from the node`).toBe(false);
    row.fate = 'removed';
  } else {
    // an unnamed image never becomes present, so Holdfast cannot prove removal loses nothing
    expect.soft(rm.code, `${base}: rm-archive of an archive k3s names nothing from`).toBe(3);
    expect.soft(rm.stderr, `${base}: why`).toContain('an unnamed image is not in containerd');
    expect.soft(existsSync(onNode), `${base}: still on the node`).toBe(true);
    row.fate = 'rm-archive refused (unnamed image never present)';
  }
}

/** After an emulated k3s restart: every name the group brought is still pinned, for CRI too. */
async function afterRestart(expect: ExpectStatic, node: LabNodeHandle, group: CorpusArchive[]): Promise<void> {
  const predicted = JSON.parse((await runCli(['images', node.name, '--json'], env())).stdout) as ImageRef[];
  const report = await step('emulated k3s restart', () => emulateK3sStart(node));
  expect.soft(report.failed, `${node.name}: restart failures`).toEqual([]);
  for (const a of group) {
    const row = rows.get(a.id)!;
    const stayed = a.images.filter((i) => i.name === null).length > 0;
    if (stayed) {
      // still in the images dir: re-imported at the restart, naming nothing again
      expect.soft(report.imported.find((x) => x.archive === path.join(node.hostImagesDir, path.basename(a.file)))?.images).toEqual([]);
    }
    const kept: string[] = [];
    for (const img of named(a)) {
      const p = predicted.find((r) => r.name === img.name);
      expect.soft({ ref: img.name, afterRestart: p?.afterRestart }, `${a.id}: Holdfast's prediction`).toEqual({ ref: img.name, afterRestart: 'pinned' });
      const labels = await labelsOf(node, img.name).catch(() => ({}) as Record<string, string>);
      expect.soft({ ref: img.name, k3s: labels[K3S], cri: labels[CRI] }, `${a.id}: after restart`).toEqual({ ref: img.name, k3s: undefined, cri: 'pinned' });
      const cri = await criPinned(node, img.imageId, true);
      expect.soft(cri, `${a.id}: CRI after restart`).toBe(true);
      if (labels[CRI] === 'pinned' && cri) kept.push(img.name);
    }
    for (const img of a.images.filter((i) => i.name === null)) expect.soft(await criImageStatus(node, img.imageId)).toBeNull();
    row.fate += kept.length === named(a).length && kept.length ? '; pinned after restart (CRI too)' : kept.length ? `; only ${kept.join(', ')} pinned after restart` : '; nothing kept';
  }
}

let groupsMs = 0;
describe.concurrent('the corpus, one lab node per group', () => {
  for (const name of NODES) {
    it(`${name}: every archive of its group inspected, uploaded, imported, pinned, removed, restarted`, async ({ expect }) => {
      const node = lab.node(name);
      const group = groups.get(name) ?? [];
      expect(group.length).toBeGreaterThan(0);
      const t = Date.now();
      for (const a of group) await throughHoldfast(expect, node, a);
      await afterRestart(expect, node, group);
      groupsMs = Math.max(groupsMs, Date.now() - t);
    }, 600_000);
  }
});
