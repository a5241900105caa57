import { describe, expect, it } from 'vitest';
import { formatDate } from '../../../../src/renderer/model/text';

describe('dates', () => {
  it('a date, or — when there is none or it cannot be read', () => {
    expect(formatDate(null)).toBe('—');
    expect(formatDate('garbage')).toBe('—');
    expect(formatDate('2024-11-26T12:00:00Z')).toBe('2024-11-26');
  });
});
