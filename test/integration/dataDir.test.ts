// A node's images dir follows its distro's data-dir: lab nodes whose /etc/rancher (a per-node dir
// bind-mounted over it inside the node's mount namespace only) holds k3s or RKE2 config files,
// with the distro binary Holdfast's probe asks for its version. `holdfast node add` without
// --images-dir uses <data-dir>/agent/images and says where it came from; an explicit one stays;
// the app's connect follows a moved data-dir; a root-only config is read through sudo -n; the
// socket never moves; the join tokens in those files never leave the node.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labUserName, startLab, writeImageArchive, type Lab, type LabNodeHandle } from '../../lab';
import { parseProbe, probeArgv } from '../../src/core/node/detect';
import { connectNode } from '../../src/core/node/session';
import { createHandlers, type Service } from '../../src/core/service';
import type { ArchiveFile, ArchivesReport } from '../../src/shared/archivesReport';
import type { NodeStatus } from '../../src/shared/domain/connection';
import type { NodeDef } from '../../src/shared/domain/nodes';
import { etcRancher, labNodeDef, runCli, tempHome } from './support';

const TOKEN = 'K10-join-token-S3cret::server:abcdef';
const SUDOER = labUserName('hfdd');
const PLAIN = labUserName('hfddn');
const outputs: string[] = [];

let lab: Lab;
let home: string;


/** An archive in the node's /var/lib/rancher/<rel> (the node's /var/lib/rancher is <root>/rancher). */
async function archiveAt(node: LabNodeHandle, rel: string, image: string): Promise<void> {
  await writeImageArchive(path.join(node.root, 'rancher', rel), { format: 'oci', compression: 'none', images: [{ name: image }] });
}

async function cli(args: string[], expectCode = 0) {
  const r = await runCli(args, { HOLDFAST_HOME: home });
  outputs.push(r.stdout, r.stderr);
  if (r.code !== expectCode) throw new Error(`holdfast ${args.join(' ')} exited ${r.code}, expected ${expectCode}\n${r.stderr}${r.stdout}`);
  return r;
}

const addArgs = (name: string, node: LabNodeHandle, ...extra: string[]) => [
  'node', 'add', name, '--host', node.host, '--port', String(node.port), '--identity', lab.clientKey, '--known-hosts', lab.knownHosts, ...extra,
];
const nodeLs = async (): Promise<NodeDef[]> => JSON.parse((await cli(['node', 'ls', '--json'])).stdout) as NodeDef[];
const archives = async (name: string): Promise<ArchiveFile[]> => (JSON.parse((await cli(['archives', name, '--json'])).stdout) as ArchivesReport).archives;

beforeAll(async () => {
  // The nodes share the host's /etc; each mounts its own dir over /etc/rancher, which needs a mountpoint.
  mkdirSync('/etc/rancher', { recursive: true });
  lab = await startLab({ nodes: ['dk3s', 'drke2', 'dsudo'], users: [{ name: SUDOER, sudo: 'nopasswd' }, { name: PLAIN }] });
  home = tempHome();
});

afterAll(async () => {
  await lab?.stop();
  // Every output of this file: the join token in the nodes' config files never showed up.
  for (const o of outputs) expect(o).not.toContain(TOKEN);
});

describe('holdfast node add without --images-dir', () => {
  it("k3s: uses the data-dir of the last config file that sets it, as k3s merges them, and says so", async () => {
    const n = lab.node('dk3s');
    await n.installDistroBinary('k3s', 'v1.32.5+k3s1');
    await etcRancher(n, {
      'k3s/config.yaml': `token: ${TOKEN}\ndata-dir: /var/lib/rancher/k3s-data # bigger disk\n`,
      'k3s/config.yaml.d/10-disk.yaml': 'node-label:\n  - disk=ssd\n',
      'k3s/config.yaml.d/20-images.YML': 'data-dir: "/var/lib/rancher/k3s-data2"\n',
      'k3s/config.yaml.d/30-notes.txt': 'data-dir: /not/a/yaml/file\n', // not .yaml/.yml: k3s ignores it
      'k3s/config.yaml.d/40-dir.yaml/x.yaml': 'data-dir: /not/a/file\n', // a directory: k3s skips it
    });
    await archiveAt(n, 'k3s-data2/agent/images/app.tar', 'registry.local/dd/app:1');

    const r = await cli(addArgs('dk3s', n, '--accept-new-host-key'));
    expect(r.stdout).toBe(
      'added dk3s: containerd ' +
        /containerd ([^,\s]+)/.exec(r.stdout)![1] +
        ', k3s v1.32.5+k3s1\n' +
        '  images dir: /var/lib/rancher/k3s-data2/agent/images (data-dir /var/lib/rancher/k3s-data2 from /etc/rancher/k3s/config.yaml.d/20-images.YML)\n',
    );
    const def = (await nodeLs()).find((d) => d.name === 'dk3s')!;
    expect(def).toMatchObject({ imagesDir: '/var/lib/rancher/k3s-data2/agent/images', imagesDirSource: 'detected', socket: '/run/k3s/containerd/containerd.sock' });
    expect((await archives('dk3s')).map((a) => [a.path, a.images])).toEqual([['app.tar', ['registry.local/dd/app:1']]]);
  });

  it("RKE2: RKE2's own default when its config sets no data-dir", async () => {
    const n = lab.node('drke2');
    await n.installDistroBinary('rke2', 'v1.31.6+rke2r1');
    await etcRancher(n, { 'rke2/config.yaml': `token: ${TOKEN}\nwrite-kubeconfig-mode: "0644"\n` });
    await archiveAt(n, 'rke2/agent/images/system.tar', 'registry.local/dd/rke2-system:1');

    const r = await cli(addArgs('drke2', n));
    expect(r.stdout).toContain('RKE2 v1.31.6+rke2r1\n');
    expect(r.stdout).toContain(
      '  images dir: /var/lib/rancher/rke2/agent/images (RKE2\'s default data-dir: none set in /etc/rancher/rke2/config.yaml or config.yaml.d/)',
    );
    expect((await nodeLs()).find((d) => d.name === 'drke2')).toMatchObject({ imagesDir: '/var/lib/rancher/rke2/agent/images', imagesDirSource: 'detected' });
    expect((await archives('drke2')).map((a) => a.path)).toEqual(['system.tar']);
  });

  it('an explicit --images-dir stays as given', async () => {
    const r = await cli(addArgs('drke2-explicit', lab.node('drke2'), '--images-dir', '/srv/my-images'));
    expect(r.stdout).toContain('  images dir: /srv/my-images (as given)');
    expect((await nodeLs()).find((d) => d.name === 'drke2-explicit')).toMatchObject({ imagesDir: '/srv/my-images', imagesDirSource: 'explicit' });
  });

  it('node edit --no-images-dir goes back to what the node says', async () => {
    const r = await cli(['node', 'edit', 'drke2-explicit', '--no-images-dir']);
    expect(r.stdout).toContain('  imagesDir: /srv/my-images → /var/lib/rancher/rke2/agent/images');
    expect(r.stdout).toContain('  imagesDirSource: explicit → detected');
    expect((await nodeLs()).find((d) => d.name === 'drke2-explicit')).toMatchObject({ imagesDir: '/var/lib/rancher/rke2/agent/images', imagesDirSource: 'detected' });
  });
});

describe("the app's connect follows a moved data-dir", () => {
  let service: Service;
  beforeAll(() => {
    service = createHandlers({ home });
  });
  afterAll(async () => {
    await service?.dispose();
  });

  it('updates a detected images dir, never an explicit one, and reads the new dir', async () => {
    const n = lab.node('dk3s');
    await etcRancher(n, {
      'k3s/config.yaml': `token: ${TOKEN}\n`,
      'k3s/config.yaml.d/20-images.yaml': "data-dir: '/var/lib/rancher/k3s-moved'\n",
    });
    await archiveAt(n, 'k3s-moved/agent/images/moved.tar', 'registry.local/dd/moved:1');
    // A node added in the app (no images dir given) and one with an explicit dir, on the same node.
    const added = await service['nodes.add']({ node: { name: 'dk3s-app', host: n.host, port: n.port, identity: lab.clientKey, knownHosts: lab.knownHosts } });
    expect(added).toMatchObject({ imagesDir: '/var/lib/rancher/k3s/agent/images' });
    expect(added.imagesDirSource).toBeUndefined();
    await service['nodes.add']({ node: { name: 'dk3s-mine', host: n.host, port: n.port, identity: lab.clientKey, knownHosts: lab.knownHosts, imagesDir: '/srv/mine' } });

    for (const name of ['dk3s', 'dk3s-app', 'dk3s-mine']) {
      const st = (await service['nodes.connect']({ name })) as NodeStatus;
      expect(st.state, JSON.stringify(st)).toBe('connected');
      expect(st.info?.imagesDir).toMatchObject({ imagesDir: '/var/lib/rancher/k3s-moved/agent/images', file: '/etc/rancher/k3s/config.yaml.d/20-images.yaml' });
    }
    const defs = await service['nodes.list']({});
    expect(defs.find((d) => d.name === 'dk3s')).toMatchObject({ imagesDir: '/var/lib/rancher/k3s-moved/agent/images', imagesDirSource: 'detected' });
    expect(defs.find((d) => d.name === 'dk3s-app')).toMatchObject({ imagesDir: '/var/lib/rancher/k3s-moved/agent/images', imagesDirSource: 'detected' });
    expect(defs.find((d) => d.name === 'dk3s-mine')).toMatchObject({ imagesDir: '/srv/mine', imagesDirSource: 'explicit' });
    // The session the connect left behind already reads the new dir.
    expect((await service['archives.list']({ node: 'dk3s-app' })).map((a) => a.path)).toEqual(['moved.tar']);
  });
});

describe('config files only root can read', () => {
  beforeAll(async () => {
    const n = lab.node('dsudo');
    await n.installDistroBinary('k3s', 'v1.33.1+k3s1');
    await etcRancher(
      n,
      {
        'k3s/config.yaml': `token: ${TOKEN}\n`,
        'k3s/config.yaml.d/50-data.yaml': 'data-dir: /var/lib/rancher/k3s-root-only\n',
      },
      { 'k3s/config.yaml': 0o600, 'k3s/config.yaml.d/50-data.yaml': 0o600, 'k3s/config.yaml.d': 0o700 },
    );
  });

  it('a user with sudo reads them through sudo -n', async () => {
    const n = lab.node('dsudo');
    const r = await cli(addArgs('dsudo', n, '--user', SUDOER, '--sudo'));
    expect(r.stdout).toContain(
      '  images dir: /var/lib/rancher/k3s-root-only/agent/images (data-dir /var/lib/rancher/k3s-root-only from /etc/rancher/k3s/config.yaml.d/50-data.yaml)',
    );
  });

  it('a user without sudo is told which file it could not read, and gets the default', async () => {
    const n = lab.node('dsudo');
    const ssh = await connectNode(labNodeDef(lab, n, { user: PLAIN }));
    try {
      const r = await ssh.exec(probeArgv(false), { timeoutMs: 15_000 });
      expect(r.stdout).not.toContain(TOKEN);
      const p = parseProbe(r.stdout);
      expect(p.distroVersion).toBe('v1.33.1+k3s1');
      expect(p.imagesDir).toMatchObject({ imagesDir: '/var/lib/rancher/k3s/agent/images', from: 'default' });
      expect(p.imagesDir.notes).toEqual([
        '/etc/rancher/k3s/config.yaml could not be read by the SSH user, so a data-dir it may set is not known.',
        '/etc/rancher/k3s/config.yaml.d/ could not be read by the SSH user, so a data-dir it may set is not known.',
      ]);
    } finally {
      await ssh.close();
    }
  });
});

// Issue #49 item 18: the probe once sent a JSON object's first line, so a one-line JSON
// config.yaml (as Rancher writes its files) left the node whole, join token included.
describe('a one-line JSON config.yaml', () => {
  const JSON_TOKEN = 'K10-json-join-token-S3cret-49::server:fedcba';
  beforeAll(async () => {
    await etcRancher(lab.node('dk3s'), {
      'k3s/config.yaml': `${JSON.stringify({ token: JSON_TOKEN, 'agent-token': JSON_TOKEN, 'data-dir': '/var/lib/rancher/k3s-json', 'node-label': ['data-dir=x'] })}\n`,
    });
  });

  it('the probe sends only its data-dir: the token never leaves the node', async () => {
    const ssh = await connectNode(labNodeDef(lab, lab.node('dk3s')));
    try {
      const r = await ssh.exec(probeArgv(false), { timeoutMs: 15_000 });
      expect(r.stdout).not.toContain('S3cret-49');
      expect(r.stdout).toContain('|"data-dir":"/var/lib/rancher/k3s-json"');
      expect(parseProbe(r.stdout).imagesDir).toMatchObject({ dataDir: '/var/lib/rancher/k3s-json', from: 'config', file: '/etc/rancher/k3s/config.yaml' });
    } finally {
      await ssh.close();
    }
  });

  it('node add, inspect --json and images, with --verbose logs: no token in any output', async () => {
    const add = await cli([...addArgs('djson', lab.node('dk3s')), '--verbose']);
    expect(add.stdout).toContain('data-dir /var/lib/rancher/k3s-json from /etc/rancher/k3s/config.yaml');
    const runs = [add, await cli(['inspect', 'djson', '--json', '--verbose']), await cli(['images', 'djson', '--verbose'])];
    expect(runs.some((r) => r.stderr.length > 0)).toBe(true); // the --verbose log was there to look at
    for (const r of runs) expect(r.stdout + r.stderr).not.toContain('S3cret-49');
  });
});
