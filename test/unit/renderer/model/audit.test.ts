import { describe, expect, it } from 'vitest';
import { sortAudit } from '../../../../src/renderer/model/audit';

describe('audit order', () => {
  it('sortAudit: newest first, later entry first on equal times, unreadable times last', () => {
    const e = (time: string, note: string) => ({ time, user: 'u', node: 'n', action: 'pin' as const, note });
    const out = sortAudit([e('2025-01-01T00:00:00Z', 'old'), e('bad', 'bad'), e('2025-02-01T00:00:00Z', 'new1'), e('2025-02-01T00:00:00Z', 'new2')]);
    expect(out.map((x) => x.note)).toEqual(['new2', 'new1', 'old', 'bad']);
  });
});
