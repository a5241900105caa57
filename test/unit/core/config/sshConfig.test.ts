import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hostMatches, parseJumpHop, parseSshConfig, planSshImport, resolveSshHost, splitArgs, type SshConfigEnv } from '../../../../src/core/config/sshConfig';
import { hostPatternMatches } from '../../../../src/shared/hostPatterns';

function setup() {
  const home = mkdtempSync(path.join(os.tmpdir(), 'hf-sshcfg-'));
  mkdirSync(path.join(home, '.ssh', 'config.d'), { recursive: true });
  const env: SshConfigEnv = { home, localUser: 'tech', localHost: 'laptop.example' };
  return { home, env };
}

// A technician's config: globals, a bastion, sites with wildcards, includes, Match, quirks.
const CONFIG = `# ~/.ssh/config
Include config.d/*.conf

Host bastion-north
    HostName 203.0.113.10
    User jump
    Port 2222
    IdentityFile ~/.ssh/id_bastion

Host edge-n1 edge-n2
    ProxyJump bastion-north
    User root

Host edge-n1
    HostName 10.1.0.11
Host edge-n2
    HostName=10.1.0.12
    Port=22022

Host edge-s1
    HostName %h.south.example
    IdentityFile "~/.ssh/keys/site %n"
    IdentityFile ~/.ssh/second
    UserKnownHostsFile ~/.ssh/known_hosts.%h

Host lab-*.example *.internal !nope.internal
    User ops
    IdentityFile ~/.ssh/id_%r_%p

Host lab-1.example
    Port 2200

Host behind-unknown
    ProxyJump somewhere-else
Host multi-hop
    ProxyJump bastion-north,other
Host cmd
    ProxyCommand ssh -W %h:%p gate
Host bad_name!
    HostName 1.2.3.4

Match host edge-n1 exec "true"
    User nobody

Host *
    User fallback   # trailing comment
    IdentityFile ~/.ssh/id_default
`;

describe('ssh_config lexing and patterns', () => {
  it('splits quoted arguments and stops at a comment word', () => {
    expect(splitArgs('a "b c" d#e # f')).toEqual(['a', 'b c', 'd#e']);
    expect(splitArgs('"unterminated')).toEqual({ error: 'unterminated quote' });
  });
  it('matches ssh patterns with negation', () => {
    expect(hostPatternMatches('edge-*', 'EDGE-1')).toBe(true);
    expect(hostPatternMatches('e?ge', 'edge')).toBe(true);
    expect(hostPatternMatches('a.b', 'axb')).toBe(false);
    expect(hostMatches(['*.internal', '!nope.internal'], 'x.internal')).toBe(true);
    expect(hostMatches(['*.internal', '!nope.internal'], 'nope.internal')).toBe(false);
    expect(hostMatches(['!nope'], 'other')).toBe(false);
  });
  it('reads ProxyJump hops', () => {
    expect(parseJumpHop('jump@bastion:2222')).toEqual({ user: 'jump', host: 'bastion', port: 2222 });
    expect(parseJumpHop('ssh://[fe80::1]:22')).toEqual({ user: null, host: 'fe80::1', port: 22 });
    expect(parseJumpHop('bastion')).toEqual({ user: null, host: 'bastion', port: null });
  });
});

describe('a realistic ~/.ssh/config', () => {
  it('lists concrete aliases only, including those from Include files, and notes Match', () => {
    const { home, env } = setup();
    writeFileSync(path.join(home, '.ssh', 'config.d', '10-west.conf'), 'Host edge-w1\n  HostName 10.3.0.1\n  User admin\n');
    writeFileSync(path.join(home, '.ssh', 'config.d', 'ignored.txt'), 'Host not-included\n');
    const parsed = parseSshConfig(CONFIG, path.join(home, '.ssh', 'config'), env);
    expect(parsed.aliases.map((a) => a.alias)).toEqual([
      'edge-w1', 'bastion-north', 'edge-n1', 'edge-n2', 'edge-s1', 'lab-1.example', 'behind-unknown', 'multi-hop', 'cmd', 'bad_name!',
    ]);
    expect(parsed.notes.some((n) => /Match blocks are not evaluated/.test(n.message))).toBe(true);
  });

  it('resolves like ssh: first value wins, IdentityFile accumulates, tokens and ~ expand', () => {
    const { home, env } = setup();
    const parsed = parseSshConfig(CONFIG, path.join(home, '.ssh', 'config'), env);
    const b = resolveSshHost(parsed, 'bastion-north', env);
    expect(b).toMatchObject({ hostName: '203.0.113.10', user: 'jump', port: 2222, proxyJump: null });
    expect(b.identityFiles).toEqual([path.join(home, '.ssh/id_bastion'), path.join(home, '.ssh/id_default')]);

    const n2 = resolveSshHost(parsed, 'edge-n2', env);
    expect(n2).toMatchObject({ hostName: '10.1.0.12', user: 'root', port: 22022, proxyJump: 'bastion-north' });

    const s1 = resolveSshHost(parsed, 'edge-s1', env);
    expect(s1.hostName).toBe('edge-s1.south.example');
    expect(s1.user).toBe('fallback'); // from Host *, the trailing comment dropped
    expect(s1.identityFiles[0]).toBe(path.join(home, '.ssh/keys/site edge-s1'));
    expect(s1.userKnownHostsFiles).toEqual([path.join(home, '.ssh/known_hosts.edge-s1.south.example')]);

    const lab = resolveSshHost(parsed, 'lab-1.example', env);
    expect(lab).toMatchObject({ user: 'ops', port: 2200 });
    expect(lab.identityFiles[0]).toBe(path.join(home, '.ssh/id_ops_2200'));

    // Match is skipped: its User never applies.
    expect(resolveSshHost(parsed, 'edge-n1', env).user).toBe('root');
  });

  it('plans the import: jumps mapped to imported nodes, unsupported routes and bad names skipped with reasons', () => {
    const { home, env } = setup();
    const parsed = parseSshConfig(CONFIG, path.join(home, '.ssh', 'config'), env);
    const plan = planSshImport(parsed, env, { existing: [{ name: 'edge-s1' }], group: 'north' });
    const byName = new Map(plan.nodes.map((n) => [n.name, n]));
    expect([...byName.keys()]).toEqual(['bastion-north', 'edge-n1', 'edge-n2', 'lab-1.example']);
    expect(byName.get('edge-n1')).toEqual({ name: 'edge-n1', host: '10.1.0.11', port: 22, user: 'root', identity: path.join(home, '.ssh/id_default'), group: 'north', jump: 'bastion-north' });
    expect(byName.get('bastion-north')).toMatchObject({ host: '203.0.113.10', port: 2222, user: 'jump', identity: path.join(home, '.ssh/id_bastion') });
    const skipped = Object.fromEntries(plan.skipped.map((s) => [s.alias, s.reason]));
    expect(skipped['edge-s1']).toMatch(/already configured/);
    // The way to change it is data: the CLI words it (cli/commands/node/bulk), core names no command.
    expect(plan.skipped.find((s) => s.alias === 'edge-s1')).toEqual({ alias: 'edge-s1', reason: 'a node named "edge-s1" is already configured', remedy: { action: 'node-edit', node: 'edge-s1' } });
    expect(skipped['behind-unknown']).toMatch(/ProxyJump somewhere-else.*unsupported for now/);
    expect(skipped['multi-hop']).toMatch(/several hops/);
    expect(skipped['cmd']).toMatch(/ProxyCommand is not supported/);
    expect(skipped['bad_name!']).toMatch(/cannot be a Holdfast node/);
    expect(plan.notes.some((n) => /IdentityFile lines/.test(n))).toBe(true);
  });

  it('filters by host patterns; a jump host left out is unsupported unless already configured', () => {
    const { home, env } = setup();
    const parsed = parseSshConfig(CONFIG, path.join(home, '.ssh', 'config'), env);
    let plan = planSshImport(parsed, env, { existing: [], patterns: ['edge-n*'] });
    expect(plan.nodes).toEqual([]);
    expect(plan.skipped.map((s) => s.alias).sort()).toEqual(['edge-n1', 'edge-n2']);
    plan = planSshImport(parsed, env, { existing: [{ name: 'bastion-north' }], patterns: ['edge-n*'], knownHosts: '/kh' });
    expect(plan.nodes.map((n) => [n.name, n.jump, n.knownHosts])).toEqual([
      ['edge-n1', 'bastion-north', '/kh'],
      ['edge-n2', 'bastion-north', '/kh'],
    ]);
  });

  it('applies an Include inside a Host block to that block only, and survives include loops', () => {
    const { home, env } = setup();
    writeFileSync(path.join(home, '.ssh', 'site.conf'), 'Port 4444\n');
    writeFileSync(path.join(home, '.ssh', 'loop.conf'), 'Include loop.conf\n');
    const parsed = parseSshConfig('Include loop.conf\nHost a\n  Include site.conf\nHost b\n  HostName b.example\n', path.join(home, '.ssh', 'config'), env);
    expect(resolveSshHost(parsed, 'a', env).port).toBe(4444);
    expect(resolveSshHost(parsed, 'b', env).port).toBeNull();
    expect(parsed.notes.some((n) => /nested more than 16/.test(n.message))).toBe(true);
  });

  it('uses the local user when the config names none, as ssh does', () => {
    const { home, env } = setup();
    const parsed = parseSshConfig('Host plain\n  HostName 192.0.2.7\n', path.join(home, '.ssh', 'config'), env);
    expect(planSshImport(parsed, env, { existing: [] }).nodes).toEqual([{ name: 'plain', host: '192.0.2.7', port: 22, user: 'tech' }]);
  });
});
