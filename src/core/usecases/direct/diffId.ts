// A spooled layer's diff ID (the sha256 of its uncompressed tar), worked out on this machine.
// Direct delivery skips unpacking a layer whose snapshot the node already holds (named by the
// config's chain ID), so containerd would never compare the layer with the config's diff ID: an
// archive whose layer does not match its own config would pass on a node that happened to hold
// the snapshot and fail on a fresh one. Hashing the layer here gives both nodes one verdict.
// containerd's unpack decompresses gzip and zstd layers and reads anything else as a plain tar
// (docs/k3s-facts.md, "containerd's API, as Holdfast uses it"): the same here.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import { decompressor, sniffFormat } from '../../archives/format/decompress';

async function head(file: string): Promise<Buffer> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(8);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** sha256:… of the layer in `file` once decompressed as containerd decompresses it. */
export async function localDiffId(file: string, signal?: AbortSignal): Promise<string> {
  const kind = sniffFormat(await head(file));
  const hash = createHash('sha256');
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      done();
    },
  });
  const steps = kind === 'gzip' || kind === 'zstd' ? [createReadStream(file), decompressor(kind), sink] : [createReadStream(file), sink];
  await pipeline(steps, signal ? { signal } : {});
  return 'sha256:' + hash.digest('hex');
}

const memo = new WeakMap<object, Map<string, Promise<string>>>();

/** localDiffId, worked out once per spooled bundle and layer (every node of a run shares it). */
export function bundleDiffId(bundle: object, digest: string, file: string, signal?: AbortSignal): Promise<string> {
  let byDigest = memo.get(bundle);
  if (!byDigest) memo.set(bundle, (byDigest = new Map()));
  let hit = byDigest.get(digest);
  if (!hit) {
    hit = localDiffId(file, signal);
    // A failed or cancelled run is not remembered: the next one works it out again.
    hit.catch(() => byDigest.delete(digest));
    byDigest.set(digest, hit);
  }
  return hit;
}
