// bzip2 is decoded by the system's bzip2 where there is one and by unbzip2-stream elsewhere:
// both must give the same bytes and the same clear errors.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { decompressor } from '../../../src/core/archives/format/decompress';

async function run(input: Buffer): Promise<Buffer> {
  const out: Buffer[] = [];
  const d = decompressor('bzip2');
  const done = new Promise<void>((resolve, reject) => {
    d.on('data', (c: Buffer) => out.push(c));
    d.on('end', resolve);
    d.on('error', reject);
  });
  Readable.from([input.subarray(0, input.length >> 1), input.subarray(input.length >> 1)]).pipe(d);
  await done;
  return Buffer.concat(out);
}

const plain = Buffer.concat([randomBytes(300_000), Buffer.alloc(300_000, 'a')]);
const compressed = execFileSync('bzip2', ['-c'], { input: plain });

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
});
