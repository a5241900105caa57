// The node side of registries.yaml (core/node/registries.ts): the fixed script run by a real sh and
// awk on real files, as a node runs it. What it prints is all that leaves the node, so every
// credential in these files must be absent from it, whatever the layout.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseRegistriesAnswer, registriesArgv, registriesFileOf } from '../../../../src/core/node/registries';

const dir = mkdtempSync(path.join(tmpdir(), 'hf-registries-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SECRETS = ['alice-user', 'TopSecretPassw0rd', 'tok3n-value', 'bob-user', 'hunter2', 'leaked-by-mistake', 'flow-secret', '/etc/ssl/private/client.key'];

/** Runs the script as a node would (no sudo: the file is the user's own). */
function run(text: string, name = 'registries.yaml'): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  const argv = registriesArgv(false, file);
  return execFileSync(argv[0]!, argv.slice(1), { encoding: 'utf8' });
}

const WITH_CREDENTIALS = `# site mirrors
mirrors:
  docker.io:
    endpoint:
      - "https://registry.example.com:5000"
      - https://bob-user:hunter2@mirror2.example.com # old one, password hunter2
    rewrite:
      "^library/(.*)": "mirror/library/$1"
    auth:
      password: leaked-by-mistake
  quay.io: {endpoint: ["https://q.example.com"], password: flow-secret}
  "*":
    endpoint:
    - https://all.example.com
configs:
  "registry.example.com:5000":
    auth:
      username: alice-user
      password: TopSecretPassw0rd
      token: tok3n-value
    tls:
      key_file: /etc/ssl/private/client.key
      insecure_skip_verify: true
  "*":
    tls:
      ca_file: /etc/ssl/ca.pem
`;

describe('the registries script', () => {
  it('sends the mirrors block, filtered, and only a count of configs: no credential leaves the node', () => {
    const out = run(WITH_CREDENTIALS);
    for (const s of SECRETS) expect(out).not.toContain(s);
    expect(out).not.toContain('configs:');
    const { registries: r, mirrorNames } = parseRegistriesAnswer(out, false, '/etc/rancher/k3s/registries.yaml');
    // The embedded registry's mirror names come from the same answer: also the flow-style entry's key.
    expect(mirrorNames).toEqual(['docker.io', 'quay.io', '*']);
    expect(r).toEqual({
      file: '/etc/rancher/k3s/registries.yaml',
      state: 'read',
      mirrors: [
        {
          registry: 'docker.io',
          endpoints: ['https://registry.example.com:5000', 'https://<redacted>@mirror2.example.com'],
          rewrites: [{ pattern: '^library/(.*)', replacement: 'mirror/library/$1' }],
        },
        { registry: '*', endpoints: ['https://all.example.com'], rewrites: [] },
      ],
      configs: 2,
      notes: [
        'a key other than endpoint/rewrite: ignored, as k3s does; its value stayed on the node',
        'mirror quay.io is written in flow style ({…}): not read',
      ],
    });
  });

  it('configs before mirrors, CRLF line ends, a flow-style configs: the same, and the count unknown', () => {
    const text = `configs: {"r.example.com": {"auth": {"password": "TopSecretPassw0rd"}}}\r\nmirrors:\r\n  r.example.com:\r\n    endpoint: [https://r.example.com:8443]\r\n`;
    const out = run(text, 'crlf.yaml');
    for (const s of SECRETS) expect(out).not.toContain(s);
    const { registries: r, mirrorNames } = parseRegistriesAnswer(out, false, 'f');
    expect(mirrorNames).toEqual(['r.example.com']);
    expect(r.mirrors).toEqual([{ registry: 'r.example.com', endpoints: ['https://r.example.com:8443'], rewrites: [] }]);
    expect(r.configs).toBeNull();
  });

  it('a JSON file is not cut on the node: nothing of it is sent, and the answer says why', () => {
    const out = run(`{"mirrors": {"docker.io": {"endpoint": ["https://m"]}}, "configs": {"m": {"auth": {"username": "alice-user", "password": "TopSecretPassw0rd"}}}}\n`, 'json.yaml');
    for (const s of SECRETS) expect(out).not.toContain(s);
    expect(out).not.toContain('https://m');
    expect(parseRegistriesAnswer(out, false, 'f')).toMatchObject({
      registries: { state: 'not-understood', mirrors: [], notes: ['written as JSON or in flow style: Holdfast reads block-style YAML only'] },
      mirrorNames: [],
    });
  });

  it('no file: absent; an unreadable one says how to read it', () => {
    const argv = registriesArgv(false, path.join(dir, 'none.yaml'));
    expect(parseRegistriesAnswer(execFileSync(argv[0]!, argv.slice(1), { encoding: 'utf8' }), false, 'f')).toEqual({
      registries: { file: 'f', state: 'absent', mirrors: [], configs: null, notes: [] },
      mirrorNames: [],
    });
    expect(parseRegistriesAnswer('@@file f\n@@unreadable\n', false, 'f')).toMatchObject({ registries: { state: 'unreadable', notes: [expect.stringContaining('--sudo')] }, mirrorNames: [] });
  });

  it('a file larger than the bound is read only so far, and says so', () => {
    const big = `mirrors:\n  docker.io:\n    endpoint:\n${'      - https://m.example.com\n'.repeat(12_000)}`;
    const r = parseRegistriesAnswer(run(big, 'big.yaml'), false, 'f').registries;
    expect(r.notes[0]).toBe('larger than 262144 bytes: only the start was read');
  });

  it('registries.yaml sits beside each distro\'s config.yaml', () => {
    expect(registriesFileOf('k3s')).toBe('/etc/rancher/k3s/registries.yaml');
    expect(registriesFileOf('rke2')).toBe('/etc/rancher/rke2/registries.yaml');
    expect(registriesFileOf('unknown')).toBe('/etc/rancher/k3s/registries.yaml');
  });
});

// Issue #49 item 17: a URL's userinfo runs to the LAST `@` of its authority (the authority ends at
// the first `/`, `?` or `#`), as WHATWG URL and Go's net/url (k3s's parser) split it. A password
// holding `@` once showed its tail: `https://<redacted>@ssw0rd-SECRET@mirror…`.
describe('endpoint credentials: redacted up to the last @ of the authority', () => {
  const cases: [string, string][] = [
    ['https://u:p@ssw0rd-SECRET@mirror.example.com', 'https://<redacted>@mirror.example.com'],
    ['"https://u@SECRET:p@ss@mirror.example.com:5000/v2"', 'https://<redacted>@mirror.example.com:5000/v2'],
    ['https://u:p:ss-SECRET@mirror.example.com', 'https://<redacted>@mirror.example.com'],
    ['https://u:p%40ss-SECRET@mirror.example.com/v2/', 'https://<redacted>@mirror.example.com/v2/'],
    // A raw `/`, `?` or `#` ends the authority: no parser accepts this URL, and nothing of it is shown.
    ['https://u:pa/ss-SECRET@mirror.example.com', 'https://<redacted>@mirror.example.com'],
    ['https://u:p?ss-SECRET@mirror.example.com', 'https://<redacted>@mirror.example.com'],
    ['https://u:p#ss-SECRET@mirror.example.com', 'https://<redacted>@mirror.example.com'],
    ['https://u:p@ss-SECRET@[fd00::1]:5000', 'https://<redacted>@[fd00::1]:5000'],
    ['http://u:p@SECRET@[::1]', 'http://<redacted>@[::1]'],
    // No scheme (containerd defaults to https): the userinfo still starts the value.
    ['u:p@ss-SECRET@mirror.example.com:5000', '<redacted>@mirror.example.com:5000'],
    ["'u:p@ss-SECRET@mirror.example.com'", '<redacted>@mirror.example.com'],
    ['https://mirror.example.com:5000/v2', 'https://mirror.example.com:5000/v2'],
    ['https://[fd00::1]:5000', 'https://[fd00::1]:5000'],
  ];
  it.each(cases)('%s → %s', (endpoint, shown) => {
    const out = run(`mirrors:\n  docker.io:\n    endpoint:\n      - ${endpoint}\n`, 'at.yaml');
    expect(out).not.toContain('SECRET');
    expect(out).not.toContain('ss-');
    const { registries } = parseRegistriesAnswer(out, false, '/etc/rancher/k3s/registries.yaml');
    expect(registries.mirrors[0]?.endpoints).toEqual([shown]);
  });

  it('a flow list, with and without spaces: each URL redacted on its own', () => {
    const out = run(`mirrors:\n  docker.io:\n    endpoint: [https://a.example.com, "https://u:p@SECRET@b.example.com",https://u:p@x@SECRET@c.example.com]\n`, 'flow.yaml');
    expect(out).not.toContain('SECRET');
    expect(out).toContain('[https://a.example.com, "https://<redacted>@b.example.com",https://<redacted>@c.example.com]');
  });
});
