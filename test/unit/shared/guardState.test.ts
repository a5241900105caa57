import { describe, expect, it } from 'vitest';
import { guardStateRecord, judgeGuard, parseGuardState, type GuardState, type GuardStatus } from '../../../src/shared/guardState';

const MAX = 64 * 1024;
const NOW = Date.parse('2026-12-07T22:40:00Z');
const DIGEST = `sha256:${'ab'.repeat(32)}`;

function record(over: Partial<Parameters<typeof guardStateRecord>[0]> = {}): GuardState {
  return guardStateRecord({
    node: 'n1',
    pinSet: { name: 'site', digest: DIGEST },
    time: '2026-12-07T22:37:00Z',
    intervalSeconds: 300,
    ok: true,
    fixed: [{ ref: 'registry.local/app/a:1' }, { ref: 'registry.local/app/b:1', restored: 'label-removed' }],
    missing: ['registry.local/app/m:1'],
    durable: 4,
    ...over,
  });
}
const text = (r: unknown) => JSON.stringify(r);

const cases: { name: string; file: string | null; status: GuardStatus; words: RegExp }[] = [
  { name: 'absent: no file', file: null, status: 'absent', words: /^no guard$/ },
  {
    name: 'fresh: ran 3 minutes ago, every 5',
    file: text(record()),
    status: 'running',
    words: /^guard keeps pin set site, last ran 2026-12-07 22:37 UTC: made 2 references durable \(1 restored\); could not fix 1 missing image$/,
  },
  { name: 'fresh at exactly two intervals', file: text(record({ time: '2026-12-07T22:30:00Z' })), status: 'running', words: /^guard keeps/ },
  { name: 'stale: past two intervals', file: text(record({ time: '2026-12-07T22:29:59Z' })), status: 'stale', words: /^guard not running since 2026-12-07 22:29 UTC \(pin set site, runs every 5 min\)$/ },
  { name: 'stale wins over a failed run', file: text(record({ time: '2026-12-06T22:00:00Z', ok: false, error: 'x' })), status: 'stale', words: /^guard not running since 2026-12-06 22:00 UTC/ },
  {
    name: 'failing: the last run failed',
    file: text(record({ ok: false, error: 'containerd is not answering', pinSet: { name: 'site.yaml', digest: null }, fixed: [], missing: [], durable: 0 })),
    status: 'failing',
    words: /^guard failing: its run at 2026-12-07 22:37 UTC failed \(containerd is not answering\)$/,
  },
  { name: 'garbage: not JSON', file: 'holdfast_guard_last_run_success 1\n\u0000\u001b[31m', status: 'unreadable', words: /^unreadable guard state: it is not JSON$/ },
  { name: 'garbage: JSON, not a record', file: '{"apiVersion":"holdfast/v1","kind":"GuardState","node":"n1"}', status: 'unreadable', words: /^unreadable guard state: it is not a guard's record \(pinSet: / },
  { name: 'garbage: an extra field', file: text({ ...record(), __proto__x: 1 }), status: 'unreadable', words: /not a guard's record/ },
  { name: 'garbage: a count below its list', file: text({ ...record(), fixedCount: 0 }), status: 'unreadable', words: /a count is below its list/ },
  { name: 'garbage: deep nesting', file: '['.repeat(1000), status: 'unreadable', words: /nests deeper than a guard writes/ },
  { name: 'oversized', file: text({ ...record(), pad: 'x'.repeat(MAX) }), status: 'unreadable', words: /^unreadable guard state: it is \d+ bytes, more than a guard writes \(65536\)$/ },
];

describe('judgeGuard(parseGuardState(file))', () => {
  for (const c of cases) {
    it(c.name, () => {
      const v = judgeGuard(parseGuardState(c.file, MAX), NOW);
      expect(v.status).toBe(c.status);
      expect(v.words).toMatch(c.words);
    });
  }

  it('a run that fixed nothing says so; the view keeps the pin set, the time and the lists', () => {
    const v = judgeGuard(parseGuardState(text(record({ fixed: [], missing: [] })), MAX), NOW);
    expect(v).toMatchObject({ status: 'running', pinSet: { name: 'site', digest: DIGEST }, lastRun: '2026-12-07T22:37:00Z', fixedCount: 0, missingCount: 0, durable: 4 });
    expect(v.words).toBe('guard keeps pin set site, last ran 2026-12-07 22:37 UTC: nothing to fix');
  });
});

describe('images a pin set requires signed, pinned and reported unverified', () => {
  it('the record counts and lists them, and the sentence says how many', () => {
    const r = record({ unverified: ['registry.local/app/a:1', 'registry.local/app/c:1'] });
    expect(r).toMatchObject({ unverified: ['registry.local/app/a:1', 'registry.local/app/c:1'], unverifiedCount: 2 });
    const v = judgeGuard(parseGuardState(text(r), MAX), NOW);
    expect(v).toMatchObject({ unverified: r.unverified, unverifiedCount: 2 });
    expect(v.words).toBe('guard keeps pin set site, last ran 2026-12-07 22:37 UTC: made 2 references durable (1 restored); could not fix 1 missing image; 2 unverified images');
  });

  it('a record written before the requirement existed reads as none unverified', () => {
    const { unverified: _, unverifiedCount: __, ...old } = record();
    expect(judgeGuard(parseGuardState(text(old), MAX), NOW)).toMatchObject({ status: 'running', unverified: [], unverifiedCount: 0 });
  });

  it('a count below its list is not a record', () => {
    expect(parseGuardState(text({ ...record({ unverified: ['registry.local/app/a:1'] }), unverifiedCount: 0 }), MAX).found).toBe('unreadable');
  });
});

describe('guardStateRecord', () => {
  it('cuts every list at its bound and keeps the whole counts: the file stays small', () => {
    const refs = Array.from({ length: 5000 }, (_, i) => `registry.local/app/${'x'.repeat(400)}${i}:1`);
    const r = record({ fixed: refs.map((ref) => ({ ref })), missing: refs, error: 'e'.repeat(5000) });
    expect(r.fixed).toHaveLength(200);
    expect(r.fixedCount).toBe(5000);
    expect(r.missingCount).toBe(5000);
    const back = parseGuardState(JSON.stringify(r), 256 * 1024);
    expect(back.found).toBe('read');
  });
});
