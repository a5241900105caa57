// A node's registries.yaml mirrors and rewrites in `holdfast inspect` (issue #37 item 4), on lab
// nodes whose /etc/rancher (a per-node dir bind-mounted over it inside the node's mount namespace)
// holds a registries.yaml WITH credentials under `configs:` (and some misplaced ones). Inspect
// shows the mirrors, endpoints and rewrites and where a needed image the node lacks would be
// pulled from; no credential shows up anywhere: stdout, stderr, --json, or Holdfast's files and
// logs under HOLDFAST_HOME. Also read through sudo -n for a non-root user when the file is root-only.
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labUserName, startLab, type Lab, type LabNodeHandle } from '../../lab';
import type { FleetReport } from '../../src/shared/fleet';
import { readRegistries } from '../../src/core/node/registries';
import { connectNode } from '../../src/core/node/session';
import { textWidth } from '../../src/cli/fit';
import { etcRancher, labNodeDef, onTerminal, runCli, tempHome } from './support';

const SUDOER = labUserName('hfreg');
// Issue #49 item 17: passwords holding `@` (their tail once showed after `<redacted>@`).
const SECRETS = ['alice-registry-user', 'TopSecretPassw0rd-91', 'bearer-tok3n-77', 'bob-mirror-user', 'hunter2', 'inline-at-17', 'ss-SECRET-b17', 'misplaced-auth-55', 'flow-secret-66', 'client-key-file-88.key'];
const MISSING = 'docker.io/library/holdfast-reg-missing:1.0';

const REGISTRIES = `# the site's mirrors
mirrors:
  docker.io:
    endpoint:
      - "https://registry.example.com:5000"
      - https://bob-mirror-user:hunter2@inline-at-17@mirror2.example.com # password hunter2@inline-at-17
    rewrite:
      "^library/(.*)": "mirror/library/$1"
    auth:
      password: misplaced-auth-55
  quay.io: {endpoint: ["https://q.example.com"], password: flow-secret-66}
  "registry.local:5000":
    endpoint: ["http://registry.local:5000", "https://reg:p@ss-SECRET-b17@[fd00::17]:5443"]
configs:
  "registry.example.com:5000":
    auth:
      username: alice-registry-user
      password: TopSecretPassw0rd-91
      token: bearer-tok3n-77
    tls:
      key_file: /etc/ssl/private/client-key-file-88.key
      insecure_skip_verify: true
  "*":
    tls:
      insecure_skip_verify: true
`;

let lab: Lab;
let home: string;
const outputs: string[] = [];


async function cli(args: string[], expectCode = 0) {
  const r = await runCli(args, { HOLDFAST_HOME: home, HOLDFAST_LOG: 'debug' });
  outputs.push(r.stdout, r.stderr);
  if (r.code !== expectCode) throw new Error(`holdfast ${args.join(' ')} exited ${r.code}, expected ${expectCode}\n${r.stderr}${r.stdout}`);
  return r;
}

const addArgs = (name: string, node: LabNodeHandle, ...extra: string[]) => [
  'node', 'add', name, '--host', node.host, '--port', String(node.port), '--identity', lab.clientKey, '--known-hosts', lab.knownHosts, '--accept-new-host-key', ...extra,
];

/** Every file under a dir (Holdfast's home: config, node store, audit log, logs). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((e) => {
    const p = path.join(dir, e);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

beforeAll(async () => {
  mkdirSync('/etc/rancher', { recursive: true });
  lab = await startLab({ nodes: ['reg1', 'reg2'], users: [{ name: SUDOER, sudo: 'nopasswd' }] });
  home = tempHome();
  mkdirSync(path.join(home, 'needed-images'), { recursive: true });
  // A needed image no node has: where would a node pull it from?
  for (const n of ['reg1', 'reg2', 'reg1-sudo']) writeFileSync(path.join(home, 'needed-images', `${n}.txt`), `${MISSING}\n`);
  await etcRancher(lab.node('reg1'), { 'k3s/registries.yaml': REGISTRIES }, { 'k3s/registries.yaml': 0o600 });
  await cli(addArgs('reg1', lab.node('reg1')));
  await cli(addArgs('reg2', lab.node('reg2')));
  await cli(addArgs('reg1-sudo', lab.node('reg1'), '--user', SUDOER, '--sudo'));
});

afterAll(async () => {
  await lab?.stop();
});

describe('holdfast inspect: registries.yaml mirrors and rewrites', () => {
  it('--json: mirrors, endpoints, rewrites, a count of configs, and where a missing needed image is pulled as', async () => {
    const report = JSON.parse((await cli(['inspect', 'reg1', 'reg2', '--json'])).stdout) as FleetReport;
    const reg1 = report.nodes.find((n) => n.node === 'reg1')!;
    expect(reg1.registries).toEqual({
      file: '/etc/rancher/k3s/registries.yaml',
      state: 'read',
      mirrors: [
        {
          registry: 'docker.io',
          endpoints: ['https://registry.example.com:5000', 'https://<redacted>@mirror2.example.com'],
          rewrites: [{ pattern: '^library/(.*)', replacement: 'mirror/library/$1' }],
        },
        { registry: 'registry.local:5000', endpoints: ['http://registry.local:5000', 'https://<redacted>@[fd00::17]:5443'], rewrites: [] },
      ],
      configs: 2,
      notes: [
        'a key other than endpoint/rewrite: ignored, as k3s does; its value stayed on the node',
        'mirror quay.io is written in flow style ({…}): not read',
      ],
      pulls: [
        {
          ref: MISSING,
          sources: [
            { endpoint: 'https://registry.example.com:5000/v2', as: 'mirror/library/holdfast-reg-missing:1.0' },
            { endpoint: 'https://mirror2.example.com/v2', as: 'mirror/library/holdfast-reg-missing:1.0' },
            { endpoint: 'https://registry-1.docker.io/v2', as: 'library/holdfast-reg-missing:1.0', default: true },
          ],
        },
      ],
    });
    // The rewrite changes where it is pulled from, not the name the node must hold.
    expect(reg1.needs!.missing.map((m) => m.ref)).toEqual([MISSING]);
    // No registries.yaml: said, and nothing else.
    expect(report.nodes.find((n) => n.node === 'reg2')!.registries).toEqual({ file: '/etc/rancher/k3s/registries.yaml', state: 'absent', mirrors: [], configs: null, notes: [] });
  });

  it('text: a short section under the report, within 100 columns, only for nodes with a registries.yaml', async () => {
    const { stdout } = await cli(['inspect', 'reg1', 'reg2']);
    const at = stdout.indexOf('\nRegistry mirrors');
    expect(at).toBeGreaterThan(0);
    const section = stdout.slice(at + 1).split('\n\n')[0]!.split('\n');
    expect(section).toEqual([
      'Registry mirrors (registries.yaml; images are still stored under the names pods give):',
      '  reg1: /etc/rancher/k3s/registries.yaml: 2 mirrors, configs: 2 (credentials stay on the node)',
      '    docker.io → https://registry.example.com:5000, https://<redacted>@mirror2.example.com',
      '      rewrite ^library/(.*) → mirror/library/$1',
      '    registry.local:5000 → http://registry.local:5000, https://<redacted>@[fd00::17]:5443',
      '    note: a key other than endpoint/rewrite: ignored, as k3s does; its value stayed on the node',
      '    note: mirror quay.io is written in flow style ({…}): not read',
      '    1 needed image it lacks would be pulled from:',
      `      ${MISSING}: registry.example.com:5000 as mirror/library/holdfast-reg-missing:1.0`,
    ]);
    expect(stdout).not.toContain('reg2: /etc/rancher');
    // On a terminal 100 and 80 columns wide: the same words, no line wider than the terminal.
    const squeeze = (x: string) => x.replace(/\s+/g, '');
    for (const cols of [100, 80]) {
      const lines = await onTerminal(['inspect', 'reg1', 'reg2'], cols, { HOLDFAST_HOME: home }, (out) => outputs.push(out));
      for (const l of lines) expect(textWidth(l), l).toBeLessThanOrEqual(cols);
      const shown = squeeze(lines.join('\n'));
      for (const l of section) expect(shown).toContain(squeeze(l));
    }
  });

  it('a root-only registries.yaml: read through sudo -n for a non-root user; without sudo, told how', async () => {
    const report = JSON.parse((await cli(['inspect', 'reg1-sudo', '--json'])).stdout) as FleetReport;
    expect(report.nodes[0]!.registries).toMatchObject({ state: 'read', configs: 2, mirrors: [{ registry: 'docker.io' }, { registry: 'registry.local:5000' }] });
    // The same user without sudo, over its own connection: the script says why, and how.
    const ssh = await connectNode(labNodeDef(lab, lab.node('reg1'), { user: SUDOER }));
    try {
      expect(await readRegistries(ssh, { sudo: false, file: '/etc/rancher/k3s/registries.yaml' })).toEqual({
        registries: {
          file: '/etc/rancher/k3s/registries.yaml',
          state: 'unreadable',
          mirrors: [],
          configs: null,
          notes: ["root-only: connect as root, or let Holdfast use sudo -n (the node's --sudo option)"],
        },
        mirrorNames: [],
      });
    } finally {
      await ssh.close();
    }
  });

  it('images and inspect --json, with --verbose logs: no credential in them either', async () => {
    await cli(['images', 'reg1', '--verbose']);
    const { stdout } = await cli(['inspect', 'reg1', '--json', '--verbose']);
    expect(stdout).toContain('https://<redacted>@[fd00::17]:5443');
  });

  it('no credential from the file shows up in any output, log or file of Holdfast', () => {
    expect(outputs.length).toBeGreaterThan(0);
    const files = filesUnder(home);
    for (const s of SECRETS) {
      for (const o of outputs) expect(o).not.toContain(s);
      for (const f of files) expect(readFileSync(f, 'latin1'), f).not.toContain(s);
    }
  });
});
