import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decompressor } from '../../../../../src/core/archives/format/decompress.ts';
import { ArchiveError } from '../../../../../src/core/archives/format/errors.ts';
import { ARCHIVE_SUFFIXES, classifyImagesDirPath } from '../../../../../src/shared/archiveSuffixes.ts';
import { Lz4FrameDecoder } from '../../../../../src/core/archives/format/lz4.ts';
import { xxh32 } from '../../../../../src/core/archives/format/xxh32.ts';
import type { ArchiveCompression } from '../../../../../src/shared/archiveSuffixes.ts';
import { chunked, compressWith, noise, readSlowly } from '../../../../support/archives.ts';

async function decompressAll(data: Buffer, c: ArchiveCompression, chunk = 64 * 1024): Promise<Buffer> {
  const out: Buffer[] = [];
  const d = decompressor(c);
  await new Promise<void>((resolve, reject) => {
    chunked(data, chunk).pipe(d);
    d.on('data', (b: Buffer) => out.push(b));
    d.on('end', resolve);
    d.on('error', reject);
  });
  return Buffer.concat(out);
}

async function decompressError(data: Buffer, c: ArchiveCompression): Promise<ArchiveError> {
  const e = await decompressAll(data, c).then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ArchiveError);
  return e as ArchiveError;
}

// 40 KiB of noise repeated: every 64 KiB block after the first can copy from the previous one,
// so linked blocks (-BD) compress far better than independent ones; then text, then noise.
const repeated = noise(40 * 1024, 7);
const SAMPLE = Buffer.concat([
  ...Array.from({ length: 30 }, () => repeated),
  Buffer.from('holdfast keeps the pins '.repeat(20_000)),
  noise(300 * 1024, 9),
  Buffer.alloc(200 * 1024), // long zero run: offset-1 matches
]);

describe('classifyImagesDirPath', () => {
  it.each([
    ['a.tar', 'none'],
    ['dir/b.tar.lz4', 'lz4'],
    ['c.tar.bz2', 'bzip2'],
    ['c.tbz', 'bzip2'],
    ['d.tar.gz', 'gzip'],
    ['d.tgz', 'gzip'],
    ['e.tar.zst', 'zstd'],
    ['e.tzst', 'zstd'],
  ])('%s is a %s archive', (p, c) => {
    expect(classifyImagesDirPath(p)).toEqual({ kind: 'archive', compression: c });
  });
  it.each(['A.TAR', 'x.tar.xz', 'x.tar.Gz', 'x.zst', 'x.gz', '.cache.json', 'x.tar.gz.part', 'README'])('%s is ignored (case-sensitive, k3s suffixes only)', (p) => {
    expect(classifyImagesDirPath(p)).toEqual({ kind: 'ignored' });
  });
  it('.txt is a pre-pull list', () => {
    expect(classifyImagesDirPath('/var/lib/rancher/k3s/agent/images/list.txt')).toEqual({ kind: 'prepull' });
  });
  it('releases before k3s PR #12237 match case-insensitively and read only the top level', () => {
    const old = 'top-level-case-insensitive' as const;
    expect(classifyImagesDirPath('APP.TAR.GZ', old)).toEqual({ kind: 'archive', compression: 'gzip' });
    expect(classifyImagesDirPath('x.Tar.Zst', old)).toEqual({ kind: 'archive', compression: 'zstd' });
    expect(classifyImagesDirPath('LIST.TXT', old)).toEqual({ kind: 'prepull' });
    expect(classifyImagesDirPath('sub/app.tar', old)).toEqual({ kind: 'ignored' });
    expect(classifyImagesDirPath('sub/list.txt', old)).toEqual({ kind: 'ignored' });
    expect(classifyImagesDirPath('x.tar.xz', old)).toEqual({ kind: 'ignored' });
    // and current releases: the opposite on both counts
    expect(classifyImagesDirPath('APP.TAR.GZ', 'recursive-case-sensitive')).toEqual({ kind: 'ignored' });
    expect(classifyImagesDirPath('sub/app.tar', 'recursive-case-sensitive')).toEqual({ kind: 'archive', compression: 'none' });
  });
  it('exports the suffix list in k3s order', () => {
    expect(ARCHIVE_SUFFIXES).toEqual(['.tar', '.tar.lz4', '.tar.bz2', '.tbz', '.tar.gz', '.tgz', '.tar.zst', '.tzst']);
  });
});

describe('xxh32', () => {
  it('matches the reference vectors', () => {
    expect(xxh32(Buffer.alloc(0))).toBe(0x02cc5d05);
    expect(xxh32(Buffer.from('abc'))).toBe(0x32d153ff);
    expect(xxh32(Buffer.alloc(0), 1)).toBe(0x0b2cb792);
  });
});

describe('lz4 frame decoder against the lz4 CLI', () => {
  const variants: [string, string[]][] = [
    ['default (-z: 4 MiB independent blocks, content checksum)', ['lz4', '-z', '-q', '-c']],
    ['-B4 -BD (64 KiB linked blocks)', ['lz4', '-q', '-c', '-B4', '-BD']],
    ['-B5 -BD -9 (256 KiB linked, high compression)', ['lz4', '-q', '-c', '-B5', '-BD', '-9']],
    ['--content-size', ['lz4', '-q', '-c', '--content-size']],
    ['-BX block checksums, --no-frame-crc', ['lz4', '-q', '-c', '-BX', '--no-frame-crc', '-B4']],
    ['-l legacy frame', ['lz4', '-q', '-c', '-l']],
  ];
  it.each(variants)('%s', async (_label, argv) => {
    const z = await compressWith(SAMPLE, 'lz4', argv);
    expect((await decompressAll(z, 'lz4')).equals(SAMPLE)).toBe(true);
    // Odd chunk sizes: headers and blocks straddle chunk boundaries.
    expect((await decompressAll(z, 'lz4', 4093)).equals(SAMPLE)).toBe(true);
  });

  it('linked blocks really reference the previous block (smaller output than independent)', async () => {
    const indep = await compressWith(SAMPLE, 'lz4', ['lz4', '-q', '-c', '-B4', '-BI']);
    const linked = await compressWith(SAMPLE, 'lz4', ['lz4', '-q', '-c', '-B4', '-BD']);
    expect(linked.length).toBeLessThan(indep.length * 0.7);
  });

  it('decodes concatenated frames and skips skippable frames', async () => {
    const a = await compressWith(Buffer.from('first frame\n'), 'lz4');
    const b = await compressWith(SAMPLE, 'lz4', ['lz4', '-q', '-c', '-B4', '-BD']);
    const skip = Buffer.alloc(8 + 5);
    skip.writeUInt32LE(0x184d2a53, 0);
    skip.writeUInt32LE(5, 4);
    const out = await decompressAll(Buffer.concat([a, skip, b]), 'lz4');
    expect(out.equals(Buffer.concat([Buffer.from('first frame\n'), SAMPLE]))).toBe(true);
  });

  it('survives one-byte pushes', async () => {
    const small = Buffer.concat([repeated.subarray(0, 3000), repeated.subarray(0, 3000), Buffer.from('tail')]);
    const z = await compressWith(small, 'lz4', ['lz4', '-q', '-c', '-B4', '-BD', '-BX', '--content-size']);
    const d = new Lz4FrameDecoder();
    const out: Buffer[] = [];
    for (let i = 0; i < z.length; i++) d.push(z.subarray(i, i + 1), (b) => out.push(Buffer.from(b)));
    d.end((b) => out.push(b));
    expect(Buffer.concat(out).equals(small)).toBe(true);
    expect(d.maxBlockSizeSeen).toBe(64 * 1024);
  });

  it('reports a flipped byte as corrupt (checksums are verified)', async () => {
    const z = Buffer.from(await compressWith(SAMPLE, 'lz4'));
    z[Math.floor(z.length / 2)]! ^= 0x55;
    const e = await decompressError(z, 'lz4');
    expect(e.reason).toBe('corrupt');
    expect(e.message).toMatch(/lz4/);
  });
});

describe('decompressor: every compression, real CLIs', () => {
  const cases: [ArchiveCompression, string[] | undefined][] = [
    ['none', undefined],
    ['gzip', undefined],
    ['zstd', ['zstd', '-q', '-c', '-19']],
    ['zstd', ['zstd', '-q', '-c', '-1', '--no-check']],
    ['bzip2', ['bzip2', '-c', '-1']],
    ['lz4', ['lz4', '-q', '-c']],
  ];
  const input = SAMPLE.subarray(0, 600 * 1024); // bzip2 in JS is slow: keep it small
  it.each(cases)('%s %j round-trips', async (c, argv) => {
    const z = await compressWith(input, c, argv);
    expect((await decompressAll(z, c)).equals(input)).toBe(true);
  });

  it.each(cases)('%s %j: a reader that pauses after every chunk still gets every byte', async (c, argv) => {
    const z = await compressWith(input, c, argv);
    expect((await readSlowly(decompressor(c), z, 256 * 1024)).equals(input)).toBe(true);
  });

  it('gzip: multi-member files (pigz, cat a.gz b.gz) decode whole', async () => {
    const z = Buffer.concat([gzipSync(Buffer.from('one ')), gzipSync(Buffer.from('two'))]);
    expect((await decompressAll(z, 'gzip')).toString()).toBe('one two');
  });

  const truncatable: ArchiveCompression[] = ['gzip', 'zstd', 'bzip2', 'lz4'];
  it.each(truncatable)('%s: a stream cut short is "truncated", naming the compression', async (c) => {
    const z = await compressWith(input, c);
    for (const cut of [1, Math.floor(z.length / 2)]) {
      const e = await decompressError(z.subarray(0, z.length - cut), c);
      expect(e.reason, `${c} cut by ${cut}: ${e.message}`).toBe('truncated');
      expect(e.message).toContain(c);
    }
  });

  it.each(truncatable)('%s: random bytes are "corrupt", naming the compression', async (c) => {
    const e = await decompressError(noise(100_000, 3), c);
    expect(e.reason).toBe('corrupt');
    expect(e.message).toContain(c);
  });

  it.each(truncatable)('%s: an empty stream is "truncated"', async (c) => {
    const e = await decompressError(Buffer.alloc(0), c);
    expect(e.reason).toBe('truncated');
  });

  it('says what the data really is when the name lies', async () => {
    const z = await compressWith(input, 'zstd');
    const e = await decompressError(z, 'gzip');
    expect(e.message).toMatch(/not gzip data.*zstd/);
  });

  it('errors arrive as stream errors, not throws', async () => {
    const d = decompressor('lz4');
    const err = await new Promise<unknown>((resolve) => {
      d.on('error', resolve);
      d.resume();
      Readable.from([Buffer.from('definitely not lz4')]).pipe(d);
    });
    expect(err).toBeInstanceOf(ArchiveError);
  });
});
