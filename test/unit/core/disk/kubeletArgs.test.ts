// The node's kubelet GC/eviction flags from the fixed script's output (core/disk/kubeletArgs).
// Samples are what the script prints on a node: config files as k3s documents them (YAML lists,
// flow lists, `+` appends, Rancher's JSON drop-ins) and /proc cmdlines of k3s and RKE2's kubelet.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { KUBELET_ARGS_SCRIPT, kubeletArgsArgv, kubeletConfigFields, kubeletFilesArgv, parseKubeletArgs } from '../../../../src/core/disk/kubeletArgs';
import { resolveGcPolicy } from '../../../../src/shared/gcPolicy';

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
    expect(kubeletArgsArgv(true, 'rke2').slice(3)).toEqual(['holdfast-kubelet-args', 'sudo', 'rke2', '']);
    expect(kubeletArgsArgv(false, 'unknown').slice(3)).toEqual(['holdfast-kubelet-args', '', 'k3s', '']);
    // A data dir or a path a flag names is an argument, never part of the script's text.
    const argv = kubeletFilesArgv(false, 'k3s', { file: "/etc/kubelet's.yaml", dir: '/x; rm -rf /' });
    expect(argv[2]).toBe(KUBELET_ARGS_SCRIPT);
    expect(argv.slice(3)).toEqual(['holdfast-kubelet-args', '', 'k3s', '', 'files', "f:/etc/kubelet's.yaml", 'd:/x; rm -rf /']);
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

// kubelet's max-age GC and credential verification (KEP-4210, KEP-2535): read wherever kubelet
// takes them — a --kubelet-arg, kubelet's own flag, its config file (`config=`) and its drop-in
// dir (`config-dir=`, k3s's <data-dir>/agent/etc/kubelet.conf.d) — in kubelet's order: config
// file, then drop-ins by name, then flags.
describe('parseKubeletArgs: max-age and credential verification', () => {
  const cases: { name: string; out: string[]; files?: string[]; want: string[] }[] = [
    {
      name: 'a kubelet-arg in config.yaml',
      out: ['@@cfg /etc/rancher/k3s/config.yaml', '|kubelet-arg:', '|  - image-maximum-gc-age=168h'],
      want: ['image-maximum-gc-age=168h@/etc/rancher/k3s/config.yaml'],
    },
    {
      name: "k3s's command line, both spellings, and a feature gate",
      out: ['@@proc k3s agent', '|--kubelet-arg=image-maximum-gc-age=72h', '|feature-gates=ImageMaximumGCAge=true'],
      want: ['image-maximum-gc-age=72h@the k3s agent command line', 'feature-gates=ImageMaximumGCAge=true@the k3s agent command line'],
    },
    {
      name: "a separate kubelet's flag without =",
      out: ['@@proc kubelet', '|--image-maximum-gc-age', '|24h'],
      want: ["image-maximum-gc-age=24h@the kubelet process's command line"],
    },
    {
      name: 'the drop-in dir k3s passes (*.conf in name order), before every flag',
      out: [
        '@@cfg /etc/rancher/k3s/config.yaml',
        '|kubelet-arg: [image-maximum-gc-age=48h]',
        '@@kdir /var/lib/rancher/k3s/agent/etc/kubelet.conf.d',
        '@@kcfg /var/lib/rancher/k3s/agent/etc/kubelet.conf.d/00-k3s-defaults.conf',
        '|evictionHard:',
        '|  imagefs.available: "5%"',
        '|  nodefs.available: 5%',
        '@@kcfg /var/lib/rancher/k3s/agent/etc/kubelet.conf.d/50-site.conf',
        '|imageMaximumGCAge: 168h',
        '|imagePullCredentialsVerificationPolicy: "AlwaysVerify"',
        '|preloadedImagesVerificationAllowlist:',
        '|- registry.example.com/site/*',
        '|  - docker.io/library/busybox   # pause',
        '|featureGates:',
        '|  KubeletEnsureSecretPulledImages: true',
      ],
      want: [
        'eviction-hard=imagefs.available<5%,nodefs.available<5%@/var/lib/rancher/k3s/agent/etc/kubelet.conf.d/00-k3s-defaults.conf',
        'image-maximum-gc-age=168h@/var/lib/rancher/k3s/agent/etc/kubelet.conf.d/50-site.conf',
        'imagePullCredentialsVerificationPolicy=AlwaysVerify@/var/lib/rancher/k3s/agent/etc/kubelet.conf.d/50-site.conf',
        'preloadedImagesVerificationAllowlist=registry.example.com/site/*,docker.io/library/busybox@/var/lib/rancher/k3s/agent/etc/kubelet.conf.d/50-site.conf',
        'feature-gates=KubeletEnsureSecretPulledImages=true@/var/lib/rancher/k3s/agent/etc/kubelet.conf.d/50-site.conf',
        'image-maximum-gc-age=48h@/etc/rancher/k3s/config.yaml',
      ],
    },
    {
      name: 'the config file and dir a flag names (second read), then the distro’s own dir (k3s v1.32+ copies them there and passes only it)',
      out: [
        '@@cfg /etc/rancher/k3s/config.yaml',
        '|kubelet-arg:',
        '|  - config=/etc/site/kubelet.yaml',
        '|  - config-dir=/etc/site/kubelet.d',
        '@@kdir /var/lib/rancher/k3s/agent/etc/kubelet.conf.d',
        '@@kcfg /var/lib/rancher/k3s/agent/etc/kubelet.conf.d/00-k3s-defaults.conf',
        '|imageMaximumGCAge: 1h',
      ],
      files: ['@@kcfg /etc/site/kubelet.yaml', '@@json', '|{"kind":"KubeletConfiguration","imageMaximumGCAge":"336h","imagePullCredentialsVerificationPolicy":"NeverVerify"}', '@@kdir /etc/site/kubelet.d', '@@kcfg /etc/site/kubelet.d/10.conf', '|imagePullCredentialsVerificationPolicy: NeverVerifyAllowlistedImages', '|preloadedImagesVerificationAllowlist: ["registry.example.com/*"]'],
      want: [
        'image-maximum-gc-age=336h@/etc/site/kubelet.yaml',
        'imagePullCredentialsVerificationPolicy=NeverVerify@/etc/site/kubelet.yaml',
        'imagePullCredentialsVerificationPolicy=NeverVerifyAllowlistedImages@/etc/site/kubelet.d/10.conf',
        'preloadedImagesVerificationAllowlist=registry.example.com/*@/etc/site/kubelet.d/10.conf',
        'image-maximum-gc-age=1h@/var/lib/rancher/k3s/agent/etc/kubelet.conf.d/00-k3s-defaults.conf',
      ],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const r = parseKubeletArgs(c.out.join('\n'), 'k3s', (c.files ?? []).join('\n'));
      expect(r.args.map((a) => `${a.flag}=${a.value}@${a.source}`)).toEqual(c.want);
    });
  }

  it('names what a flag points to that the first read did not cover, and says what it could not read', () => {
    const out = ['@@proc kubelet', '|--config=/etc/rancher/rke2/kubelet.yaml', '|--config-dir', '|/var/lib/rancher/rke2/agent/etc/kubelet.conf.d', '@@kdir /var/lib/rancher/rke2/agent/etc/kubelet.conf.d', '@@kunreadable /var/lib/rancher/rke2/agent/etc/kubelet.conf.d/99.conf'].join('\n');
    const r = parseKubeletArgs(out, 'rke2');
    expect(r.unread).toEqual({ file: '/etc/rancher/rke2/kubelet.yaml', dir: null });
    expect(r.notes.join(' ')).toMatch(/99\.conf could not be read by the SSH user/);
    expect(parseKubeletArgs(out, 'rke2', '@@kmissing /etc/rancher/rke2/kubelet.yaml').notes.join(' ')).toMatch(/kubelet\.yaml that a flag names does not exist/);
  });

  it('says which config values it cannot read, never guesses', () => {
    const notes: string[] = [];
    expect(kubeletConfigFields(['imageMaximumGCAge: &a 1h', 'featureGates: {ImageMaximumGCAge: false}'], false, 'f.conf', notes).map((a) => `${a.flag}=${a.value}`)).toEqual(['feature-gates=ImageMaximumGCAge=false']);
    expect(notes).toEqual(['imageMaximumGCAge in f.conf is not a value Holdfast can read.']);
  });

  it('the script reads the drop-in dir under the data dir, only the fields it needs (run here on a copy)', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'hf-kcfg-'));
    const conf = path.join(dir, 'agent', 'etc', 'kubelet.conf.d');
    mkdirSync(conf, { recursive: true });
    writeFileSync(path.join(conf, '20-b.conf'), 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nstaticPodURLHeader:\n  Authorization: ["Bearer s3cret"]\nimageMaximumGCAge: 168h\n');
    writeFileSync(path.join(conf, '10-a.conf'), 'imagePullCredentialsVerificationPolicy: AlwaysVerify\n');
    writeFileSync(path.join(conf, 'ignored.yaml'), 'imageMaximumGCAge: 1h\n');
    // k3s copies a config-dir= dir into 20-cli-config-dir/: kubelet walks into it, in path order.
    mkdirSync(path.join(conf, '20-cli-config-dir'));
    writeFileSync(path.join(conf, '20-cli-config-dir', 'x.conf'), 'imageMaximumGCAge: 24h\n');
    writeFileSync(path.join(conf, '30-c.conf'), 'featureGates:\n  ImageMaximumGCAge: true\n');
    const script = KUBELET_ARGS_SCRIPT.replaceAll('/etc/rancher/', `${dir}/none/`);
    const out = execFileSync('sh', ['-c', script, 'holdfast-kubelet-args', '', 'k3s', dir]).toString();
    expect(out).not.toContain('s3cret');
    expect(parseKubeletArgs(out, 'k3s').args.map((a) => `${a.flag}=${a.value}@${path.basename(a.source)}`)).toEqual(['imagePullCredentialsVerificationPolicy=AlwaysVerify@10-a.conf', 'image-maximum-gc-age=168h@20-b.conf', 'image-maximum-gc-age=24h@x.conf', 'feature-gates=ImageMaximumGCAge=true@30-c.conf']);
    // files mode: a named file and dir, and nothing else.
    const extra = execFileSync('sh', ['-c', script, 'holdfast-kubelet-args', '', 'k3s', '', 'files', `f:${path.join(conf, '20-b.conf')}`, `d:${dir}/missing`]).toString();
    expect(extra.split('\n').filter((l) => l.startsWith('@@'))).toEqual([`@@kcfg ${path.join(conf, '20-b.conf')}`, `@@kdir ${dir}/missing`]);
  });
});
