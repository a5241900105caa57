// Holdfast's prediction of every pin's fate at the next k3s start, against what the emulated
// start really does — over the whole scenario matrix:
//   node level:   .cache.json on/off × release with/without the re-pin fix (× k3s/RKE2: the
//                 nodes' distro, $HOLDFAST_LAB_DISTRO — the integration-rke2 project runs RKE2)
//   archive level: archive kept/removed/changed × pin durable/k3s/none × top level/subfolder
// and digest references (k3s adds one per image) and CRI's own sha256:<id> records everywhere.
// A reference agrees when its CRI label after the restart is present exactly when Holdfast said
// "pinned"; an image agrees when CRI (what kubelet's GC reads) reports it pinned exactly when
// Holdfast said one of its references stays pinned (on lines that CRI-pin at all).
// The counts are printed for the closing note; the test fails on any disagreement.
import { mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  criPinned,
  emulateK3sStart,
  hostImagesDirOf,
  listImages,
  startLab,
  writeImageArchive,
  type Distro,
  type Lab,
} from '../../lab';
import type { ImageRef } from '../../src/shared/domain/images';
import { isImageIdRef } from '../../src/shared/protection';
import { criPinsHonoured, labDistro, runCli, tempHome } from './support';

const CRI = 'io.cri-containerd.pinned';
const ARCHIVE_STATES = ['kept', 'removed', 'changed'] as const;
const PIN_STATES = ['durable', 'k3s', 'none'] as const;
const PLACES = ['top', 'sub'] as const;

interface NodeScenario {
  name: string;
  cache: boolean;
  fix: boolean;
  distro: Distro;
}

// The whole matrix on every line, for the distro the lab nodes are shaped as: k3s, or RKE2 (its
// images dir, label and binary from the start) in the integration-rke2 project, on 2.x.
const LINE = process.env.HOLDFAST_LAB_CONTAINERD ?? '2';
const DISTRO: Distro = labDistro().distro;
const SCENARIOS: NodeScenario[] = [];
for (const cache of [false, true]) {
  for (const fix of [false, true]) {
    SCENARIOS.push({ name: `m-${cache ? 'c' : 'n'}${fix ? 'f' : 'x'}-${DISTRO === 'k3s' ? 'k' : 'r'}`, cache, fix, distro: DISTRO });
  }
}

/** A release of the distro with (v1.36.3) or without (v1.32.5) the .cache.json re-pin fix. */
const versionFor = (s: NodeScenario) => `v1.${s.fix ? '36.3' : '32.5'}+${s.distro === 'k3s' ? 'k3s' : 'rke2r'}1`;

let lab: Lab;
let home: string;
const tally = { scenarios: 0, refs: 0, refsAgree: 0, images: 0, imagesAgree: 0 };

async function cli<T>(args: string[]): Promise<T> {
  const r = await runCli(args, { HOLDFAST_HOME: home }, 120_000);
  if (r.code !== 0) throw new Error(`holdfast ${args.join(' ')} exited ${r.code}\n${r.stderr}${r.stdout}`);
  return (args.includes('--json') ? JSON.parse(r.stdout) : r.stdout) as T;
}

beforeAll(async () => {
  lab = await startLab({ nodes: SCENARIOS.map((s) => s.name) });
  home = tempHome();
});

afterAll(async () => {
  await lab?.stop();
  // One line for the closing note / CI log.
  console.log(
    `fate matrix (${DISTRO}) on containerd ${LINE}: ${tally.scenarios} archive scenarios, ` +
      `${tally.refsAgree}/${tally.refs} references and ${tally.imagesAgree}/${tally.images} images (CRI) agree`,
  );
});

describe('predicted fate equals the emulated k3s start over the scenario matrix', () => {
  for (const sc of SCENARIOS) {
    it(`${sc.distro}, cache ${sc.cache ? 'on' : 'off'}, ${sc.fix ? 'with' : 'without'} the re-pin fix`, async () => {
      const node = lab.node(sc.name);
      const dir = hostImagesDirOf(node, sc.distro);
      expect(dir).toBe(node.hostImagesDir); // the node is shaped as the distro it runs
      mkdirSync(path.join(dir, 'sub'), { recursive: true });
      await node.installDistroBinary(sc.distro, versionFor(sc));
      if (sc.cache) writeFileSync(path.join(dir, '.cache.json'), ''); // an empty file turns the cache on
      const opts = { distro: sc.distro, cacheFix: sc.fix };

      // One archive (one image) per archive state × pin state × place.
      const cases: { file: string; image: string; archive: (typeof ARCHIVE_STATES)[number]; pin: (typeof PIN_STATES)[number] }[] = [];
      for (const archive of ARCHIVE_STATES) {
        for (const pin of PIN_STATES) {
          for (const place of PLACES) {
            const id = `${archive}-${pin}-${place}`;
            const rel = place === 'top' ? `${id}.tar` : `sub/${id}.tar.gz`;
            const image = `registry.local/matrix/${id}:1`;
            await writeImageArchive(path.join(dir, rel), { format: 'oci', compression: place === 'top' ? 'none' : 'gzip', images: [{ name: image }] });
            cases.push({ file: rel, image, archive, pin });
          }
        }
      }
      const first = await emulateK3sStart(node, opts);
      expect(first.failed).toEqual([]);

      // no --images-dir: Holdfast finds the distro's own
      await cli(['node', 'add', sc.name, '--host', node.host, '--port', String(node.port), '--identity', lab.clientKey, '--known-hosts', lab.knownHosts]);
      const durable = cases.filter((c) => c.pin === 'durable').map((c) => c.image);
      await cli(['pin', sc.name, ...durable]);
      for (const c of cases.filter((x) => x.pin === 'none')) {
        for (const img of (await listImages(node)).filter((i) => i.name.startsWith(c.image.slice(0, c.image.lastIndexOf(':'))))) {
          await node.ctr(['images', 'label', img.name, `io.cattle.${sc.distro}.pinned=`, `${CRI}=`]);
        }
      }
      for (const c of cases) {
        const file = path.join(dir, c.file);
        if (c.archive === 'removed') rmSync(file);
        if (c.archive === 'changed') {
          // a new build under the same name: other content, other size, newer mtime (whole
          // seconds newer, as SFTP and the cache see them)
          await writeImageArchive(file, { format: 'oci', compression: c.file.endsWith('.gz') ? 'gzip' : 'none', images: [{ name: c.image, seed: `${c.image}-v2`, layerBytes: 2048 }] });
          const later = new Date(Date.now() + 10_000);
          utimesSync(file, later, later);
        }
      }

      const predicted = await cli<ImageRef[]>(['images', sc.name, '--json']);
      await emulateK3sStart(node, opts);
      const afterList = await listImages(node);
      const after = new Map(afterList.map((i) => [i.name, i.labels]));
      const digestAfter = new Map(afterList.map((i) => [i.name, i.digest]));
      const honoured = await criPinsHonoured(node);
      tally.scenarios += cases.length;
      const disagreements: string[] = [];
      for (const ref of predicted) {
        if (isImageIdRef(ref)) continue;
        const pinned = after.get(ref.name)?.[CRI] === 'pinned';
        tally.refs++;
        if (pinned === (ref.afterRestart === 'pinned')) tally.refsAgree++;
        else disagreements.push(`${sc.name} ${ref.name}: predicted ${ref.afterRestart} (${ref.reason}), really ${pinned ? 'pinned' : 'unpinned'}`);
      }
      // Per image, as kubelet sees it — for images whose names all still point at them (a
      // "changed" archive moves its tag to a new build; the per-reference check covers that).
      for (const id of new Set(predicted.map((r) => r.imageId).filter((x): x is string => x !== null))) {
        const named = predicted.filter((r) => r.imageId === id && !isImageIdRef(r));
        if (named.length === 0 || !named.every((r) => digestAfter.get(r.name) === r.digest)) continue;
        const want = honoured && named.some((r) => r.afterRestart === 'pinned');
        const got = await criPinned(node, id, want);
        tally.images++;
        if (got === want) tally.imagesAgree++;
        else disagreements.push(`${sc.name} image ${id}: Holdfast says ${want ? 'pinned' : 'unpinned'}, CRI says ${got}`);
      }
      expect(disagreements).toEqual([]);
    });
  }
});
