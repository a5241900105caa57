// Connecting to a node: host key policy, tunnel to containerd, detection, and the failures a
// technician meets in the field (unknown/changed host key, unreachable node, containerd down).
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLab, type Lab } from '../../lab/lab';
import { HoldfastError } from '../../src/core/errors';
import { NodeSession } from '../../src/core/node/session';
import { labNodeDef, runCli, tempHome } from './support';

let lab: Lab;

beforeAll(async () => {
  lab = await startLab({ nodes: ['c1', 'c2'] });
});

afterAll(async () => {
  await lab?.stop();
});

async function openError(p: Promise<NodeSession>): Promise<HoldfastError> {
  try {
    const s = await p;
    await s.close();
  } catch (e) {
    expect(e).toBeInstanceOf(HoldfastError);
    return e as HoldfastError;
  }
  throw new Error('expected the connection to fail');
}

describe('connect', () => {
  it('verifies the host key, tunnels to containerd and detects versions', async () => {
    const s = await NodeSession.open(labNodeDef(lab, lab.node('c1')));
    try {
      const info = await s.detect();
      expect(info.containerdVersion).toMatch(/^v?\d+\.\d+\.\d+/);
      expect(info.distro).toBe('unknown');
      expect(await s.containerd.listNamespaces()).toEqual(expect.any(Array));
      expect(s.ssh.hostKeyFingerprint).toBe(lab.node('c1').hostKeyFingerprint);
    } finally {
      await s.close();
    }
  });

  it('refuses an unknown host, showing its fingerprint; records it only when accepted', async () => {
    const kh = path.join(tempHome(), 'known_hosts');
    writeFileSync(kh, '');
    const def = labNodeDef(lab, lab.node('c2'), { knownHosts: kh });
    const err = await openError(NodeSession.open(def));
    expect(err.code).toBe('HOST_KEY_UNKNOWN');
    expect(err.fingerprint).toBe(lab.node('c2').hostKeyFingerprint);
    expect(readFileSync(kh, 'utf8')).toBe('');

    // A fingerprint that is not the presented one records nothing.
    const wrong = await openError(NodeSession.open(def, { acceptNewHostKey: lab.node('c1').hostKeyFingerprint }));
    expect(wrong.code).toBe('HOST_KEY_UNKNOWN');
    expect(readFileSync(kh, 'utf8')).toBe('');

    const s = await NodeSession.open(def, { acceptNewHostKey: lab.node('c2').hostKeyFingerprint });
    await s.close();
    expect(readFileSync(kh, 'utf8')).toContain(`[127.0.0.1]:${lab.node('c2').port} ssh-ed25519 `);
    // Now known: no acceptance needed.
    const again = await NodeSession.open(def);
    await again.close();
  });

  it('always refuses a changed host key, naming both fingerprints', async () => {
    const kh = path.join(tempHome(), 'known_hosts');
    copyFileSync(lab.knownHosts, kh);
    const node = lab.node('c2');
    const old = node.hostKeyFingerprint;
    await node.rotateHostKey();
    const def = labNodeDef(lab, node, { knownHosts: kh });
    const err = await openError(NodeSession.open(def, { acceptNewHostKey: true }));
    expect(err.code).toBe('HOST_KEY_CHANGED');
    expect(err.fingerprint).toBe(node.hostKeyFingerprint);
    expect(err.expectedFingerprint).toBe(old);
    expect(err.message).toContain(node.hostKeyFingerprint);

    // The CLI refuses it as a safety check (exit 3) with one line on stderr.
    const home = tempHome();
    const r = await runCli(
      ['node', 'add', 'c2', '--host', node.host, '--port', String(node.port), '--identity', lab.clientKey, '--known-hosts', kh, `--accept-new-host-key=${node.hostKeyFingerprint}`],
      { HOLDFAST_HOME: home },
    );
    expect(r.code).toBe(3);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(node.hostKeyFingerprint);
    await lab.refreshKnownHosts();
  });

  it('fails fast and clearly when nothing listens at the address', async () => {
    const srv = net.createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as net.AddressInfo).port;
    await new Promise<void>((r) => srv.close(() => r()));
    const err = await openError(NodeSession.open(labNodeDef(lab, lab.node('c1'), { port })));
    expect(err.code).toBe('UNREACHABLE');
    expect(err.message).toContain(`127.0.0.1:${port}`);
  });

  it('times out within the bound when the peer never speaks SSH', async () => {
    const held: net.Socket[] = [];
    const srv = net.createServer((sock) => held.push(sock));
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as net.AddressInfo).port;
    try {
      // The bound is the session's own deadline (a TIMEOUT, not the test's timeout, ends it).
      const err = await openError(NodeSession.open(labNodeDef(lab, lab.node('c1'), { port }), { timeoutMs: 3_000 }));
      expect(err.code).toBe('TIMEOUT');
      expect(err.message).toContain('3 s');
    } finally {
      for (const s of held) s.destroy();
      srv.close();
    }
  });

  it('says containerd is not answering when it is stopped, and recovers when it is back', async () => {
    const node = lab.node('c1');
    await node.stopContainerd();
    try {
      // The socket goes away with containerd: the tunnel or the first call says so.
      const err = await NodeSession.open(labNodeDef(lab, node))
        .then((s) => s.listBaseImages().finally(() => s.close()))
        .then(
          () => null,
          (e: unknown) => e as HoldfastError,
        );
      expect(err?.code).toBe('CONTAINERD_UNAVAILABLE');
      expect(err?.message).toContain('/run/k3s/containerd/containerd.sock');
      expect(err?.hint).toMatch(/k3s/);
      // grpc-js's own words stay out of what a person reads (issue #49)
      expect(`${err?.message} ${err?.hint}`).not.toMatch(/Resolution note|No connection established|Last error/);
      const home = tempHome();
      const r = await runCli(
        ['node', 'add', 'c1', '--host', node.host, '--port', String(node.port), '--identity', lab.clientKey, '--known-hosts', lab.knownHosts],
        { HOLDFAST_HOME: home },
      );
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('/run/k3s/containerd/containerd.sock');
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).not.toMatch(/Resolution note|No connection established|Last error/);
    } finally {
      await node.startContainerd();
    }
    const s = await NodeSession.open(labNodeDef(lab, node));
    await s.listBaseImages();
    await s.close();
  });

  it("says so in plain words when containerd stops during a session, never grpc-js's text (#49)", async () => {
    const node = lab.node('c1');
    const s = await NodeSession.open(labNodeDef(lab, node));
    try {
      await s.listBaseImages();
      await node.stopContainerd();
      const err = await s.listBaseImages().then(
        () => null,
        (e: unknown) => e as HoldfastError,
      );
      expect(err?.code).toBe('CONTAINERD_UNAVAILABLE');
      expect(err?.message).toMatch(/^containerd on c1 \(\/run\/k3s\/containerd\/containerd\.sock\) stopped answering through the SSH tunnel: /);
      expect(`${err?.message} ${err?.hint}`).not.toMatch(/Resolution note|No connection established|Last error/);
    } finally {
      await s.close();
      await node.startContainerd();
    }
  });
});
