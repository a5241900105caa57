// The containerd each k3s release bundles: src/shared/versions.ts K3S_BUNDLED_CONTAINERD and the
// table of docs/k3s-facts.md ("Which containerd k3s ships") say the same, release by release, so
// correcting one without the other fails here (issue #46, item 6).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundledContainerd, containerdWritesGcBackrefs, K3S_BUNDLED_CONTAINERD } from '../../../src/shared/versions';

const facts = readFileSync(path.resolve(import.meta.dirname, '../../../docs/k3s-facts.md'), 'utf8');

/** The facts page's table: "v1.34.9, v1.35.6" → each release with its containerd. */
function docsTable(): Map<string, string> {
  const section = facts.split('\n## ').find((s) => s.startsWith('Which containerd k3s ships'));
  if (!section) throw new Error('docs/k3s-facts.md has no section "Which containerd k3s ships"');
  const rows = section.split('\n').filter((l) => /^\s*\| v\d/.test(l));
  if (rows.length === 0) throw new Error('docs/k3s-facts.md: no release rows in "Which containerd k3s ships"');
  const out = new Map<string, string>();
  for (const row of rows) {
    const [releases, containerd] = row.split('|').slice(1, 3).map((c) => c.trim());
    for (const r of releases!.split(',').map((x) => x.trim())) {
      if (out.has(r)) throw new Error(`docs/k3s-facts.md names ${r} twice`);
      out.set(r, containerd!);
    }
  }
  return out;
}

/** The code's table, one entry per release. */
function codeTable(): Map<string, string> {
  const out = new Map<string, string>();
  for (const row of K3S_BUNDLED_CONTAINERD) {
    for (let p = row.patches[0]; p <= row.patches[1]; p++) out.set(`v1.${row.minor}.${p}`, row.containerd);
  }
  return out;
}

describe('the bundled containerd table', () => {
  it('docs/k3s-facts.md and versions.ts name the same releases with the same containerd', () => {
    const docs = docsTable();
    expect(Object.fromEntries([...docs].sort())).toEqual(Object.fromEntries([...codeTable()].sort()));
    // and the lookup the rules use answers each row of the docs
    for (const [release, containerd] of docs) expect(bundledContainerd(`${release}+k3s1`), release).toBe(containerd);
  });

  it('knows the 2.2 and 2.3 lines k3s ships in 2026', () => {
    const lines = new Set([...codeTable().values()].map((v) => v.split('.').slice(0, 2).join('.')));
    expect([...lines].sort()).toEqual(['2.2', '2.3']);
    // 2.3 first on v1.36.2: the line whose transfer-service import writes gc.bref / gc.expire
    expect(containerdWritesGcBackrefs(bundledContainerd('v1.36.2+k3s1'))).toBe('yes');
    expect(containerdWritesGcBackrefs(bundledContainerd('v1.35.6+k3s1'))).toBe('no');
  });
});
