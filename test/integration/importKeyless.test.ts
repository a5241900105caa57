// `holdfast import` with keyless flags (#48) on a real lab node: an OCI archive's image signed
// by @sigstore/mock's CA (with a log entry and a timestamp), its detached bundle and the trusted
// root carried beside it. The identity and issuer are recorded on the image; another identity
// refuses the archive and leaves the node as it was; no trusted root is a clear error.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startK3sWatcher, startLab, type K3sWatcher, type Lab, type LabNodeHandle } from '../../lab';
import { writeLayeredArchive } from '../../lab/layered';
import { SIGNATURE_LABELS } from '../../src/shared/domain/labels';
import { mockSigstore, signKeyless, trustedRoot } from '../support/keyless';
import { nodeState as nodeStateOf } from './signedSite';
import { addLabNode, runCli, tempHome } from './support';

const ID = 'https://ci.example.org/release.yml@refs/heads/main';
const ISSUER = 'https://issuer.example';
const SIGNED = 'lab.local/keyless:1';
const STRANGER = 'lab.local/stranger:1';
const dir = mkdtempSync(path.join(os.tmpdir(), 'hf-import-keyless-'));
const file = (name: string) => path.join(dir, name);
let lab: Lab;
let home: string;
let n: LabNodeHandle;
let watcher: K3sWatcher;
const cli = (args: string[]) => runCli(args, { HOLDFAST_HOME: home }, 300_000);
const keyless = ['--certificate-identity', ID, '--certificate-oidc-issuer', ISSUER, '--trusted-root', file('trusted_root.json')];

beforeAll(async () => {
  const m = await mockSigstore();
  writeFileSync(file('trusted_root.json'), JSON.stringify(trustedRoot(m)));
  const [signed] = await writeLayeredArchive(file('signed.tar'), [{ name: SIGNED, layers: [{ seed: 'keyless-signed', bytes: 4096 }] }]);
  const [stranger] = await writeLayeredArchive(file('stranger.tar'), [{ name: STRANGER, layers: [{ seed: 'keyless-stranger', bytes: 4096 }] }]);
  writeFileSync(file('signed.sigstore.json'), await signKeyless(m, signed!.manifest.digest, { identity: ID, issuer: ISSUER }));
  writeFileSync(file('stranger.sigstore.json'), await signKeyless(m, stranger!.manifest.digest, { identity: 'https://ci.example.org/evil.yml@refs/heads/main', issuer: ISSUER }));
  lab = await startLab({ nodes: ['k1'] });
  home = tempHome();
  n = lab.node('k1');
  await addLabNode(lab, n, home);
  watcher = startK3sWatcher(n);
}, 400_000);

afterAll(async () => {
  await watcher?.stop();
  await lab?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * The image's raw `ctr images ls` line: a keyless `by` has spaces, which the lab's table parser
 * (labelsOf) splits on, so the labels are read as ctr prints them.
 */
async function ctrLine(ref: string): Promise<string> {
  const line = (await n.ctr(['images', 'ls', `name==${JSON.stringify(ref)}`])).split('\n').find((l) => l.startsWith(`${ref} `));
  if (!line) throw new Error(`no image ${ref} on the node`);
  return line;
}

const nodeState = () => nodeStateOf(n);

describe('holdfast import with a keyless identity', () => {
  it('no trusted root: a clear error naming the flag, nothing sent', async () => {
    const before = await nodeState();
    const r = await cli(['import', 'k1', file('signed.tar'), '--bundle', file('signed.sigstore.json'), '--certificate-identity', ID, '--certificate-oidc-issuer', ISSUER]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('--certificate-identity needs the Sigstore trusted root to verify against (--trusted-root FILE)');
    expect(await nodeState()).toEqual(before);
  });

  it('another identity refuses the archive and leaves the node untouched', async () => {
    const before = await nodeState();
    const r = await cli(['import', 'k1', file('stranger.tar'), '--bundle', file('stranger.sigstore.json'), ...keyless]);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr.split('\n')).toContain(`  ${STRANGER}: signed, but not by a given identity`);
    expect(await nodeState()).toEqual(before);
  });

  it('the right identity and issuer import, recorded on the image and in images --json', async () => {
    const r = await cli(['import', 'k1', file('signed.tar'), '--pin', '--bundle', file('signed.sigstore.json'), ...keyless]);
    expect(r.code, r.stderr).toBe(0);
    const by = `${ID} (${ISSUER})`;
    const line = await ctrLine(SIGNED);
    for (const label of [`${SIGNATURE_LABELS.verified}=true`, `${SIGNATURE_LABELS.by}=${by}`, `${SIGNATURE_LABELS.format}=bundle`]) expect(line).toContain(label);
    const refs = JSON.parse((await cli(['images', 'k1', '--json'])).stdout) as { name: string; signature: unknown }[];
    expect(refs.find((x) => x.name === SIGNED)!.signature).toEqual({ verified: true, by, format: 'bundle', at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
  });

  it('--direct with a pattern for the identity verifies the same way', async () => {
    const r = await cli(['import', 'k1', file('stranger.tar'), '--direct', '--bundle', file('stranger.sigstore.json'), '--certificate-identity-regexp', '^https://ci\\.example\\.org/', '--certificate-oidc-issuer', ISSUER, '--trusted-root', file('trusted_root.json')]);
    expect(r.code, r.stderr).toBe(0);
    const line = await ctrLine(STRANGER);
    expect(line).toContain(`${SIGNATURE_LABELS.verified}=true`);
    expect(line).toContain(`${SIGNATURE_LABELS.by}=https://ci.example.org/evil.yml@refs/heads/main (${ISSUER})`);
    const refs = JSON.parse((await cli(['images', 'k1', '--json'])).stdout) as { name: string; signature: { by?: string } | null }[];
    expect(refs.find((x) => x.name === STRANGER)!.signature?.by).toBe(`https://ci.example.org/evil.yml@refs/heads/main (${ISSUER})`);
  });
});
