import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SignatureLayout } from '../../../../src/core/signatures/layout';

const dir = mkdtempSync(path.join(os.tmpdir(), 'hf-siglayout-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const manifest = (i: number, extra: object = {}) => ({ mediaType: 'application/vnd.oci.image.manifest.v1+json', digest: `sha256:${i.toString(16).padStart(64, '0')}`, size: 500, ...extra });

function layout(name: string, manifests: object[]): string {
  const d = path.join(dir, name);
  mkdirSync(path.join(d, 'blobs', 'sha256'), { recursive: true });
  writeFileSync(path.join(d, 'index.json'), JSON.stringify({ schemaVersion: 2, manifests }));
  return d;
}

/** A manifest written as a blob of the layout `d`; its descriptor. */
function put(d: string, doc: object): { mediaType: string; digest: string; size: number } {
  const data = JSON.stringify(doc);
  const digest = 'sha256:' + createHash('sha256').update(data).digest('hex');
  writeFileSync(path.join(d, 'blobs', 'sha256', digest.slice(7)), data);
  return { mediaType: 'application/vnd.oci.image.manifest.v1+json', digest, size: Buffer.byteLength(data) };
}

const writeIndex = (d: string, manifests: object[]) => writeFileSync(path.join(d, 'index.json'), JSON.stringify({ schemaVersion: 2, manifests }));

describe('SignatureLayout', () => {
  it('refuses 10,000 signature manifests before reading any of them', async () => {
    // The blobs do not exist: reading even one would fail with ENOENT instead.
    const l = await SignatureLayout.open(layout('many', Array.from({ length: 10_000 }, (_, i) => manifest(i))));
    await expect(l.referrersOf(`sha256:${'0'.repeat(64)}`)).rejects.toThrow(/10,000 unnamed manifests to read for signatures: over the limit signature\.manifests \(1,000\)/);
  });

  it('refuses a signature blob its descriptor says is 100 MiB, without reading it', async () => {
    const l = await SignatureLayout.open(layout('big', []));
    await expect(l.blob({ digest: `sha256:${'1'.repeat(64)}`, size: 100 * 1024 * 1024 }, 'a Sigstore bundle')).rejects.toThrow(/too large: over the limit signature\.bytes \(1 MiB\)/);
  });

  it('finds a legacy tag alone or at the end of a full reference', async () => {
    const tag = `sha256-${'2'.repeat(64)}.sig`;
    const l = await SignatureLayout.open(
      layout('tags', [
        manifest(1, { annotations: { 'org.opencontainers.image.ref.name': tag } }),
        manifest(2, { annotations: { 'org.opencontainers.image.ref.name': `reg.example/app:${tag}` } }),
        manifest(3, { annotations: { 'org.opencontainers.image.ref.name': `x${tag}` } }),
      ]),
    );
    expect(l.tagged(tag).map((e) => e.digest)).toEqual([manifest(1).digest, manifest(2).digest]);
  });

  it("finds a Zarf package's `.sig` tag, named by base.name; the image beside it stays an image", async () => {
    const d = layout('zarf', []);
    const image = put(d, { schemaVersion: 2, layers: [] });
    const tag = `sha256-${image.digest.slice(7)}.sig`;
    const sig = put(d, { schemaVersion: 2, layers: [{ digest: image.digest }] });
    writeIndex(d, [
      { ...image, annotations: { 'org.opencontainers.image.base.name': 'ghcr.io/site/app:1' } },
      { ...sig, annotations: { 'org.opencontainers.image.base.name': `ghcr.io/site/app:${tag}` } },
    ]);
    const l = await SignatureLayout.open(d);
    expect(l.tagged(tag).map((e) => e.digest)).toEqual([sig.digest]);
    expect([...(await l.signatureManifests())]).toEqual([sig.digest]);
  });

  it('reads a referrer Hauler names after its image (kind dev.hauler/referrers/…), and not the image itself', async () => {
    const d = layout('hauler', []);
    const image = put(d, { schemaVersion: 2, layers: [] });
    const referrer = put(d, { schemaVersion: 2, subject: { digest: image.digest, size: image.size }, layers: [] });
    const names = { 'org.opencontainers.image.ref.name': 'library/app:1', 'io.containerd.image.name': 'docker.io/library/app:1' };
    writeIndex(d, [
      { ...image, annotations: { kind: 'dev.hauler/image', ...names } },
      { ...referrer, annotations: { kind: `dev.hauler/referrers/${referrer.digest.slice(7)}`, ...names } },
    ]);
    const l = await SignatureLayout.open(d);
    expect((await l.referrersOf(image.digest)).map((r) => r.entry.digest)).toEqual([referrer.digest]);
    expect([...(await l.signatureManifests())]).toEqual([referrer.digest]);
  });

  it('says when a directory is not an OCI layout', async () => {
    const d = path.join(dir, 'not');
    mkdirSync(d);
    writeFileSync(path.join(d, 'index.json'), '{}');
    await expect(SignatureLayout.open(d)).rejects.toThrow(/index\.json has no manifests list; is it an OCI layout\?/);
  });
});
