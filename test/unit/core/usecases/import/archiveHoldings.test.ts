// The import wizard's holdings over a real archive: readLocalArchive names the config digest
// of every complete platform, so a node holds a multi-platform image whatever its platform is
// (shared/archiveHoldings compares them with the image id the node's reference carries).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeImageArchive, type WrittenImage } from '../../../../../lab/fixtures.ts';
import { holdingsOf } from '../../../../../src/shared/archiveHoldings.ts';
import { readLocalArchive } from '../../../../../src/core/usecases/import/localArchive.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hf-holdings-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('what a node holds of a real archive', () => {
  it('every platform of a multi-platform image counts, by its config digest', async () => {
    const file = join(dir, 'tools.tar');
    const { images } = await writeImageArchive(file, {
      format: 'oci',
      images: [{ name: 'registry.local/tools/probe:1', platforms: ['linux/amd64', 'linux/arm64'] }, { name: 'docker.io/library/web:2' }],
    });
    const [probe, web] = images as [WrittenImage, WrittenImage];
    const archive = await readLocalArchive(file);
    expect(archive.images.map((i) => i.configDigests)).toEqual([probe.platforms.map((p) => p.configDigest), [web.configDigest]]);

    const arm = probe.platforms.find((p) => p.platform === 'linux/arm64')!.configDigest;
    // An arm64 node holds the probe under its own platform's image id, and lacks web.
    expect(holdingsOf(archive.images, [{ name: probe.name, imageId: arm }])).toEqual({ known: true, total: 2, lacking: [web.name] });
    expect(holdingsOf(archive.images, [{ name: probe.name, imageId: arm }, { name: 'web:2', imageId: web.configDigest }])).toEqual({ known: true, total: 2, lacking: [] });
  });
});
