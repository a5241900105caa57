// `holdfast guard` and `holdfast pinset show` as a person meets them without a node: the usage
// errors (exit 2), the run's text, and the pin set table fitting a 100-column terminal.
import { describe, expect, it } from 'vitest';
import { guardRunText, type GuardRunJson } from '../../../../src/cli/commands/guard';
import { pinSetShowJson, pinSetShowText } from '../../../../src/cli/commands/pinset';
import { createCli } from '../../../../src/cli/context';
import { textWidth } from '../../../../src/cli/fit';
import { resolvePinSet } from '../../../../src/shared/pinSet';
import { runCli, useTempHome } from '../../../support/cliInProcess';
import { imageRef } from '../../../support/imageRef';

useTempHome('hf-guard-');

describe('holdfast guard: usage', () => {
  it.each([
    ['without --local', ['guard', '--pin-set', 'site.yaml'], /add --local/],
    ['--dry-run with --textfile', ['guard', '--local', '--pin-set', 'site.yaml', '--dry-run', '--textfile', '/tmp/x.prom'], /--dry-run writes nothing/],
    ['--every under a second', ['guard', '--local', '--pin-set', 'site.yaml', '--every', '500ms'], /at least 1s/],
    ['no --pin-set', ['guard', '--local'], /--pin-set/],
  ])('%s is a usage error', async (_, args, message) => {
    const r = await runCli(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});

describe('what guard and pinset show print', () => {
  const LONG = `registry.site.example/very/long/path/to/an/application/component:${'1'.repeat(40)}`;
  const run: GuardRunJson = {
    node: 'edge-01',
    pinSet: 'site',
    pinSetDigest: `sha256:${'0'.repeat(64)}`,
    dryRun: false,
    time: '2026-01-01T00:00:00Z',
    fixed: [{ ref: 'registry.local/app/a:1' }, { ref: 'registry.local/app/b:1', restored: 'label-removed' }, { ref: `sha256:${'c'.repeat(64)}` }],
    durable: ['registry.local/app/a:1', 'registry.local/app/b:1'],
    missing: ['registry.local/app/m:1'],
    unverified: [],
    unmatched: ['registry.other/*'],
  };

  it('a run: what it pinned, restored and could not, CRI records counted not listed', () => {
    expect(guardRunText(run).split('\n')).toEqual([
      'pin set site on edge-01: made 3 references durable (1 restored); 2 of its references durable; 1 named image missing',
      '  pinned: registry.local/app/a:1',
      '  restored: registry.local/app/b:1 (pin label removed)',
      '  MISSING: registry.local/app/m:1 (not on the node: import it)',
      '  pattern registry.other/* matches no reference here',
    ]);
    expect(guardRunText({ ...run, dryRun: true })).toMatch(/^pin set site on edge-01: would make 3 references durable/);
  });

  it('a run with an image the set requires signed: pinned, and reported unverified with why', () => {
    const lines = guardRunText({ ...run, unverified: [{ ref: 'registry.local/app/a:1', reason: 'never verified' }] }).split('\n');
    expect(lines[0]).toBe('pin set site on edge-01: made 3 references durable (1 restored); 2 of its references durable; 1 named image missing; 1 unverified');
    expect(lines).toContain('  UNVERIFIED: registry.local/app/a:1 (never verified; pinned anyway)');
  });

  it('pinset show says the requirement and which references fail it', () => {
    const refs = [imageRef('registry.local/app/a:1', {}, '1'), imageRef('registry.local/app/s:1', { signature: { verified: true, by: 'f'.repeat(64), format: 'bundle', at: '2026-12-01T00:00:00Z' } }, '2')];
    const signatures = { required: true, keys: ['f'.repeat(64)] };
    const r = resolvePinSet({ images: ['registry.local/app/a:1', 'registry.local/app/s:1'], needed: false, patterns: [], signatures }, { refs, neededMissing: [] });
    const plan = { node: 'edge-01', action: 'pin' as const, changes: [], unchanged: [] };
    const cli = createCli({ out: () => undefined, err: () => undefined, columns: () => 200 });
    const text = pinSetShowText(cli, pinSetShowJson('edge-01', 'site', r, plan, signatures));
    expect(text).toContain(`verified signature required by key ${'f'.repeat(8)}…`);
    expect(text).toMatch(/registry\.local\/app\/a:1 .*NOT VERIFIED: never verified \(pinned anyway\)/);
    expect(text).not.toMatch(/registry\.local\/app\/s:1 .*NOT VERIFIED/);
    expect(text).toContain('1 reference fails the signature requirement');
  });

  it('pinset show fits a 100-column terminal', () => {
    const refs = [imageRef(LONG, {}, '1'), imageRef('registry.local/app/a:1', { pin: 'durable' }, '2')];
    const r = resolvePinSet({ images: [LONG, 'registry.local/app/a:1', `${LONG.replace(/:.*/, '')}/missing:2`], needed: false, patterns: ['registry.site.example/**'] }, { refs, neededMissing: [] });
    const plan = { node: 'edge-01', action: 'pin' as const, changes: [{ ref: LONG, imageId: null, before: {}, after: {} }], unchanged: [] };
    const cli = createCli({ out: () => undefined, err: () => undefined, columns: () => 100 });
    const text = pinSetShowText(cli, pinSetShowJson('edge-01', 'site', r, plan));
    for (const line of text.split('\n')) expect(textWidth(line), line).toBeLessThanOrEqual(100);
    expect(text).toMatch(/REFERENCE +VIA +STATE +NOTE/);
    expect(text).toMatch(/MISSING/);
    expect(text).toMatch(/guard would make 1 reference durable/);
  });
});
