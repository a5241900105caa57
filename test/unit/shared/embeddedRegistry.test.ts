// k3s's embedded registry (issue #37 item 3): which references a node can serve its peers and why
// not (shared/embeddedRegistry), how the node's config and registries.yaml are read
// (core/node/embeddedRegistry: the real script, run here against files in a temp dir), and
// prune keeping what peers pull from the node (shared/prunePlan).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EMBEDDED_SCRIPT, EMBEDDED_SCRIPT_NAME, parseEmbeddedAnswer, readEmbeddedRegistry } from '../../../src/core/node/embeddedRegistry';
import { parseRegistriesAnswer, readRegistries, registriesArgv, REGISTRIES_SCRIPT_NAME } from '../../../src/core/node/registries';
import type { ExecResult, SshConnection } from '../../../src/core/ssh/connect';
import { embeddedRegistryBrief, fleetPeerSources, peerKeepText, peerServing, registryOf, type EmbeddedRegistryConfig } from '../../../src/shared/embeddedRegistry';
import { planPrune } from '../../../src/shared/prunePlan';
import { store } from '../../support/diskStore';

const D = 'sha256:' + 'd'.repeat(64);
const TAG = 'docker.io/library/nginx:1.27';
const DIGEST_REF = `docker.io/library/nginx@${D}`;
const ID = 'sha256:' + 'a'.repeat(64);
const SOURCE = { 'containerd.io/distribution.source.docker.io': 'library/nginx' };

const on = (mirrors: string[] = ['docker.io']): EmbeddedRegistryConfig => ({ enabled: 'on', from: '/etc/rancher/k3s/config.yaml', mirrors, notes: [] });
const refs = (...names: string[]) => names.map((name) => ({ name, digest: D }));

describe('peerServing', () => {
  it('serves a reference with its digest reference, its registry mirrored and the distribution.source label', () => {
    const s = peerServing(refs(TAG, DIGEST_REF, ID), on(), new Map([[D, SOURCE]]));
    expect(s.get(TAG)).toMatchObject({ servable: true, registry: 'docker.io', brief: 'peers can pull it' });
    expect(s.get(DIGEST_REF)?.servable).toBe(true);
    // CRI's sha256:<id> record names no registry: no peer asks for it.
    expect(s.has(ID)).toBe(false);
  });

  it('says why not, one reason each, most basic first', () => {
    const labels = new Map([[D, SOURCE]]);
    const off = peerServing(refs(TAG, DIGEST_REF), { ...on(), enabled: 'off', from: null }, labels).get(TAG)!;
    expect(off).toMatchObject({ servable: false, block: 'registry-off', brief: 'embedded registry off' });
    expect(off.reason).toContain('embedded-registry: true in /etc/rancher/k3s/config.yaml on the servers');

    const notMirrored = peerServing(refs(TAG, DIGEST_REF), on(['registry.local']), labels).get(TAG)!;
    expect(notMirrored).toMatchObject({ block: 'not-mirrored', brief: 'registry not mirrored' });
    expect(notMirrored.reason).toContain('docker.io is not under mirrors in /etc/rancher/k3s/registries.yaml (registry.local)');
    expect(peerServing(refs(TAG, DIGEST_REF), on([]), labels).get(TAG)!.reason).toContain('lists no registry under mirrors');

    const noDigest = peerServing(refs(TAG), on(), labels).get(TAG)!;
    expect(noDigest).toMatchObject({ block: 'no-digest-ref', brief: 'no digest reference' });
    expect(noDigest.reason).toContain(`${DIGEST_REF} is missing`);
    expect(noDigest.reason).toContain(`ctr -n k8s.io images tag ${TAG} ${DIGEST_REF}`);

    const noLabel = peerServing(refs(TAG, DIGEST_REF), on(), new Map([[D, { 'containerd.io/distribution.source.ghcr.io': 'x/y' }]])).get(TAG)!;
    expect(noLabel).toMatchObject({ block: 'no-source-label', brief: 'no distribution.source label' });
    expect(noLabel.reason).toContain('containerd.io/distribution.source.docker.io');
  });

  it('takes "*" and _default as every registry, and a digest reference only in the same repository', () => {
    const other = 'registry.local/mirror/nginx:1.27';
    const labels = new Map([[D, { ...SOURCE, 'containerd.io/distribution.source.registry.local': 'mirror/nginx' }]]);
    for (const wildcard of ['*', '_default']) {
      const s = peerServing(refs(TAG, DIGEST_REF, other), on([wildcard]), labels);
      expect(s.get(TAG)?.servable).toBe(true);
      // Same image, another repository: docker.io's digest reference does not stand for it.
      expect(s.get(other)?.block).toBe('no-digest-ref');
    }
  });

  it('unknown config: not servable, and the reason says what could not be read', () => {
    const cfg: EmbeddedRegistryConfig = { enabled: 'unknown', from: null, mirrors: [], notes: ['/etc/rancher/k3s/config.yaml could not be read by the SSH user'] };
    expect(peerServing(refs(TAG, DIGEST_REF), cfg, new Map()).get(TAG)!.reason).toContain('could not be read by the SSH user');
    expect(embeddedRegistryBrief(cfg)).toBe('embedded registry: unknown (config not readable)');
  });

  it('names the registry of containerd names', () => {
    expect(registryOf(TAG)).toBe('docker.io');
    expect(registryOf('registry.lan:5000/app@' + D)).toBe('registry.lan:5000');
    expect(registryOf(ID)).toBeNull();
    expect(embeddedRegistryBrief(on(['docker.io', 'ghcr.io']))).toBe('embedded registry: on, mirroring docker.io, ghcr.io');
    expect(embeddedRegistryBrief(on(['*']))).toBe('embedded registry: on, mirroring every registry');
  });
});

/**
 * The node's /etc/rancher/k3s, as files in a temp dir, read by the real scripts: the config files
 * by the embedded-registry one, registries.yaml by the node's one reading of it (core/node/registries).
 */
function readDir(files: Record<string, string>): EmbeddedRegistryConfig {
  const dir = mkdtempSync(path.join(tmpdir(), 'hf-er-'));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  const out = execFileSync('sh', ['-c', EMBEDDED_SCRIPT, EMBEDDED_SCRIPT_NAME, '', dir], { encoding: 'utf8' });
  const file = path.join(dir, 'registries.yaml');
  const argv = registriesArgv(false, file);
  const reg = execFileSync(argv[0]!, argv.slice(1), { encoding: 'utf8' });
  // Join tokens and registry credentials never leave the node.
  expect(out).not.toContain('S3cret');
  expect(reg).not.toContain('S3cret');
  return parseEmbeddedAnswer(out, false, parseRegistriesAnswer(reg, false, file));
}

describe('reading the node', () => {
  it('merges config.yaml and config.yaml.d as k3s does (name order, last wins), and reads only the mirror names', () => {
    const cfg = readDir({
      'config.yaml': 'token: K10-S3cret\nembedded-registry: false\n',
      'config.yaml.d/10-json.yaml': '{\n  "embedded-registry": false\n}\n',
      'config.yaml.d/20-on.YML': 'embedded-registry: true # peer to peer\n',
      'config.yaml.d/30-notes.txt': 'embedded-registry: false\n', // not .yaml/.yml: k3s ignores it
      'registries.yaml': [
        'mirrors:',
        '  docker.io:',
        '    endpoint:',
        '      - "https://mirror.lan"',
        '  "registry.local":',
        "  '*':",
        'configs:',
        '  docker.io:',
        '    auth:',
        '      password: S3cret',
        '',
      ].join('\n'),
    });
    expect(cfg.enabled).toBe('on');
    expect(cfg.from).toMatch(/config\.yaml\.d\/20-on\.YML$/);
    expect(cfg.mirrors).toEqual(['docker.io', 'registry.local', '*']);
  });

  it('sends only the key of a mirror entry: a flow-style entry\'s credential URL and a port in a quoted key', () => {
    const cfg = readDir({
      'config.yaml': 'embedded-registry: true\n',
      'registries.yaml': ['mirrors:', '  quay.io: {endpoint: ["https://op:S3cret@mirror.lan"]}', '  "registry.local:5000":', '    endpoint: ["https://x"]', ''].join('\n'),
    });
    expect(cfg.mirrors).toEqual(['quay.io', 'registry.local:5000']);
  });

  it('off when no file sets it; a missing registries.yaml is said', () => {
    const cfg = readDir({ 'config.yaml': 'write-kubeconfig-mode: "0644"\n' });
    expect(cfg).toMatchObject({ enabled: 'off', from: null, mirrors: [] });
    expect(cfg.notes.join(' ')).toContain('registries.yaml does not exist');
  });

  it('an agent (joins a server, sets nothing) follows its servers; the server URL never leaves the node', () => {
    const dir = { 'config.yaml': 'server: https://S3cret-server.lan:6443\ntoken: K10-S3cret\n', 'registries.yaml': 'mirrors:\n  "*":\n' };
    expect(readDir(dir)).toMatchObject({ enabled: 'agent', from: null, mirrors: ['*'] });
    // Judged as if on, and the reason says whose setting decides.
    const a = peerServing(refs(TAG, DIGEST_REF), { enabled: 'agent', from: null, mirrors: ['*'], notes: [] }, new Map([[D, SOURCE]])).get(TAG)!;
    expect(a.servable).toBe(true);
    expect(a.reason).toContain('This is an agent: all of this holds only if its servers run with embedded-registry: true.');
  });

  it('unknown when a config file could not be read', () => {
    const registries = parseRegistriesAnswer('@@file /etc/rancher/k3s/registries.yaml\n@@unreadable\n', false, '/etc/rancher/k3s/registries.yaml');
    const cfg = parseEmbeddedAnswer('@@unreadable /etc/rancher/k3s/config.yaml\n', false, registries);
    expect(cfg.enabled).toBe('unknown');
    expect(cfg.notes).toEqual(['/etc/rancher/k3s/config.yaml could not be read by the SSH user', '/etc/rancher/k3s/registries.yaml could not be read by the SSH user']);
  });
});

describe('one reading of registries.yaml per node', () => {
  /** A node whose /etc/rancher/k3s is a temp dir: the real scripts run by a real sh, each run named. */
  function node(files: Record<string, string>): { ssh: Pick<SshConnection, 'exec'>; ran: string[] } {
    const dir = mkdtempSync(path.join(tmpdir(), 'hf-er-once-'));
    for (const [rel, text] of Object.entries(files)) writeFileSync(path.join(dir, rel), text);
    const ran: string[] = [];
    const exec = async (argv: string[]): Promise<ExecResult> => {
      ran.push(argv[3]!);
      const args = argv.slice(1).map((a, i) => (i === 4 ? a.replace('/etc/rancher/k3s', dir) : a));
      return { code: 0, stdout: execFileSync(argv[0]!, args, { encoding: 'utf8' }), stderr: '' };
    };
    return { ssh: { exec }, ran };
  }
  const FILES = { 'config.yaml': 'embedded-registry: true\n', 'registries.yaml': 'mirrors:\n  docker.io:\n  ghcr.io: {}\nconfigs:\n  docker.io:\n    auth:\n      password: S3cret\n' };

  it('the embedded registry takes its mirror names from the registries reading handed to it: the file is not read again', async () => {
    const { ssh, ran } = node(FILES);
    const read = await readRegistries(ssh, { sudo: false, file: '/etc/rancher/k3s/registries.yaml' });
    const cfg = await readEmbeddedRegistry(ssh, { sudo: false, distro: 'k3s' }, read);
    expect(cfg).toMatchObject({ enabled: 'on', mirrors: ['docker.io', 'ghcr.io'], notes: [] });
    expect(ran).toEqual([REGISTRIES_SCRIPT_NAME, EMBEDDED_SCRIPT_NAME]);
  });

  it('without one it reads registries.yaml itself, once, by the registries script', async () => {
    const { ssh, ran } = node(FILES);
    expect(await readEmbeddedRegistry(ssh, { sudo: false, distro: 'k3s' })).toMatchObject({ enabled: 'on', mirrors: ['docker.io', 'ghcr.io'] });
    expect([...ran].sort()).toEqual([EMBEDDED_SCRIPT_NAME, REGISTRIES_SCRIPT_NAME].sort());
    const absent = node({ 'config.yaml': 'embedded-registry: true\n' });
    expect((await readEmbeddedRegistry(absent.ssh, { sudo: false, distro: 'k3s' })).notes).toEqual(['/etc/rancher/k3s/registries.yaml does not exist']);
  });
});

describe('prune and the embedded registry', () => {
  it('keeps an unpinned image peers pull from this node, with the reason in the plan', () => {
    const { images, index } = store([
      { key: 'served', refs: [TAG, DIGEST_REF], blobs: [['n', 100]] },
      { key: 'other', refs: ['docker.io/library/redis:7.2'], blobs: [['r', 50]] },
    ]);
    const serving = peerServing(refs(TAG, DIGEST_REF, 'docker.io/library/redis:7.2'), on(), new Map([[D, SOURCE]]));
    const peers = new Map(images.flatMap((i) => {
      const t = peerKeepText(i.refs, serving);
      return t ? [[i.key, t] as const] : [];
    }));
    const plan = planPrune('edge1', images, index, { keepVersions: 1 }, peers);
    expect(plan.remove.map((r) => r.key)).toEqual(['other']);
    const kept = plan.kept.find((k) => k.key === 'served')!;
    expect(kept.reason).toBe('peers');
    expect(kept.text).toContain(`Peers can pull ${TAG} from this node through the embedded registry`);
    // Without the registry, the same image goes.
    expect(planPrune('edge1', images, index, { keepVersions: 1 }).remove.map((r) => r.key).sort()).toEqual(['other', 'served']);
  });
});

describe('fleetPeerSources', () => {
  const served = peerServing(refs(TAG, DIGEST_REF), on(), new Map([[D, SOURCE]]));
  const withPeers = (names: string[], needed: boolean) => refs(...names).map((r) => ({ ...r, peers: served.get(r.name), need: { needed } }));

  it('names, for every needed image, the nodes of the same group that can serve it and those that lack it', () => {
    const sources = fleetPeerSources([
      { node: 'n1', group: 'a', images: withPeers([TAG, DIGEST_REF], true), missing: [], enabled: 'on' },
      { node: 'n2', group: 'a', images: [], missing: [TAG], enabled: 'agent' },
      { node: 'n3', group: 'a', images: withPeers([TAG, DIGEST_REF], true), missing: [], enabled: 'agent' },
      // Another site's node serves it too, but not to site a.
      { node: 'm1', group: 'b', images: withPeers([TAG, DIGEST_REF], false), missing: [], enabled: 'on' },
      { node: 'm2', group: 'b', images: [], missing: ['docker.io/library/redis:7.2'], enabled: 'on' },
    ]);
    expect(sources).toEqual([
      { image: TAG, group: 'a', servedBy: ['n1', 'n3'], missingOn: ['n2'] },
      { image: 'docker.io/library/redis:7.2', group: 'b', servedBy: [], missingOn: ['m2'] },
    ]);
  });

  it('an agent serves nothing when no node of its group has the registry on', () => {
    const sources = fleetPeerSources([
      { node: 'n1', images: withPeers([TAG, DIGEST_REF], true), missing: [], enabled: 'agent' },
      { node: 'n2', images: [], missing: [TAG], enabled: 'off' },
    ]);
    expect(sources).toEqual([{ image: TAG, servedBy: [], missingOn: ['n2'] }]);
  });
});
