// ~/.ssh/config reading is bounded (issue #11): an Include loop that fans out, a glob walking the
// file system or a huge file is an INVALID_INPUT naming its limit, not minutes of work or memory.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseSshConfig, readSshConfigFile, resolveSshHost, type SshConfigEnv } from '../../../../src/core/config/sshConfig';
import { HoldfastError } from '../../../../src/core/errors';

const homes: string[] = [];
function setup(): { home: string; env: SshConfigEnv } {
  const home = mkdtempSync(path.join(os.tmpdir(), 'hf-sshlim-'));
  homes.push(home);
  mkdirSync(path.join(home, '.ssh'));
  return { home, env: { home, localUser: 'tech', localHost: 'laptop.local' } };
}
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});

function limitErrorOf(fn: () => unknown): HoldfastError {
  let e: unknown = null;
  try {
    fn();
  } catch (x) {
    e = x;
  }
  expect(e).toBeInstanceOf(HoldfastError);
  expect((e as HoldfastError).code).toBe('INVALID_INPUT');
  return e as HoldfastError;
}

describe('ssh config limits', () => {
  it('an Include loop fanning out (2^16 files) stops at sshConfig.files', () => {
    const { home, env } = setup();
    writeFileSync(path.join(home, '.ssh', 'loop.conf'), 'Include loop.conf loop.conf\n');
    const e = limitErrorOf(() => parseSshConfig('Include loop.conf\n', path.join(home, '.ssh', 'config'), env));
    expect(e.message).toMatch(/and its Includes are more than 256 files \(an Include loop\?\): over the limit sshConfig\.files \(256\)\.$/);
  });

  it('a glob matching more paths than sshConfig.files', () => {
    const { home, env } = setup();
    const d = path.join(home, '.ssh', 'many');
    mkdirSync(d);
    for (let i = 0; i < 300; i++) writeFileSync(path.join(d, `h${i}.conf`), `Host h${i}\n`);
    const e = limitErrorOf(() => parseSshConfig('Include many/*.conf\n', path.join(home, '.ssh', 'config'), env));
    expect(e.message).toContain('Include many/*.conf matches more than 256 paths: over the limit sshConfig.files (256).');
  });

  it('as many includes as allowed still resolve', () => {
    const { home, env } = setup();
    const d = path.join(home, '.ssh', 'some');
    mkdirSync(d);
    for (let i = 0; i < 200; i++) writeFileSync(path.join(d, `h${i}.conf`), `Host h${i}\n  Port ${1000 + i}\n`);
    const parsed = parseSshConfig('Include some/*.conf\n', path.join(home, '.ssh', 'config'), env);
    expect(parsed.aliases).toHaveLength(200);
    expect(resolveSshHost(parsed, 'h199', env).port).toBe(1199);
  });

  it('a file (or an Include) larger than sshConfig.fileBytes is not read', () => {
    const { home, env } = setup();
    const big = path.join(home, '.ssh', 'big.conf');
    writeFileSync(big, '');
    truncateSync(big, 5 * 1024 * 1024); // sparse: costs no disk
    const e = limitErrorOf(() => readSshConfigFile(big, env));
    expect(e.message).toBe(`${big} is 5,242,880 bytes long: over the limit sshConfig.fileBytes (4 MiB).`);
    const viaInclude = limitErrorOf(() => parseSshConfig('Include big.conf\n', path.join(home, '.ssh', 'config'), env));
    expect(viaInclude.message).toContain('over the limit sshConfig.fileBytes (4 MiB)');
  });

  it('holdfast node import-ssh-config: exit 2 with the limit named, nothing imported', { timeout: 60_000 }, () => {
    const { home } = setup();
    const loop = path.join(home, '.ssh', 'loop.conf');
    writeFileSync(loop, `Include ${loop} ${loop}\n`);
    writeFileSync(path.join(home, '.ssh', 'config'), `Include ${loop}\nHost a\n  HostName 192.0.2.1\n`);
    const bin = path.resolve(import.meta.dirname, '../../../../bin/holdfast.mjs');
    const r = spawnSync(process.execPath, [bin, 'node', 'import-ssh-config', '--file', path.join(home, '.ssh', 'config')], {
      env: { ...process.env, HOLDFAST_HOME: path.join(home, 'hf') },
      encoding: 'utf8',
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('and its Includes are more than 256 files (an Include loop?): over the limit sshConfig.files (256).');
    expect(r.stdout).toBe('');
  });
});
