import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readBounded } from '../../../../src/core/signatures/read';

const dir = mkdtempSync(path.join(os.tmpdir(), 'hf-sigread-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('readBounded', () => {
  it('refuses a 100 MiB bundle by its size, naming the limit', async () => {
    const file = path.join(dir, 'huge.sigstore.json');
    writeFileSync(file, '');
    truncateSync(file, 100 * 1024 * 1024); // sparse: nothing to read if the size check failed
    await expect(readBounded(file, 'a Sigstore bundle')).rejects.toThrow(
      `${file}: a Sigstore bundle of 104,857,600 bytes is too large: over the limit signature.bytes (1 MiB).`,
    );
  });

  it('reads a file within the limit whole', async () => {
    const file = path.join(dir, 'small.json');
    writeFileSync(file, '{"a":1}');
    expect((await readBounded(file, 'x')).toString()).toBe('{"a":1}');
  });

  it('names a missing file', async () => {
    await expect(readBounded(path.join(dir, 'nope.pub'), 'a public key')).rejects.toThrow(/nope\.pub: cannot read a public key \(ENOENT\)/);
  });
});
