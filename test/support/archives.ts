// Helpers for the archive-format tests: tiny tars built in memory, repacking, CLI compression.
import { Readable, type Transform } from 'node:stream';
import { gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import { runBuffer } from '../../lab/exec.ts';
import type { ArchiveCompression } from '../../src/shared/archiveSuffixes.ts';

export { packTar, type TarEntry } from '../../lab/tar.ts';
import { packTar, type TarEntry } from '../../lab/tar.ts';

/** The regular files of a tar, in order (directories, links and the like left out). */
export async function unpackTar(input: Buffer): Promise<{ name: string; data: Buffer }[]> {
  const entries: { name: string; data: Buffer }[] = [];
  const extract = tar.extract();
  await new Promise<void>((resolve, reject) => {
    extract.on('entry', (h, stream, next) => {
      const parts: Buffer[] = [];
      stream.on('data', (c: unknown) => {
        parts.push(c as Buffer);
      });
      stream.on('end', () => {
        if (h.type === 'file') entries.push({ name: h.name, data: Buffer.concat(parts) });
        next();
      });
    });
    extract.on('finish', resolve);
    extract.on('error', reject);
    extract.end(input);
  });
  return entries;
}

/** Re-packs a tar keeping regular files only, optionally dropping or renaming some. */
export async function repackTar(input: Buffer, edit: (name: string, data: Buffer) => TarEntry | null): Promise<Buffer> {
  const kept = (await unpackTar(input)).map((e) => edit(e.name, e.data)).filter((e): e is TarEntry => e !== null);
  return packTar(kept);
}

export async function compressWith(data: Buffer, how: ArchiveCompression, argv?: string[]): Promise<Buffer> {
  if (argv) return runBuffer(argv, { input: data });
  switch (how) {
    case 'none':
      return data;
    case 'gzip':
      return gzipSync(data);
    case 'zstd':
      return runBuffer(['zstd', '-q', '-c'], { input: data });
    case 'bzip2':
      return runBuffer(['bzip2', '-c'], { input: data });
    case 'lz4':
      return runBuffer(['lz4', '-q', '-c'], { input: data });
  }
}

/** A Readable over a buffer in chunks of the given size (default 64 KiB). */
/**
 * `data` piped through `t` in `size`-byte pieces to a reader that pauses for `pauseMs` after
 * every chunk it gets, as a slow consumer (the tar reader hashing blobs) does; all it got.
 */
export function readSlowly(t: Transform, data: Buffer, size: number, pauseMs = 1): Promise<Buffer> {
  const out: Buffer[] = [];
  return new Promise<Buffer>((resolve, reject) => {
    chunked(data, size).pipe(t);
    t.on('error', reject);
    t.on('end', () => resolve(Buffer.concat(out)));
    t.on('data', (b: Buffer) => {
      out.push(b);
      t.pause();
      setTimeout(() => t.resume(), pauseMs);
    });
  });
}

export function chunked(data: Buffer, size = 64 * 1024): Readable {
  let off = 0;
  return new Readable({
    read() {
      if (off >= data.length) {
        this.push(null);
        return;
      }
      this.push(data.subarray(off, off + size));
      off += size;
    },
  });
}

/** Deterministic pseudo-random bytes (xorshift32; fast, not crypto). */
export function noise(n: number, seed = 1): Buffer {
  const b = Buffer.alloc(n);
  let x = seed | 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  return b;
}
