import { describe, expect, it } from 'vitest';
import { compareText } from '../../../src/shared/compareText';

// Lists (image names, archive paths, keys) keep the order they had with localeCompare; only
// the per-call collation set-up is gone.
describe('compareText', () => {
  const names = [
    'registry.local/bench/app-10:v3',
    'registry.local/bench/app-1:v1',
    'docker.io/library/Nginx:1.27',
    'docker.io/library/nginx:1.27',
    'docker.io/library/nginx@sha256:0123',
    'sha256:ffff',
    'rancher/mirrored-pause:3.6',
    'rancher/mirrored_pause:3.6',
    'äbc',
    'abc',
    'zz',
  ];

  it('orders as localeCompare does, not by code point', () => {
    const byLocale = [...names].sort((a, b) => a.localeCompare(b));
    expect([...names].sort(compareText)).toEqual(byLocale);
    // The difference that matters: ':' sorts before digits in collation, after them by code point.
    const [short, long] = ['registry.local/bench/app-1:v1', 'registry.local/bench/app-10:v3'];
    expect(compareText(short, long)).toBeLessThan(0);
    expect(short < long).toBe(false);
  });

  it('is zero only for equal strings of the same case', () => {
    expect(compareText('nginx', 'nginx')).toBe(0);
    expect(compareText('nginx', 'Nginx')).not.toBe(0);
  });
});
