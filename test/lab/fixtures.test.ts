import { describe, expect, it } from 'vitest';
import { buildImageArchive } from '../../lab/fixtures.ts';
import { archiveImageNames, normalizeDockerRef, repositoryOf } from '../../lab/k3s.ts';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

describe('fixture archives', () => {
  it('are deterministic: same seed → same digests, other seed → other digests', async () => {
    const a = await buildImageArchive({ format: 'oci', images: [{ name: 'docker.io/x/a:1', seed: 's' }] });
    const b = await buildImageArchive({ format: 'oci', images: [{ name: 'docker.io/x/b:2', seed: 's' }] });
    const c = await buildImageArchive({ format: 'oci', images: [{ name: 'docker.io/x/a:1', seed: 't' }] });
    expect(a.tar.equals((await buildImageArchive({ format: 'oci', images: [{ name: 'docker.io/x/a:1', seed: 's' }] })).tar)).toBe(true);
    expect(b.images[0]!.digest).toBe(a.images[0]!.digest);
    expect(b.images[0]!.configDigest).toBe(a.images[0]!.configDigest);
    expect(c.images[0]!.digest).not.toBe(a.images[0]!.digest);
  });

  it('multi-platform images get an index and report the amd64 config', async () => {
    const r = await buildImageArchive({
      format: 'oci',
      images: [{ name: 'docker.io/x/m:1', platforms: ['linux/arm64/v8', 'linux/amd64'] }],
    });
    const img = r.images[0]!;
    expect(img.platforms.map((p) => p.platform)).toEqual(['linux/arm64/v8', 'linux/amd64']);
    expect(img.configDigest).toBe(img.platforms[1]!.configDigest);
    expect(img.digest).not.toBe(img.platforms[0]!.manifestDigest);
    await expect(
      buildImageArchive({ format: 'docker', images: [{ name: 'docker.io/x/m:1', platforms: ['linux/arm64', 'linux/amd64'] }] }),
    ).rejects.toThrow(/oci/);
  });

  it('archive names are read exactly as k3s\'s importer creates them', async () => {
    const dir = await mkdtemp('/tmp/hffx-');
    try {
      const d = await buildImageArchive({ format: 'docker', images: [{ name: 'docker.io/library/app:1.0' }, { name: 'quay.io/a/b:2' }] });
      await writeFile(join(dir, 'd.tar'), d.tar);
      expect(await archiveImageNames(join(dir, 'd.tar'))).toEqual(['docker.io/library/app:1.0', 'quay.io/a/b:2']);
      const o = await buildImageArchive({ format: 'oci', images: [{ name: 'localhost:5000/x:3' }] });
      await writeFile(join(dir, 'o.tar'), o.tar);
      expect(await archiveImageNames(join(dir, 'o.tar'))).toEqual(['localhost:5000/x:3']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    expect(normalizeDockerRef('alpine')).toBe('docker.io/library/alpine:latest');
    expect(normalizeDockerRef('user/app:1')).toBe('docker.io/user/app:1');
    expect(normalizeDockerRef('localhost/app')).toBe('localhost/app:latest');
    expect(normalizeDockerRef('reg.io:5000/a/b@sha256:00')).toBe('reg.io:5000/a/b@sha256:00');
    expect(repositoryOf('reg.io:5000/a/b:1')).toBe('reg.io:5000/a/b');
    expect(repositoryOf('reg.io:5000/a/b')).toBe('reg.io:5000/a/b');
  });
});
