import { describe, expect, it } from 'vitest';
import { SignatureMembers } from '../../../../src/core/signatures/archive';

const hex = (c: string) => c.repeat(64);

async function feed(members: SignatureMembers, path: string, data: Buffer | string, chunk = 3): Promise<boolean> {
  const buf = Buffer.from(data);
  const sink = members.sink({ path, size: buf.length });
  if (!sink) return false;
  for (let i = 0; i < buf.length; i += chunk) await sink.write(buf.subarray(i, i + chunk));
  await sink.end('sha256:unused');
  return true;
}

describe('SignatureMembers: what an archive keeps for signatures', () => {
  it('keeps index.json and JSON blobs, by their path in the layout', async () => {
    const m = new SignatureMembers('a.tar');
    expect(await feed(m, './index.json', '{"schemaVersion":2,"manifests":[]}')).toBe(true);
    expect(await feed(m, `blobs/sha256/${hex('a')}`, '  \n{"x":1}')).toBe(true);
    const layout = await m.layout();
    expect(layout.entries).toEqual([]);
  });

  it('skips other members and large blobs without a sink, and drops blobs that are not JSON', async () => {
    const m = new SignatureMembers('a.tar');
    expect(await feed(m, 'manifest.json', '[]')).toBe(false);
    expect(await feed(m, `blobs/sha256/${hex('b')}.tmp`, '{}')).toBe(false);
    expect(m.sink({ path: `blobs/sha256/${hex('c')}`, size: 2 * 1024 * 1024 })).toBeNull();
    await feed(m, `blobs/sha256/${hex('d')}`, Buffer.from([0x1f, 0x8b, 0x08, 0x00]));
    await feed(m, 'index.json', '{"manifests":[]}');
    const layout = await m.layout();
    await expect(layout.blob({ digest: `sha256:${hex('d')}`, size: 4 }, 'a payload')).rejects.toThrow(/a\.tar: a payload is not in the archive \(blobs\/sha256\/d{64}, as JSON of at most 1,048,576 bytes\)/);
  });

  it("keeps a Zarf package's layout under images/ when given that root, and reads it there", async () => {
    const m = new SignatureMembers('zarf-package-a-amd64-1.0.0.tar.zst', ['', 'images']);
    expect(await feed(m, 'zarf.yaml', 'kind: ZarfPackageConfig')).toBe(false);
    expect(await feed(m, 'images/index.json', '{"manifests":[]}')).toBe(true);
    expect(await feed(m, `images/blobs/sha256/${hex('a')}`, '{}')).toBe(true);
    expect(await feed(m, `charts/blobs/sha256/${hex('b')}`, '{}')).toBe(false);
    expect((await m.layout('images')).entries).toEqual([]);
    await expect(m.layout()).rejects.toThrow(/index\.json is not in the archive/);
  });

  it('an archive without index.json has no signatures layout', async () => {
    await expect(new SignatureMembers('docker.tar').layout()).rejects.toThrow(/docker\.tar: an OCI layout's index\.json is not in the archive \(index\.json,/);
  });
});
