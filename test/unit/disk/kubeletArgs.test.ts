// The node's kubelet GC/eviction flags from the fixed script's output (core/disk/kubeletArgs).
// Samples are what the script prints on a node: config files as k3s documents them (YAML lists,
// flow lists, `+` appends, Rancher's JSON drop-ins) and /proc cmdlines of k3s and RKE2's kubelet.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { KUBELET_ARGS_SCRIPT, kubeletArgsArgv, parseKubeletArgs } from '../../../src/core/disk/kubeletArgs';
import { resolveGcPolicy } from '../../../src/shared/gcPolicy';

const flags = (out: string) => parseKubeletArgs(out, 'k3s').args.map((a) => `${a.flag}=${a.value}@${a.source}`);

describe('parseKubeletArgs', () => {
  it('merges config files as k3s does: a later kubelet-arg replaces, kubelet-arg+ appends', () => {
    const out = [
      '@@cfg /etc/rancher/k3s/config.yaml',
      '|kubelet-arg:',
      '|  - "max-pods=200"',
      '|  - image-gc-high-threshold=90   # site policy',
      '@@cfg /etc/rancher/k3s/config.yaml.d/50-gc.yaml',
      `|kubelet-arg+: ["image-gc-low-threshold=70", 'eviction-hard=imagefs.available<10%,nodefs.available<5%']`,
      '',
    ].join('\n');
    expect(flags(out)).toEqual([
      'image-gc-high-threshold=90@/etc/rancher/k3s/config.yaml',
      'image-gc-low-threshold=70@/etc/rancher/k3s/config.yaml.d/50-gc.yaml',
      'eviction-hard=imagefs.available<10%,nodefs.available<5%@/etc/rancher/k3s/config.yaml.d/50-gc.yaml',
    ]);
    const replaced = out + ['@@cfg /etc/rancher/k3s/config.yaml.d/60.yml', '@@json', '|"kubelet-arg":["image-gc-high-threshold=88"]'].join('\n');
    expect(flags(replaced)).toEqual(['image-gc-high-threshold=88@/etc/rancher/k3s/config.yaml.d/60.yml']);
  });

  it('reads the running k3s server’s --kubelet-arg (both spellings) after the config files', () => {
    const out = ['@@cfg /etc/rancher/k3s/config.yaml', '|kubelet-arg: image-gc-high-threshold=90', '@@proc k3s server', '|--kubelet-arg=image-gc-high-threshold=91', '|image-gc-low-threshold=71'].join('\n');
    const r = parseKubeletArgs(out, 'k3s');
    expect(resolveGcPolicy(r.args)).toMatchObject({ highPercent: 91, lowPercent: 71, sources: { high: 'the k3s server command line' } });
    expect(r.notes).toEqual([]);
  });

  it('reads a separate kubelet’s own flags (RKE2), with or without =', () => {
    const out = ['@@proc kubelet', '|--image-gc-high-threshold', '|75', '|--eviction-hard=imagefs.available<15%'].join('\n');
    expect(parseKubeletArgs(out, 'rke2').args.map((a) => `${a.flag}=${a.value}`)).toEqual(['image-gc-high-threshold=75', 'eviction-hard=imagefs.available<15%']);
  });

  it('says what it could not read', () => {
    const r = parseKubeletArgs(['@@unreadable /etc/rancher/k3s/config.yaml', '@@cfg /etc/rancher/k3s/config.yaml.d/a.yaml', '|kubelet-arg: &anchor', '|  - x'].join('\n'), 'k3s');
    expect(r.notes.join(' ')).toMatch(/could not be read by the SSH user/);
    expect(r.notes.join(' ')).toMatch(/not a list Holdfast can read/);
    expect(r.notes.join(' ')).toMatch(/No running k3s process/);
  });
});

describe('the fixed script', () => {
  it('is argv with fixed words only', () => {
    expect(kubeletArgsArgv(true, 'rke2').slice(3)).toEqual(['holdfast-kubelet-args', 'sudo', 'rke2']);
    expect(kubeletArgsArgv(false, 'unknown').slice(3)).toEqual(['holdfast-kubelet-args', '', 'k3s']);
  });

  it('sends only kubelet-arg entries of a config file, never its token (run here on a copy of the paths)', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'hf-kargs-'));
    mkdirSync(path.join(dir, 'k3s', 'config.yaml.d'), { recursive: true });
    writeFileSync(path.join(dir, 'k3s', 'config.yaml'), 'token: s3cret-join-token\nkubelet-arg:\n  - image-gc-high-threshold=90\nnode-label:\n  - "team=x"\n');
    writeFileSync(path.join(dir, 'k3s', 'config.yaml.d', '10.yaml'), '{"token":"other-s3cret","kubelet-arg":["image-gc-low-threshold=60"]}\n');
    const script = KUBELET_ARGS_SCRIPT.replaceAll('/etc/rancher/', `${dir}/`);
    const out = execFileSync('sh', ['-c', script, 'holdfast-kubelet-args', '', 'k3s']).toString();
    expect(out).not.toContain('s3cret');
    expect(out).not.toContain('team=x');
    expect(flags(out).map((f) => f.split('@')[0])).toEqual(['image-gc-low-threshold=60']);
  });
});
