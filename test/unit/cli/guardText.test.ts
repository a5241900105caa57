// inspect's Guard section (#50): what a node's guard could not fix, missing and unverified images listed.
import { describe, expect, it } from 'vitest';
import { guardSection } from '../../../src/cli/guardText';
import type { FleetNodeResult } from '../../../src/shared/fleet';
import { guardStateRecord, judgeGuard, parseGuardState } from '../../../src/shared/guardState';

describe('guardSection', () => {
  it('lists what the guard pinned although the pin set requires it signed', () => {
    const record = guardStateRecord({ node: 'n1', pinSet: { name: 'site', digest: null }, time: '2026-12-07T22:37:00Z', intervalSeconds: 300, ok: true, fixed: [], missing: [], unverified: ['registry.local/app/u:1'], durable: 1 });
    const guard = judgeGuard(parseGuardState(JSON.stringify(record), 64 * 1024), Date.parse('2026-12-07T22:40:00Z'));
    const node: FleetNodeResult = { node: 'n1', reachable: true, error: null, versions: null, images: null, archives: null, disk: null, guard };
    const lines = guardSection([node], false);
    expect(lines[1]).toBe('  n1: guard keeps pin set site, last ran 2026-12-07 22:37 UTC: nothing to fix; 1 unverified image');
    expect(lines[2]).toBe('      UNVERIFIED: registry.local/app/u:1 (the pin set requires it signed; pinned anyway)');
  });
});
