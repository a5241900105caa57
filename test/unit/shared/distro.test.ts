// The distro profiles (src/shared/distro.ts): each distro's facts, checked against
// docs/k3s-facts.md where the doc states them, and the guard that keeps RKE2 a row of the table
// rather than a branch scattered over src/ (issue #34).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ASSUMED_DISTRO,
  DISTRO_ORDER,
  DISTRO_PROFILES,
  distroDisplayName,
  distroOfPinLabels,
  distroProfile,
  UNDETECTED_DISTRO_NAME,
} from '../../../src/shared/distro';
import { NODE_DEFAULTS } from '../../../src/shared/domain/nodes';

const root = path.resolve(import.meta.dirname, '../../..');
const facts = readFileSync(path.join(root, 'docs/k3s-facts.md'), 'utf8');

/** A row of the doc's "Where things live on a node" table: its k3s and RKE2 cells. */
function factsRow(what: string): { k3s: string; rke2: string } {
  const line = facts.split('\n').find((l) => l.startsWith(`| ${what} |`));
  if (!line) throw new Error(`docs/k3s-facts.md has no row "${what}"`);
  const [, k3s = '', rke2 = ''] = line.split('|').slice(1, -1).map((c) => c.trim());
  return { k3s, rke2: rke2 === 'the same' ? k3s : rke2 };
}

describe('distro profiles', () => {
  it('hold each distro\'s facts', () => {
    expect(DISTRO_PROFILES.k3s).toMatchObject({
      id: 'k3s',
      displayName: 'k3s',
      dataDirDefault: '/var/lib/rancher/k3s',
      pinLabel: 'io.cattle.k3s.pinned',
      configFile: '/etc/rancher/k3s/config.yaml',
      socket: '/run/k3s/containerd/containerd.sock',
      kubectl: { kind: 'subcommand', kubeconfig: '/etc/rancher/k3s/k3s.yaml' },
    });
    expect(DISTRO_PROFILES.rke2).toMatchObject({
      id: 'rke2',
      displayName: 'RKE2',
      dataDirDefault: '/var/lib/rancher/rke2',
      pinLabel: 'io.cattle.rke2.pinned',
      configFile: '/etc/rancher/rke2/config.yaml',
      socket: '/run/k3s/containerd/containerd.sock',
      kubectl: { kind: 'bundled', dataDirPath: 'bin/kubectl', kubeconfig: '/etc/rancher/rke2/rke2.yaml' },
    });
    expect(DISTRO_ORDER).toEqual(['k3s', 'rke2']);
    expect(Object.keys(DISTRO_PROFILES).sort()).toEqual([...DISTRO_ORDER].sort());
  });

  it('agree with docs/k3s-facts.md', () => {
    const socket = factsRow('containerd socket');
    const images = factsRow('images dir');
    const label = factsRow("the distro's own pin label");
    for (const d of DISTRO_ORDER) {
      const p = DISTRO_PROFILES[d];
      expect(socket[d]).toBe(`\`${p.socket}\``);
      expect(images[d]).toContain(`\`${p.dataDirDefault}\``);
      expect(label[d]).toBe(`\`${p.pinLabel}=pinned\``);
      // "data-dir comes from /etc/rancher/<distro>/config.yaml and the files of config.yaml.d/"
      expect(facts).toContain('`/etc/rancher/<distro>/config.yaml`');
      expect(p.configFile).toBe(`/etc/rancher/${d}/config.yaml`);
    }
    // "Which images a site needs": how kubectl is run on a server node.
    expect(facts).toContain(`\`k3s kubectl get`);
    expect(facts).toContain(`(kubeconfig \`${DISTRO_PROFILES.k3s.kubectl.kubeconfig}\``);
    const rke2 = DISTRO_PROFILES.rke2;
    if (rke2.kubectl.kind !== 'bundled') throw new Error('RKE2 runs its bundled kubectl');
    expect(facts.replace(/\s+/g, ' ')).toContain(`\`${rke2.dataDirDefault}/${rke2.kubectl.dataDirPath} --kubeconfig ${rke2.kubectl.kubeconfig}\``);
  });

  it('give the socket Holdfast connects to by default', () => {
    for (const d of DISTRO_ORDER) expect(DISTRO_PROFILES[d].socket).toBe(NODE_DEFAULTS.socket);
  });

  it('read each binary\'s --version line, and no other\'s', () => {
    const out = { k3s: 'k3s version v1.31.6+k3s1 (6ab750f9)\n', rke2: 'rke2 version v1.31.6+rke2r1 (9b7a40a5)\n' };
    expect(DISTRO_PROFILES.k3s.versionLine.exec(out.k3s)?.[1]).toBe('v1.31.6+k3s1');
    expect(DISTRO_PROFILES.rke2.versionLine.exec(out.rke2)?.[1]).toBe('v1.31.6+rke2r1');
    expect(DISTRO_PROFILES.k3s.versionLine.exec(out.rke2)).toBeNull();
    expect(DISTRO_PROFILES.rke2.versionLine.exec(out.k3s)).toBeNull();
  });

  it('assume k3s for an undetected distro, and name the family for it', () => {
    expect(ASSUMED_DISTRO).toBe('k3s');
    expect(distroProfile('unknown')).toBe(DISTRO_PROFILES.k3s);
    expect(distroProfile('rke2')).toBe(DISTRO_PROFILES.rke2);
    expect(distroDisplayName('rke2')).toBe('RKE2');
    expect(distroDisplayName('unknown')).toBe('k3s');
    expect(UNDETECTED_DISTRO_NAME).toBe('k3s/RKE2');
  });

  it('tell which distro pinned a reference by its label', () => {
    expect(distroOfPinLabels({ 'io.cattle.rke2.pinned': 'pinned' })).toBe('rke2');
    expect(distroOfPinLabels({ 'io.cattle.k3s.pinned': 'pinned' })).toBe('k3s');
    expect(distroOfPinLabels({ 'io.cattle.k3s.pinned': 'pinned', 'io.cattle.rke2.pinned': 'pinned' })).toBe('rke2');
    expect(distroOfPinLabels({ 'io.cri-containerd.pinned': 'pinned' })).toBe('k3s');
  });
});

// ── The guard: distro comparisons live in src/shared/distro.ts only ───────────────────────────

/**
 * A comparison of a distro value with a distro literal: `x === 'rke2'` either way round, in
 * TypeScript or in a shell test (`[ "$D" = rke2 ]`), and `=== 'k3s'` on something named for the
 * distro (a pin is compared with its own state, `pin === 'distro'`).
 */
const DISTRO_BRANCH = [
  /[=!]==?\s*(['"`])rke2\1/,
  /(['"`])rke2\1\s*[=!]==?/,
  /"\$\w+"\s*!?=\s*"?rke2\b/,
  /\b(?:\w*[dD]istro\w*|d)\s*[=!]==?\s*(['"`])k3s\1/,
  /(['"`])k3s\1\s*[=!]==?\s*(?:\w+\.)*(?:\w*[dD]istro\w*|d)\b/,
];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    if (statSync(p).isDirectory()) return sources(p);
    return /\.tsx?$/.test(n) ? [p] : [];
  });
}

function distroBranches(text: string): string[] {
  return text.split('\n').filter((l) => DISTRO_BRANCH.some((re) => re.test(l)));
}

describe('distro branches', () => {
  it('are found where they are written (the guard below can fail)', () => {
    for (const l of [
      "const who = distro === 'rke2' ? 'RKE2' : 'k3s';",
      "if ('rke2' === info.distro) return x;",
      "  const re = distro === 'k3s' ? A : B;",
      "  if (info.distro !== \"k3s\") return;",
      "const d = ctx.d === 'k3s';",
      "  'if [ \"$D\" = rke2 ]; then k=$DD/bin/kubectl; fi',",
    ]) {
      expect(distroBranches(l), l).toEqual([l]);
    }
    // Pin states are not distros.
    expect(distroBranches("if (r.pin === 'distro') return x;")).toEqual([]);
    expect(distroBranches("state === 'distro' ? ClockIcon : SlashIcon")).toEqual([]);
  });

  it('appear nowhere in src/ but src/shared/distro.ts', () => {
    const found = sources(path.join(root, 'src'))
      .filter((f) => path.relative(root, f).split(path.sep).join('/') !== 'src/shared/distro.ts')
      .flatMap((f) => distroBranches(readFileSync(f, 'utf8')).map((l) => `${path.relative(root, f)}: ${l.trim()}`));
    expect(found).toEqual([]);
  });
});
