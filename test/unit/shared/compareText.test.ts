import { describe, expect, it } from 'vitest';
import { ASCII_ORDER, compareText, sortByText } from '../../../src/shared/compareText';

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
    const byLocale = [...names].sort((a, b) => a.localeCompare(b, 'en'));
    expect([...names].sort(compareText)).toEqual(byLocale);
    // The difference that matters: ':' sorts before digits in collation, after them by code point.
    const [short, long] = ['registry.local/bench/app-1:v1', 'registry.local/bench/app-10:v3'];
    expect(compareText(short, long)).toBeLessThan(0);
    expect(short < long).toBe(false);
  });

  const en = new Intl.Collator('en');
  const sign = (n: number) => Math.sign(n);

  it("ASCII_ORDER is English collation's order, one primary weight each", () => {
    const chars = [...ASCII_ORDER];
    expect([...chars].sort(en.compare).join('')).toBe(ASCII_ORDER);
    const base = new Intl.Collator('en', { sensitivity: 'base' });
    for (let i = 1; i < chars.length; i++) expect(base.compare(chars[i - 1]!, chars[i]!), `${chars[i - 1]} ${chars[i]}`).toBeLessThan(0);
    // Every printable ASCII character but the capitals (which tie with lower case at the first level).
    expect(chars.length).toBe(95 - 26);
  });

  it('agrees with the collator on every pair of characters and on random strings', () => {
    const alphabet = [...ASCII_ORDER, 'A', 'Z', 'N', 'ä', 'é', '\u0301', 'ß', '日'];
    for (const x of alphabet) for (const y of alphabet) expect(sign(compareText(x, y)), `${x} ${y}`).toBe(sign(en.compare(x, y)));
    // A seeded generator: the same strings every run, mostly fast-path ones, some with a slow character.
    let seed = 0x9e3779b9;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) % n);
    const common = 'abcz019:/.-_@';
    const word = () => Array.from({ length: 1 + rnd(12) }, () => (rnd(20) === 0 ? alphabet[rnd(alphabet.length)]! : common[rnd(common.length)]!)).join('');
    for (let i = 0; i < 20_000; i++) {
      const a = word();
      const b = rnd(4) === 0 ? a + word() : rnd(4) === 0 ? a.slice(0, rnd(a.length + 1)) + word() : word();
      expect(sign(compareText(a, b)), JSON.stringify([a, b])).toBe(sign(en.compare(a, b)));
    }
  });

  it('is zero only for equal strings of the same case', () => {
    expect(compareText('nginx', 'nginx')).toBe(0);
    expect(compareText('nginx', 'Nginx')).not.toBe(0);
  });

  it('sortByText sorts as compareText does, fast-path and collator strings mixed, without touching its input', () => {
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) % n);
    const chars = 'abcz019:/.-_@ANä';
    const items = Array.from({ length: 3000 }, (_, id) => ({ id, name: Array.from({ length: 1 + rnd(10) }, () => chars[rnd(chars.length)]!).join('') }));
    items.push(...names.map((name, i) => ({ id: 10_000 + i, name })));
    const input = [...items];
    const sorted = sortByText(items, (i) => i.name);
    expect(items).toEqual(input);
    expect(sorted.map((i) => i.name)).toEqual([...items].sort((a, b) => compareText(a.name, b.name)).map((i) => i.name));
    for (let i = 1; i < sorted.length; i++) expect(sign(en.compare(sorted[i - 1]!.name, sorted[i]!.name))).toBeLessThanOrEqual(0);
  });
});
