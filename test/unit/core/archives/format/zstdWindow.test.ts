// k3s decodes zstd with a window of at most 32 MiB (klauspost/compress with
// WithDecoderMaxMemory(1 << 25), k3s pkg/untar): archives needing more are refused from their
// frame headers, before anything is decoded or sent. Every sample is made at test time by the
// real zstd CLI (zstd 1.5, Debian's `zstd` package), except the one hostile header, which is
// crafted byte by byte as in the report (806 bytes declaring a ~2 GB window).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImageArchive } from '../../../../../lab/fixtures.ts';
import { runBuffer } from '../../../../../lab/exec.ts';
import { ArchiveError, readArchiveIndex } from '../../../../../src/core/archives/format/readIndex.ts';
import { K3S_ZSTD_MAX_WINDOW, ZstdFrameWalker, type ZstdFrameHeader } from '../../../../../src/core/archives/format/zstdFrames.ts';
import { HoldfastError } from '../../../../../src/core/errors.ts';
import { readLocalArchive } from '../../../../../src/core/usecases/import/localArchive.ts';
import { chunked, noise, packTar } from '../../../../support/archives.ts';

const MiB = 1024 * 1024;
/** zstd reading from a pipe knows no content size, so the frame declares 2^N as its window. */
const zstdPipe = (data: Buffer, ...args: string[]): Promise<Buffer> => runBuffer(['zstd', '-q', '-c', ...args, '-'], { input: data });

let dir: string;
let image: Buffer; // a real OCI image archive tar (one image)

// The hostile sample: magic, Frame_Header_Descriptor 0 (no content size, not single segment),
// Window_Descriptor exponent 20 mantissa 7 (2^30 + 7·2^27 = 1.875 GiB, the most fzstd accepts),
// then one raw last block filling the file to 806 bytes.
const HEADER = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, (20 << 3) | 7]);
const BODY = Buffer.alloc(806 - HEADER.length - 3, 0x61);
const RAW_LAST_BLOCK = (BODY.length << 3) | 1;
const hostile = Buffer.concat([HEADER, Buffer.from([RAW_LAST_BLOCK & 0xff, RAW_LAST_BLOCK >> 8, 0]), BODY]);

/** zstd compressing a file (content size known: small inputs become one single segment). */
function zstdFile(data: Buffer, ...args: string[]): Buffer {
  const src = path.join(dir, `in-${Math.random().toString(36).slice(2)}.tar`);
  writeFileSync(src, data);
  execFileSync('zstd', ['-q', '-f', ...args, src, '-o', `${src}.zst`]);
  return readFileSync(`${src}.zst`);
}

function walk(data: Buffer, chunk = 64 * 1024): ZstdFrameHeader[] {
  const w = new ZstdFrameWalker();
  const out: ZstdFrameHeader[] = [];
  for (let i = 0; i < data.length; i += chunk) out.push(...w.push(data.subarray(i, i + chunk)));
  return out;
}

async function refusalOf(data: Buffer): Promise<ArchiveError> {
  const e = await readArchiveIndex(chunked(data), { compression: 'zstd' }).catch((x: unknown) => x);
  expect(e).toBeInstanceOf(ArchiveError);
  return e as ArchiveError;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'hf-zstd-'));
  image = (await buildImageArchive({ format: 'oci', images: [{ name: 'docker.io/library/web:1', layerBytes: 64 * 1024 }] })).tar;
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('ZstdFrameWalker reads the frame headers the zstd CLI writes', () => {
  it('a pipe with --long=27: a 128 MiB Window_Descriptor, no content size', async () => {
    const [h, ...rest] = walk(await zstdPipe(image, '--long=27'));
    expect(rest).toEqual([]);
    expect(h).toEqual({ frame: 1, offset: 0, singleSegment: false, windowDescriptorBytes: 128 * MiB, contentSize: null, windowBytes: 128 * MiB });
  });

  it('a file: one single segment whose window is its content size, whatever --long says', () => {
    const [h] = walk(zstdFile(image, '--long=27'));
    expect(h).toMatchObject({ singleSegment: true, windowDescriptorBytes: null, contentSize: image.length, windowBytes: image.length });
  });

  it('finds every frame of a concatenated stream, walking multi-block frames with checksums and skippable frames', async () => {
    const first = await zstdPipe(noise(600 * 1024, 7), '-1', '--check'); // incompressible: several raw blocks
    const skippable = Buffer.concat([Buffer.from([0x5e, 0x2a, 0x4d, 0x18]), Buffer.from([10, 0, 0, 0]), Buffer.alloc(10, 0x28)]);
    const second = await zstdPipe(Buffer.from('x'.repeat(5000)), '--long=26');
    const all = Buffer.concat([first, skippable, second]);
    const expected = [
      expect.objectContaining({ frame: 1, offset: 0 }),
      expect.objectContaining({ frame: 2, offset: first.length + skippable.length, windowBytes: 64 * MiB }),
    ];
    expect(walk(all)).toEqual(expected);
    // Headers split across pushes at every possible byte: the same answer.
    expect(walk(all, 1)).toEqual(expected);
    expect(walk(all, 7)).toEqual(expected);
  });

  it('stops at bytes that are no zstd frame, and leaves them to the decoder', () => {
    expect(walk(Buffer.from('this is not zstd at all'))).toEqual([]);
  });
});

describe('readArchiveIndex refuses what k3s cannot import, from the header', () => {
  it('--long=27 from a pipe: refused, saying the window, the limit and what made it', async () => {
    const e = await refusalOf(await zstdPipe(image, '-19', '--long=27'));
    expect(e.reason).toBe('unsupported');
    expect(e.message).toMatch(/^unsupported: k3s cannot import it: its zstd frame declares a 128 MiB window/);
    expect(e.message).toContain('at most 32 MiB');
    expect(e.message).toContain('--long=26 or more');
    expect(e.refusal).toEqual({ cause: 'zstd-window', message: expect.any(String), windowBytes: 2 ** 27, limitBytes: 2 ** 25, frame: 1, offset: 0 });
  });

  it('--long=26 from a pipe (64 MiB) is refused; --long=25 (exactly 32 MiB) is read', async () => {
    expect((await refusalOf(await zstdPipe(image, '--long=26'))).refusal?.windowBytes).toBe(64 * MiB);
    const ok = await readArchiveIndex(chunked(await zstdPipe(image, '--long=25')), { compression: 'zstd' });
    expect(ok.images.map((i) => i.name)).toEqual(['docker.io/library/web:1']);
    expect(ok.k3sCannotImport).toBeUndefined();
    expect(K3S_ZSTD_MAX_WINDOW).toBe(32 * MiB);
  });

  it('a single segment holding more than 32 MiB is refused (zstd --long=26 of a 40 MiB tar file)', async () => {
    const tar40 = await packTar([{ name: 'big', data: Buffer.alloc(40 * MiB) }]);
    const z = zstdFile(tar40, '-1', '--long=26');
    const e = await refusalOf(z);
    expect(e.message).toContain(`holds 40 MiB in one segment, so decoding it needs a 40 MiB window`);
    expect(e.refusal?.windowBytes).toBe(tar40.length);
  });

  it('--long=27 on a small tar file is fine: a single segment of its own size', async () => {
    const index = await readArchiveIndex(chunked(zstdFile(image, '--long=27')), { compression: 'zstd' });
    expect(index.images).toHaveLength(1);
  });

  it('a later frame that needs too much is refused too, naming it', async () => {
    const half = image.length >> 1;
    const z = Buffer.concat([await zstdPipe(image.subarray(0, half)), await zstdPipe(image.subarray(half), '--long=27')]);
    const e = await refusalOf(z);
    expect(e.message).toMatch(/its zstd frame 2 \(at byte \d+\) declares a 128 MiB window/);
    expect(e.refusal).toMatchObject({ frame: 2, windowBytes: 128 * MiB });
  });

  it("with unimportable: 'describe' it resolves, saying why k3s imports nothing", async () => {
    const index = await readArchiveIndex(chunked(await zstdPipe(image, '--long=27')), { compression: 'zstd', unimportable: 'describe' });
    expect(index.format).toBeNull();
    expect(index.images).toEqual([]);
    expect(index.k3sCannotImport).toMatchObject({ cause: 'zstd-window', windowBytes: 128 * MiB, limitBytes: 32 * MiB });
    expect(index.k3sCannotImport?.message).toMatch(/^k3s cannot import it: /);
    // An importable archive reads the same in both modes.
    const ok = await readArchiveIndex(chunked(await zstdPipe(image, '--long=25')), { compression: 'zstd', unimportable: 'describe' });
    expect(ok.format).toBe('oci');
    expect(ok.k3sCannotImport).toBeUndefined();
  });
});

describe('a hostile header declaring a ~2 GB window', () => {
  it('is refused with bounded memory (a decoder would allocate the whole window first)', async () => {
    expect(hostile.length).toBe(806);
    const before = process.memoryUsage().arrayBuffers;
    let peak = before;
    const t = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers)), 1);
    const e = await refusalOf(hostile);
    clearInterval(t);
    peak = Math.max(peak, process.memoryUsage().arrayBuffers);
    expect(e.message).toContain('declares a 1.9 GiB window');
    expect(e.refusal?.windowBytes).toBe(2 ** 30 + 7 * 2 ** 27);
    expect(peak - before, `array buffers grew ${((peak - before) / MiB).toFixed(1)} MiB`).toBeLessThan(16 * MiB);
  });

  it('is refused from the header alone: the endless stream behind it is never needed', async () => {
    // A source that never ends: only a refusal made at the header can settle this promise.
    let served = 0;
    const endless = new Readable({
      read() {
        this.push(served === 0 ? Buffer.concat([HEADER, Buffer.from([0x00, 0x00, 0x10])]) : Buffer.alloc(64 * 1024));
        served++;
      },
    });
    const e = await readArchiveIndex(endless, { compression: 'zstd' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ArchiveError);
    expect((e as ArchiveError).refusal?.windowBytes).toBe(2 ** 30 + 7 * 2 ** 27);
    expect(endless.destroyed).toBe(true);
  });
});

describe('readLocalArchive (CLI upload/import, the import wizard) refuses before anything is sent', () => {
  it('names the limit, what the archive declares, and a recompress line that works', async () => {
    const file = path.join(dir, 'web app.tar.zst');
    writeFileSync(file, await zstdPipe(image, '--long=27'));
    const e = await readLocalArchive(file).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(HoldfastError);
    const err = e as HoldfastError;
    expect(err.code).toBe('REFUSED');
    expect(err.message).toBe(
      "web app.tar.zst was refused: unsupported: k3s cannot import it: its zstd frame declares a 128 MiB window, and k3s decodes zstd with a window of at most 32 MiB, so it imports nothing from this archive (made with zstd --long=26 or more?)",
    );
    expect(err.hint).toMatch(/^Nothing was sent\. Recompress it with a window of at most 32 MiB, e\.g\. `zstd -d -c --long=31 'web app\.tar\.zst' \| zstd -T0 -19 --long=25 -o 'web app\.w25\.tar\.zst'`/);

    // The hinted command, run as a technician would paste it, gives an archive that passes.
    const line = /`([^`]+)`/.exec(err.hint!)![1]!;
    execFileSync('sh', ['-c', line], { cwd: dir, stdio: 'ignore' });
    const fixed = await readLocalArchive(path.join(dir, 'web app.w25.tar.zst'));
    expect(fixed.images.map((i) => i.name)).toEqual(['docker.io/library/web:1']);
  });

  it('refuses the 806-byte hostile file the same way', async () => {
    const file = path.join(dir, 'hostile.tar.zst');
    writeFileSync(file, hostile);
    const e = (await readLocalArchive(file).catch((x: unknown) => x)) as HoldfastError;
    expect(e.code).toBe('REFUSED');
    expect(e.message).toContain('declares a 1.9 GiB window');
    expect(e.hint).toContain('zstd -d -c --long=31 hostile.tar.zst | zstd -T0 -19 --long=25 -o hostile.w25.tar.zst');
  });
});
