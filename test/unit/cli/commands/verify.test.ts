import { describe, expect, it } from 'vitest';
import { verificationSummary, verificationText } from '../../../../src/cli/commands/verify';
import { Screen } from '../../../../src/cli/screen';
import type { NodeVerification } from '../../../../src/shared/signatures';

const FP = '3f1c2a4b' + '0'.repeat(56);
const D1 = 'sha256:' + '1'.repeat(64);
const D2 = 'sha256:' + '2'.repeat(64);
const D3 = 'sha256:' + '3'.repeat(64);
const AT = '2026-12-08T10:00:00.000Z';

const RESULT: NodeVerification = {
  node: 'edge-01',
  dryRun: false,
  recorded: 5,
  images: [
    { name: 'registry.local/app:2', refs: ['registry.local/app:2'], digest: D1, signature: { verified: true, by: FP, format: 'bundle', at: AT } },
    { name: 'registry.local/db:5', refs: ['registry.local/db:5'], digest: D2, signature: { verified: false, refusal: { kind: 'other-key' }, reason: 'signed, but not by any given key', at: AT } },
    {
      name: 'mirror.local/web:1',
      refs: ['mirror.local/web:1'],
      digest: D3,
      signature: { verified: true, by: FP, format: 'legacy', at: AT, reference: 'registry.local/web' },
      warning: 'signed as registry.local/web, imported as mirror.local/web:1',
    },
  ],
};

describe('holdfast verify: what it prints', () => {
  it('a table of every image with its verdict in plain words, and the renamed image’s warning', () => {
    expect(verificationText(RESULT).split('\n')).toEqual([
      'edge-01:',
      'IMAGE                   DIGEST          SIGNATURE',
      'registry.local/app:2    111111111111    signed by key 3f1c2a4b…, verified 2026-12-08',
      'registry.local/db:5     222222222222    not verified: signed, but not by any given key (2026-12-08)',
      'mirror.local/web:1      333333333333    signed by key 3f1c2a4b…, verified 2026-12-08',
      'warning: mirror.local/web:1: signed as registry.local/web, imported as mirror.local/web:1',
    ]);
  });

  it('the summary: how many verified, what was recorded, each image without a valid signature and why', () => {
    expect(verificationSummary(RESULT).split('\n')).toEqual([
      'edge-01: 2 of 3 images verified; recorded on 5 references',
      'No valid signature for 1 image on edge-01:',
      '  registry.local/db:5: signed, but not by any given key',
    ]);
    expect(verificationSummary({ ...RESULT, dryRun: true, recorded: 0, images: RESULT.images.slice(0, 1) })).toBe('edge-01: 1 of 1 image verified; nothing recorded (--dry-run)');
  });

  it('on a narrow terminal the table fits and the verdict wraps rather than being cut', () => {
    const lines = verificationText(RESULT, new Screen(true, 60)).split('\n');
    for (const l of lines) expect(l.length, l).toBeLessThanOrEqual(60);
    // The reason wraps inside its column, every word kept.
    expect(lines.some((l) => l.includes('222222222222  not verified: signed,'))).toBe(true);
    expect(lines.some((l) => l.trim() === 'but not by any given key')).toBe(true);
  });

  it('a node without images says so', () => {
    expect(verificationText({ ...RESULT, images: [] })).toBe('edge-01: no images');
  });
});
