// The policy file as an import reads it (#48 item 8): none in the home is no policy, a --policy
// that is not there is an error, paths in it are relative to it, and a bad one names its line.
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HoldfastError } from '../../../../src/core/errors';
import { loadPolicy } from '../../../../src/core/signatures/policy';

const POLICY = 'apiVersion: holdfast/v1\nkind: SignaturePolicy\nmetadata: {name: site}\nspec:\n  rules:\n    - {name: apps, images: ["a.io/**"], keys: [keys/a.pub, /abs/b.pub]}\n';

describe('loadPolicy', () => {
  it('no policy.yaml in the home: no policy', async () => {
    expect(await loadPolicy(mkdtempSync(path.join(os.tmpdir(), 'hf-pol-')))).toBeNull();
  });

  it('the home policy, its paths relative to the file', async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'hf-pol-'));
    writeFileSync(path.join(home, 'policy.yaml'), POLICY);
    const p = (await loadPolicy(home))!;
    expect(p.file).toBe(path.join(home, 'policy.yaml'));
    expect(p.policy.spec.rules[0]!.keys!.map(p.resolve)).toEqual([path.join(home, 'keys', 'a.pub'), '/abs/b.pub']);
  });

  it('--policy wins over the home; a missing one or a bad one is a usage error naming it', async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'hf-pol-'));
    writeFileSync(path.join(home, 'policy.yaml'), POLICY.replace('keys: [', 'kees: ['));
    const other = path.join(home, 'other.yaml');
    writeFileSync(other, POLICY.replace('name: site', 'name: other'));
    expect((await loadPolicy(home, other))!.policy.metadata.name).toBe('other');
    const missing = await loadPolicy(home, path.join(home, 'none.yaml')).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(HoldfastError);
    expect((missing as HoldfastError).message).toBe(`signature policy ${path.join(home, 'none.yaml')} cannot be read (ENOENT)`);
    const bad = await loadPolicy(home).catch((e: unknown) => e);
    expect((bad as HoldfastError).code).toBe('INVALID_INPUT');
    expect((bad as HoldfastError).message).toBe(`signature policy ${path.join(home, 'policy.yaml')}:6:41: spec.rules[0].kees is not a field of a SignaturePolicy`);
  });
});
