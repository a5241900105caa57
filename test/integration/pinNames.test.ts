// pin and unpin find a reference as explain does (issue #49): a Docker-style short name resolves
// as CRI resolves it (holdfast-sample:1.0 → docker.io/library/holdfast-sample:1.0), and a name
// that is not on the node fails (NOT_FOUND, non-zero), preview or not, changing nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulateK3sStart, labelsOf, startLab, type Lab } from '../../lab';
import { SEED_SAMPLE_IMAGE, writeSeedArchive } from '../../lab/seed.ts';
import { addLabNode, runCli, tempHome } from './support';

let lab: Lab;
let home: string;
const CRI = 'io.cri-containerd.pinned';
const SHORT = 'holdfast-sample:1.0';

const cli = (args: string[]) => runCli(args, { HOLDFAST_HOME: home });

beforeAll(async () => {
  lab = await startLab({ nodes: ['pn1'] });
  home = tempHome();
  const node = lab.node('pn1');
  // The seed: a k3s start imports holdfast-sample:1.0 and k3s-pins it.
  await writeSeedArchive(node.hostImagesDir);
  expect((await emulateK3sStart(node)).failed).toEqual([]);
  await addLabNode(lab, node, home);
});

afterAll(async () => {
  await lab?.stop();
});

describe('pin and unpin by a short name', () => {
  it('pin previews and pins the seeded image by its short name', async () => {
    const preview = await cli(['pin', 'pn1', SHORT, '--dry-run']);
    expect(preview.code, preview.stderr).toBe(0);
    expect(preview.stdout).toContain(`would be made durable: ${SEED_SAMPLE_IMAGE}`);
    expect(preview.stdout).not.toContain('not present');
    const r = await cli(['pin', 'pn1', SHORT]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`made durable: ${SEED_SAMPLE_IMAGE}`);
    const labels = await labelsOf(lab.node('pn1'), SEED_SAMPLE_IMAGE);
    expect(labels[CRI]).toBe('pinned');
    expect(labels['io.cattle.k3s.pinned']).toBeUndefined();
  });

  it('unpin releases it by the same short name', async () => {
    const r = await cli(['unpin', 'pn1', SHORT]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`released: ${SEED_SAMPLE_IMAGE}`);
    expect((await labelsOf(lab.node('pn1'), SEED_SAMPLE_IMAGE))[CRI]).toBeUndefined();
  });

  it('a name that is not on the node fails, previewed or not, and changes nothing', async () => {
    for (const args of [
      ['pin', 'pn1', 'nope:1', '--dry-run'],
      ['pin', 'pn1', SHORT, 'nope:1'],
      ['unpin', 'pn1', 'nope:1'],
    ]) {
      const r = await cli(args);
      expect({ args, code: r.code }).toEqual({ args, code: 1 });
      expect(r.stderr).toContain('no reference "nope:1" on pn1');
      expect(r.stdout).toBe('');
    }
    // (the pin with nope:1 beside the real name pinned nothing)
    expect((await labelsOf(lab.node('pn1'), SEED_SAMPLE_IMAGE))[CRI]).toBeUndefined();
  });
});
