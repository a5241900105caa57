// `holdfast policy show` (#48 item 8) in process, with nodes saved without connecting: the rules
// that apply to a node by its group, the table fitting 80 columns, -o json, no policy at all, and
// a bad policy file named with its line and the fix (exit 2).
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PolicyShowJson } from '../../../../src/cli/commands/policy';
import { textWidth } from '../../../../src/cli/fit';
import { runCli, useTempHome } from '../../../support/cliInProcess';

const home = useTempHome('hf-policy-');

const POLICY = `apiVersion: holdfast/v1
kind: SignaturePolicy
metadata: {name: site}
spec:
  rules:
    - name: apps
      groups: [plant-a]
      images: ["registry.site.example/applications/**", "registry.site.example/base/*"]
      keys: [keys/site.pub, keys/missing.pub]
    - name: everywhere
      images: ["docker.io/library/*:*"]
      keys: [keys/site.pub]
      allowUnsigned: true
    - name: vendor
      groups: [plant-b]
      images: ["vendor.example/**"]
      identities: [{identity: ci@vendor.example, issuer: "https://accounts.google.com"}]
      trustedRoot: trusted_root.json
`;

async function site(policy = POLICY): Promise<void> {
  mkdirSync(path.join(home(), 'keys'));
  writeFileSync(path.join(home(), 'keys', 'site.pub'), generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }));
  writeFileSync(path.join(home(), 'policy.yaml'), policy);
  for (const [name, group] of [['a1', 'plant-a'], ['b1', 'plant-b'], ['free', null]] as const) {
    const r = await runCli(['node', 'add', name, '--host', '127.0.0.1', '--no-check', ...(group ? ['--group', group] : [])]);
    expect(r.code, r.stderr).toBe(0);
  }
}

describe('holdfast policy show', () => {
  it('a node of plant-a: its group rule and the rule for every node, fitting 80 columns', async () => {
    await site();
    const r = await runCli(['policy', 'show', 'a1'], { columns: () => 80 });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^signature policy site \(\S*policy\.yaml\) for a1/);
    expect(lines).toContainEqual(expect.stringMatching(/^RULE +IMAGES +SIGNED BY \(ANY ONE\) +UNSIGNED$/));
    expect(r.stdout).toMatch(/^apps +registry\.site\.example\/\S* +key keys\/site\.pub [0-9a-f]{8} +refused$/m);
    expect(r.stdout).toMatch(/^everywhere +docker\.io\/library\/\*:\* +key keys\/site\.pub [0-9a-f]{8} +allowed$/m);
    expect(r.stdout).toMatch(/key keys\/missing\.pub\s+\(cannot read\)/);
    expect(r.stdout).not.toContain('vendor');
    for (const l of lines) expect(textWidth(l), l).toBeLessThanOrEqual(80);
  });

  it('-o json: the rules with keys resolved against the policy file', async () => {
    await site();
    const r = await runCli(['policy', 'show', 'b1', '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as PolicyShowJson;
    expect(j.group).toBe('plant-b');
    expect(j.policy).toEqual({ file: path.join(home(), 'policy.yaml'), name: 'site' });
    expect(j.rules.map((x) => x.name)).toEqual(['everywhere', 'vendor']);
    expect(j.rules[0]!.keys).toEqual([{ path: 'keys/site.pub', file: path.join(home(), 'keys', 'site.pub'), fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
    expect(j.rules[1]).toMatchObject({ identities: [{ identity: 'ci@vendor.example', issuer: 'https://accounts.google.com' }], trustedRoot: path.join(home(), 'trusted_root.json'), allowUnsigned: false });
  });

  it('a keyless rule is shown as any other: no note that it cannot be met', async () => {
    await site();
    const r = await runCli(['policy', 'show', 'b1']);
    expect(r.stdout).not.toContain('keyless verification is not available');
    expect(r.stdout).toContain('vendor');
  });

  it('a node with no group gets only the rules naming no group', async () => {
    await site();
    const j = JSON.parse((await runCli(['policy', 'show', 'free', '--json'])).stdout) as PolicyShowJson;
    expect([j.group, j.rules.map((x) => x.name)]).toEqual([null, ['everywhere']]);
  });

  it('no policy in the home: says so', async () => {
    const r = await runCli(['node', 'add', 'a1', '--host', '127.0.0.1', '--no-check']);
    expect(r.code).toBe(0);
    const s = await runCli(['policy', 'show', 'a1']);
    expect([s.code, s.stdout]).toEqual([0, 'no signature policy: imports to a1 (no group) verify only what --key asks.']);
  });

  it('a bad policy: the file, the line and the fix, exit 2', async () => {
    await site(POLICY.replace('allowUnsigned: true', 'allowUnsigned: yes'));
    const r = await runCli(['policy', 'show', 'a1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`signature policy ${path.join(home(), 'policy.yaml')}:13:22: spec.rules[1].allowUnsigned is "yes", not a boolean`);
    expect(r.stderr).toContain('Fix: write allowUnsigned: true or allowUnsigned: false.');
  });

  it('--policy names another file; one that is not there is an error', async () => {
    await site();
    const r = await runCli(['policy', 'show', 'a1', '--policy', path.join(home(), 'nope.yaml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`signature policy ${path.join(home(), 'nope.yaml')} cannot be read (ENOENT)`);
  });
});
