// Memory stays bounded while streaming a large archive: a synthetic docker-save whose 200 MiB
// layer comes before manifest.json (as docker save writes it), fed as a stream, never a file.
import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { readArchiveIndex } from '../../../../../src/core/archives/format/readIndex.ts';
import { chunked, noise, packTar } from '../../../../support/archives.ts';

const BIG = 200 * 1024 * 1024;
const CHUNK = noise(64 * 1024, 11); // small chunks: the generator itself must not buffer much
const sha = (b: Buffer | string): string => 'sha256:' + createHash('sha256').update(b).digest('hex');

/** A docker-save tar stream with one BIG-byte layer; resolves the layer digest when generated. */
function syntheticDockerSave(): { stream: Readable; layerDigest: Promise<string>; config: string } {
  const config = JSON.stringify({ os: 'linux', architecture: 'amd64', rootfs: { type: 'layers', diff_ids: [] } });
  const pack = tar.pack();
  const hash = createHash('sha256');
  const layerDigest = (async () => {
    await new Promise<void>((resolve, reject) => {
      const entry = pack.entry({ name: 'big/layer.tar', size: BIG }, (err) => (err ? reject(err) : resolve()));
      let sent = 0;
      const pump = (): void => {
        while (sent < BIG) {
          const c = CHUNK.subarray(0, Math.min(CHUNK.length, BIG - sent));
          // vary every chunk so nothing is trivially repetitive
          const v = Buffer.from(c);
          v.writeUInt32LE(sent / CHUNK.length, 0);
          hash.update(v);
          sent += v.length;
          if (!entry.write(v)) {
            entry.once('drain', pump);
            return;
          }
        }
        entry.end(() => undefined);
      };
      pump();
    });
    const h = sha(config).slice(7);
    pack.entry({ name: `${h}.json` }, config);
    pack.entry({ name: 'manifest.json' }, JSON.stringify([{ Config: `${h}.json`, RepoTags: ['big:1'], Layers: ['big/layer.tar'] }]));
    pack.finalize();
    return 'sha256:' + hash.digest('hex');
  })();
  return { stream: Readable.from(pack), layerDigest, config };
}

function watchRss(): { stop: () => number } {
  const base = process.memoryUsage.rss();
  let peak = base;
  const t = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 5);
  return {
    stop: () => {
      clearInterval(t);
      return Math.max(peak, process.memoryUsage.rss()) - base;
    },
  };
}

// The bound: under half the layer. Reading that buffered the layer (or any whole entry) would
// grow by 200 MiB or more; streaming grows by what GC has not yet given back, which on a loaded
// box reached 65 MiB once (the bound was 64 MiB then).
const BOUND = 96 * 2 ** 20;

describe('readArchiveIndex memory', () => {
  // Warm up (module loading, JIT) so the measurement sees only the streaming itself.
  beforeAll(async () => {
    const small = await packTar([{ name: 'x/layer.tar', data: noise(1 << 20) }, { name: 'readme', data: 'x' }]);
    await readArchiveIndex(chunked(small), { compression: 'none' }).catch(() => undefined);
  });

  it('200 MiB uncompressed: RSS grows by less than 96 MiB', { timeout: 30_000 }, async () => {
    const { stream, layerDigest, config } = syntheticDockerSave();
    const rss = watchRss();
    const index = await readArchiveIndex(stream, { compression: 'none' });
    const growth = rss.stop();
    expect(index.images[0]!.name).toBe('docker.io/library/big:1');
    expect(index.images[0]!.platforms[0]!.configDigest).toBe(sha(config));
    expect(index.images[0]!.platforms[0]!.layers).toEqual([{ digest: await layerDigest, size: BIG }]);
    expect(index.uncompressedBytes).toBeGreaterThan(BIG);
    expect(growth, `RSS grew ${(growth / 2 ** 20).toFixed(1)} MiB`).toBeLessThan(BOUND);
  });

  it('200 MiB through the lz4 CLI and our decoder: RSS grows by less than 96 MiB', { timeout: 30_000 }, async () => {
    const { stream, layerDigest } = syntheticDockerSave();
    const child = spawn('lz4', ['-q', '-c', '-B4', '-BD'], { stdio: ['pipe', 'pipe', 'inherit'] });
    stream.pipe(child.stdin);
    const rss = watchRss();
    const index = await readArchiveIndex(child.stdout, { compression: 'lz4' });
    const growth = rss.stop();
    expect(index.images[0]!.platforms[0]!.layers[0]!.digest).toBe(await layerDigest);
    expect(growth, `RSS grew ${(growth / 2 ** 20).toFixed(1)} MiB`).toBeLessThan(BOUND);
  });
});
