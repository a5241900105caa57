// bzip2 is decoded by the system's bzip2 where there is one and by unbzip2-stream elsewhere:
// both must give the same bytes and the same clear errors.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { Bzip2ProcessDecompressor, decompressor } from '../../../../../src/core/archives/format/decompress';
import { chunked, noise, readSlowly } from '../../../../support/archives';

/** Decodes `input`, written in two halves, or in 64 KiB chunks when `chunks` is set. */
async function run(input: Buffer, chunks = false): Promise<Buffer> {
  const out: Buffer[] = [];
  const d = decompressor('bzip2');
  const done = new Promise<void>((resolve, reject) => {
    d.on('data', (c: Buffer) => out.push(c));
    d.on('end', resolve);
    d.on('error', reject);
  });
  (chunks ? chunked(input) : Readable.from([input.subarray(0, input.length >> 1), input.subarray(input.length >> 1)])).pipe(d);
  await done;
  return Buffer.concat(out);
}

const plain = Buffer.concat([randomBytes(300_000), Buffer.alloc(300_000, 'a')]);
const compressed = execFileSync('bzip2', ['-c'], { input: plain });
// Many 100 kB blocks, the first one damaged: the decoder gives up long before the input ends.
const long = execFileSync('bzip2', ['-c', '-1'], { input: noise(6 << 20, 5), maxBuffer: 64 << 20 });
const longDamaged = Buffer.from(long);
// Noise and runs, so that bzip2's input and output pipes both fill.
const mixed = (() => {
  const plain = Buffer.concat(Array.from({ length: 16 }, (_, i) => [noise(200_000, i + 1), Buffer.alloc(300_000, i)]).flat());
  return { z: execFileSync('bzip2', ['-c', '-1'], { input: plain, maxBuffer: 64 << 20 }), sha256: createHash('sha256').update(plain).digest('hex') };
})();
longDamaged[5000]! ^= 0x55;

describe.each([
  ['system bzip2', '0'],
  ['unbzip2-stream', '1'],
])('bzip2 through %s', (_name, js) => {
  afterEach(() => {
    delete process.env.HOLDFAST_BZIP2_JS;
  });

  it('decodes to the original bytes', async () => {
    process.env.HOLDFAST_BZIP2_JS = js;
    expect((await run(compressed)).equals(plain)).toBe(true);
  });

  it('says truncated when the stream is cut', async () => {
    process.env.HOLDFAST_BZIP2_JS = js;
    await expect(run(compressed.subarray(0, compressed.length - 1000))).rejects.toMatchObject({ reason: 'truncated' });
  });

  it('says corrupt for data that is not bzip2', async () => {
    process.env.HOLDFAST_BZIP2_JS = js;
    await expect(run(randomBytes(5000))).rejects.toMatchObject({ reason: 'corrupt' });
  });

  // A reader slower than bzip2 (the tar reader hashing blobs on a busy laptop): the system
  // decoder once stopped feeding bzip2 after the first pause and waited forever.
  it('hands a slow reader every byte', async () => {
    process.env.HOLDFAST_BZIP2_JS = js;
    const got = await readSlowly(decompressor('bzip2'), mixed.z, 1 << 20, 2);
    expect(createHash('sha256').update(got).digest('hex')).toBe(mixed.sha256);
  });

  // The system bzip2 exits at once on these while megabytes are still to be written to it: its
  // stdin never drains again, and the import once waited for that forever.
  it('says corrupt, without waiting for the rest, for megabytes that are not bzip2', async () => {
    process.env.HOLDFAST_BZIP2_JS = js;
    await expect(run(noise(8 << 20, 3), true)).rejects.toMatchObject({ reason: 'corrupt', message: expect.stringContaining('not bzip2') });
  });

  it('says corrupt, without waiting for the rest, when the first of many blocks is damaged', async () => {
    process.env.HOLDFAST_BZIP2_JS = js;
    await expect(run(longDamaged, true)).rejects.toMatchObject({ reason: 'corrupt' });
  });
});

describe('bzip2 through a system binary that cannot be run', () => {
  it('fails the stream with an ArchiveError naming the binary, and the process lives on', async () => {
    const d = new Bzip2ProcessDecompressor('/nonexistent/bzip2');
    const e = await new Promise<unknown>((resolve) => {
      d.on('error', resolve);
      d.on('end', () => resolve(null));
      d.resume();
      chunked(compressed).pipe(d);
    });
    expect(e).toMatchObject({ reason: 'unsupported', message: 'unsupported: /nonexistent/bzip2 could not be run to decode bzip2 (ENOENT)' });
  });
});
