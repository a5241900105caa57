// Reading a pin set file for `pinset show` and `guard`: every bad file is a usage error naming the
// file, the field and the fix, and nothing past the bound is read.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readPinSetFile } from '../../../src/cli/pinSetFile';
import { HoldfastError } from '../../../src/core/errors';
import { limit } from '../../../src/core/limits';

const dir = mkdtempSync(path.join(os.tmpdir(), 'hf-pinset-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = (name: string, text: string): string => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};

async function refusal(p: string): Promise<HoldfastError> {
  const e = await readPinSetFile(p).then(
    () => null,
    (x: unknown) => x,
  );
  if (!(e instanceof HoldfastError)) throw new Error(`not refused: ${String(e)}`);
  return e;
}

describe('readPinSetFile', () => {
  it('reads a good file', async () => {
    const set = await readPinSetFile(file('ok.yaml', 'apiVersion: holdfast/v1\nkind: PinSet\nmetadata: {name: site}\nspec: {images: [nginx]}\n'));
    expect(set.spec.images).toEqual(['docker.io/library/nginx:latest']);
  });

  it.each([
    ['a missing file', () => path.join(dir, 'nope.yaml'), /cannot be read \(ENOENT\)/, /Check the path/],
    ['a directory', () => (mkdirSync(path.join(dir, 'd'), { recursive: true }), path.join(dir, 'd')), /not a regular file/, /pin set file/],
    ['a file over the bound', () => file('big.yaml', `# ${'x'.repeat(limit('pinSet.bytes'))}\n`), /too large: over .*pinSet\.bytes/, /Split/],
    ['a bad field', () => file('bad.yaml', 'apiVersion: holdfast/v1\nkind: PinSet\nmetadata: {name: site}\nspec: {needed: yes}\n'), /bad\.yaml: spec\.needed: is "yes", not a boolean/, /Fix: write needed: true/],
  ])('refuses %s, saying what to do', async (_, make, message, hint) => {
    const e = await refusal(make());
    expect(e.code).toBe('INVALID_INPUT');
    expect(e.message).toMatch(message);
    expect(e.hint).toMatch(hint);
  });
});
