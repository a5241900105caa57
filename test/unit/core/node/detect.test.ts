import { describe, expect, it } from 'vitest';
import { parseDistroVersion } from '../../../../src/core/node/detect';
import { platformFromUname, platformMatches } from '../../../../src/shared/mediaTypes';

// Recorded output of the real binaries (k3s v1.31.6+k3s1 and rke2 v1.31.6+rke2r1 release builds).
const K3S_OUT = 'k3s version v1.31.6+k3s1 (6ab750f9)\ngo version go1.22.12\n';
const RKE2_OUT = 'rke2 version v1.31.6+rke2r1 (9b7a40a5fd4d9b8b7e34d5b7a2b4a8cdb8e0f5c1)\ngo version go1.22.12 X:boringcrypto\n';

describe('parseDistroVersion', () => {
  it('reads k3s and rke2 versions', () => {
    expect(parseDistroVersion('k3s', K3S_OUT)).toBe('v1.31.6+k3s1');
    expect(parseDistroVersion('rke2', RKE2_OUT)).toBe('v1.31.6+rke2r1');
  });
  it('returns null for anything else', () => {
    expect(parseDistroVersion('k3s', RKE2_OUT)).toBeNull();
    expect(parseDistroVersion('k3s', 'bash: k3s: command not found')).toBeNull();
    expect(parseDistroVersion('k3s', '')).toBeNull();
  });
});

describe('platform of a node', () => {
  it('maps uname -m to OCI platforms', () => {
    expect(platformFromUname('x86_64\n')).toEqual({ os: 'linux', architecture: 'amd64' });
    expect(platformFromUname('aarch64')).toEqual({ os: 'linux', architecture: 'arm64' });
    expect(platformFromUname('armv7l')).toEqual({ os: 'linux', architecture: 'arm', variant: 'v7' });
  });
  it('matches index entries like containerd does for arm64 variants', () => {
    const arm64 = { os: 'linux', architecture: 'arm64' };
    expect(platformMatches({ os: 'linux', architecture: 'arm64', variant: 'v8' }, arm64)).toBe(true);
    expect(platformMatches({ os: 'linux', architecture: 'arm64' }, arm64)).toBe(true);
    expect(platformMatches({ os: 'linux', architecture: 'amd64' }, arm64)).toBe(false);
    expect(platformMatches({ os: 'linux', architecture: 'arm', variant: 'v6' }, { os: 'linux', architecture: 'arm', variant: 'v7' })).toBe(false);
    expect(platformMatches(undefined, arm64)).toBe(false);
  });
});

describe('parseProbe', () => {
  it('reads the machine and the first distro binary that answered', async () => {
    const { parseProbe } = await import('../../../../src/core/node/detect');
    expect(parseProbe(`x86_64\n@@k3s\n${K3S_OUT}`)).toMatchObject({ machine: 'x86_64', distro: 'k3s', distroVersion: 'v1.31.6+k3s1' });
    expect(parseProbe(`aarch64\n@@rke2\n${RKE2_OUT}`)).toMatchObject({ machine: 'aarch64', distro: 'rke2', distroVersion: 'v1.31.6+rke2r1' });
    expect(parseProbe('x86_64\n')).toMatchObject({ machine: 'x86_64', distro: 'unknown', distroVersion: null });
  });

  it("reads the node's fastest SHA-256 program and whether it can hash a growing file", async () => {
    const { parseProbe } = await import('../../../../src/core/node/detect');
    expect(parseProbe(`x86_64\n@@hash openssl follow\n@@k3s\n${K3S_OUT}`)).toMatchObject({ hashTools: { hasher: 'openssl', follow: true }, distro: 'k3s', distroVersion: 'v1.31.6+k3s1' });
    expect(parseProbe('x86_64\n@@hash sha256sum \n')).toMatchObject({ hashTools: { hasher: 'sha256sum', follow: false } });
    // No hasher: nothing to follow with, whatever else the node has.
    expect(parseProbe('x86_64\n@@hash  follow\n')).toMatchObject({ hashTools: { hasher: null, follow: false } });
    // An older probe's output (no @@hash line): nothing assumed.
    expect(parseProbe('x86_64\n')).toMatchObject({ hashTools: { hasher: null, follow: false } });
  });

  it('reads the digest of the hash-while-sending script only when it hashed exactly the file', async () => {
    const { parseFollowHash } = await import('../../../../src/core/usecases/upload/followHash');
    const hex = 'a'.repeat(64);
    expect(parseFollowHash(`SHA2-256(stdin)= ${hex}\n@@size 42\n`, 42)).toBe(hex); // openssl 3
    expect(parseFollowHash(`(stdin)= ${hex}\n@@size 42\n`, 42)).toBe(hex); // openssl 1.1
    expect(parseFollowHash(`${hex}  -\n@@size 42\n`, 42)).toBe(hex); // sha256sum
    expect(parseFollowHash(`${hex}  -\n@@size 43\n`, 42)).toBeNull(); // the file grew past the hashed bytes
    expect(parseFollowHash(`${hex}  -\n`, 42)).toBeNull();
  });

  it("reads the images dir from the config sections that follow, in the distro's merge order", async () => {
    const { parseProbe } = await import('../../../../src/core/node/detect');
    // As the probe prints it on an RKE2 node with a drop-in moving data-dir and one it cannot read.
    const out = [
      'x86_64',
      '@@rke2',
      RKE2_OUT.trimEnd(),
      '@@cfg /etc/rancher/rke2/config.yaml',
      '@@cfg /etc/rancher/rke2/config.yaml.d/10-data.yaml',
      '|data-dir: /data/rke2 # bigger disk',
      '@@unreadable /etc/rancher/rke2/config.yaml.d/90-rancher.yaml',
      '',
    ].join('\n');
    const p = parseProbe(out);
    expect(p.distroVersion).toBe('v1.31.6+rke2r1');
    expect(p.imagesDir).toEqual({
      imagesDir: '/data/rke2/agent/images',
      dataDir: '/data/rke2',
      from: 'config',
      file: '/etc/rancher/rke2/config.yaml.d/10-data.yaml',
      notes: ['/etc/rancher/rke2/config.yaml.d/90-rancher.yaml could not be read by the SSH user, so a data-dir it may set is not known.'],
    });
    // No config section at all: the distro's default.
    expect(parseProbe(`x86_64\n@@rke2\n${RKE2_OUT}`).imagesDir).toMatchObject({ imagesDir: '/var/lib/rancher/rke2/agent/images', from: 'default' });
    expect(parseProbe(`x86_64\n@@k3s\n${K3S_OUT}`).imagesDir).toMatchObject({ imagesDir: '/var/lib/rancher/k3s/agent/images', from: 'default' });
  });

  it('passes nothing but a fixed flag word to the fixed script', async () => {
    const { probeArgv, PROBE_SCRIPT } = await import('../../../../src/core/node/detect');
    expect(probeArgv(false)).toEqual(['sh', '-c', PROBE_SCRIPT, 'holdfast-probe', '']);
    expect(probeArgv(true)).toEqual(['sh', '-c', PROBE_SCRIPT, 'holdfast-probe', 'sudo']);
  });

  it('runs as a real shell script and finds a k3s binary on PATH', async () => {
    const { PROBE_SCRIPT, parseProbe } = await import('../../../../src/core/node/detect');
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { execFileSync } = await import('node:child_process');
    const dir = mkdtempSync('/tmp/hf-probe-');
    writeFileSync(`${dir}/k3s`, `#!/bin/sh\nprintf '${K3S_OUT.replace(/\n/g, '\\n')}'\n`, { mode: 0o755 });
    const out = execFileSync('sh', ['-c', PROBE_SCRIPT], { env: { PATH: `${dir}:/usr/bin:/bin` } }).toString();
    expect(parseProbe(out).distroVersion).toBe('v1.31.6+k3s1');
  });

  it('goes on to RKE2 when there is no k3s, and says unknown when there is neither', async () => {
    const { PROBE_SCRIPT, parseProbe } = await import('../../../../src/core/node/detect');
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { execFileSync } = await import('node:child_process');
    const dir = mkdtempSync('/tmp/hf-probe-');
    const probe = () => parseProbe(execFileSync('sh', ['-c', PROBE_SCRIPT], { env: { PATH: `${dir}:/usr/bin:/bin` } }).toString());
    // A k3s that is not executable is no k3s.
    writeFileSync(`${dir}/k3s`, 'not a program', { mode: 0o644 });
    expect(probe()).toMatchObject({ distro: 'unknown', distroVersion: null });
    writeFileSync(`${dir}/rke2`, `#!/bin/sh\nprintf 'rke2 version v1.31.6+rke2r1 (0b3cf7a9)\\ngo version go1.22.12\\n'\n`, { mode: 0o755 });
    expect(probe()).toMatchObject({ distro: 'rke2', distroVersion: 'v1.31.6+rke2r1' });
  });
});

// Issue #49 item 18: config files hold join tokens. The probe once sent every line holding
// "data-dir" and a JSON object's first line, so a one-line JSON config.yaml left the node whole.
describe('the probe sends only what can set data-dir', () => {
  const TOKEN = 'K10join-token-SECRET::server:c0ffee';
  async function sent(text: string): Promise<string> {
    const { DATA_DIR_FILTER } = await import('../../../../src/core/node/detect');
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { execFileSync } = await import('node:child_process');
    const file = `${mkdtempSync('/tmp/hf-probe-cfg-')}/config.yaml`;
    writeFileSync(file, text);
    return execFileSync('sh', ['-c', `{ ${DATA_DIR_FILTER}; } < "$1"`, 'probe', file], { encoding: 'utf8' });
  }
  async function dataDirOf(text: string) {
    const { parseProbe } = await import('../../../../src/core/node/detect');
    return parseProbe(`x86_64\n@@k3s\n${K3S_OUT}@@cfg /etc/rancher/k3s/config.yaml\n${await sent(text)}`).imagesDir;
  }

  it.each([
    ['one-line JSON', `{"token":"${TOKEN}","data-dir":"/data/k3s","node-label":["data-dir=x"]}\n`],
    ['JSON, a member a line', `{\n  "token": "${TOKEN}",\n  "data-dir": "/data/k3s"\n}\n`],
    ['JSON, escaped quotes in the token', `{"token": "a\\"d\\": \\"${TOKEN}", "d": "/data/k3s"}`],
    ['YAML', `token: ${TOKEN}\nagent-token: data-dir-${TOKEN}\ndata-dir: /data/k3s # bigger disk\n`],
    ['YAML, CRLF', `token: "${TOKEN}"\r\n"data-dir": '/data/k3s'\r\n`],
  ])('%s: no token sent, data-dir still read', async (_, text) => {
    const out = await sent(text);
    expect(out).not.toContain('SECRET');
    expect(out).not.toContain('token');
    expect(await dataDirOf(text)).toMatchObject({ dataDir: '/data/k3s', from: 'config' });
  });

  it('a data-dir that is no plain value is unreadable, and what it holds stays on the node', async () => {
    const text = `{"data-dir": {"token": "${TOKEN}"}}`;
    expect(await sent(text)).not.toContain('SECRET');
    expect(await dataDirOf(text)).toMatchObject({ from: 'default', notes: [expect.stringContaining('not a plain value')] });
    expect(await dataDirOf('{"d": null, "token": "x"}')).toMatchObject({ dataDir: '/var/lib/rancher/k3s', from: 'default', notes: [] });
  });
});
