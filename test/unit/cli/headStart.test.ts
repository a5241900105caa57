// The CLI's head start (src/cli/headStart.ts): the session a command's node gets before the
// service loads is handed to the operation once, only for the same node and definition and
// never when a host key is to be accepted; one nobody took is closed; its failure is the
// operation's to report, never an unhandled rejection; and the service waits for the handshake
// to be under way, not for the session.
import { describe, expect, it } from 'vitest';
import { HeadStart, type StartSession } from '../../../src/cli/headStart';
import { completeNode } from '../../../src/core/config/nodes';
import type { NodeSession } from '../../../src/core/node/session';
import { FakeNode, FakeSession } from '../../doubles/node';

const def = completeNode({ name: 'edge', host: '10.0.0.7', identity: '/k/id_ed25519', knownHosts: '/k/known_hosts' });

/** A session of the UI tests' fake node (test/doubles), counting its closes. */
function fakeSession() {
  const node = new FakeNode({ def, info: { containerdVersion: 'v2.1.4', containerdRevision: '', distro: 'k3s', distroVersion: 'v1.33.7+k3s1' }, images: [], files: [], disk: { totalBytes: 2 ** 30, freeBytes: 2 ** 29 } });
  const session = new FakeSession(node, def);
  const close = session.close.bind(session);
  let closes = 0;
  session.close = () => (closes++, close());
  return { session, closes: () => closes };
}

/** A StartSession whose handshake and session the test settles by hand. */
function controlled() {
  const calls: string[] = [];
  let handshaking!: () => void;
  let settle!: { resolve: (s: NodeSession) => void; reject: (e: unknown) => void };
  const start: StartSession = async (node, whileHandshaking) => {
    calls.push(node);
    handshaking = whileHandshaking;
    const session = new Promise<NodeSession>((resolve, reject) => (settle = { resolve, reject }));
    return { def, session };
  };
  return { start, calls, handshake: () => handshaking(), settle: () => settle };
}

const settled = async (p: Promise<unknown>) => {
  let done = false;
  void p.then(() => (done = true));
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return done;
};

describe('HeadStart', () => {
  it('hands the session to the operation once, for the node and definition it was opened for', async () => {
    const c = controlled();
    const head = new HeadStart(c.start);
    head.start('edge');
    head.start('other'); // only the first node a command names
    const s = fakeSession();
    await settled(head.connecting());
    c.settle().resolve(s.session);
    expect(await head.adopt(def, {})).toBe(s.session);
    expect(await head.adopt(def, {})).toBeUndefined();
    expect(c.calls).toEqual(['edge']);
    await head.close();
    expect(s.closes()).toBe(0); // the service closes what it adopted
  });

  it('lets the service load once the handshake is under way, before the session is ready', async () => {
    const c = controlled();
    const head = new HeadStart(c.start);
    head.start('edge');
    expect(await settled(head.connecting())).toBe(false);
    c.handshake();
    expect(await settled(head.connecting())).toBe(true);
    c.settle().resolve(fakeSession().session);
  });

  it('is not adopted for another definition, nor where a host key is to be accepted, and is closed with the command', async () => {
    const c = controlled();
    const head = new HeadStart(c.start);
    head.start('edge');
    const s = fakeSession();
    c.handshake();
    await settled(head.connecting());
    c.settle().resolve(s.session);
    expect(await head.adopt({ ...def, port: 2222 }, {})).toBeUndefined();
    expect(await head.adopt(def, { acceptNewHostKey: ['SHA256:abc'] })).toBeUndefined();
    await head.close();
    expect(s.closes()).toBe(1);
    expect(await head.adopt(def, {})).toBeUndefined();
  });

  it("passes a failed connection to the operation as that operation's own failure", async () => {
    const c = controlled();
    const head = new HeadStart(c.start);
    head.start('edge');
    await settled(Promise.resolve());
    c.settle().reject(new Error('host key changed'));
    expect(await settled(head.connecting())).toBe(true);
    await expect(head.adopt(def, {})).rejects.toThrow('host key changed');
    await head.close(); // nothing left to close, nothing thrown
  });

  it('gives way when it cannot start (an unknown node): the operation reports it', async () => {
    const head = new HeadStart(async () => {
      throw new Error('no node named "ghost"');
    });
    head.start('ghost');
    expect(await settled(head.connecting())).toBe(true);
    expect(await head.adopt(def, {})).toBeUndefined();
    await head.close();
  });

  it('is nothing when no command asked for one', async () => {
    const head = new HeadStart(async () => {
      throw new Error('not called');
    });
    expect(await settled(head.connecting())).toBe(true);
    expect(await head.adopt(def, {})).toBeUndefined();
    await head.close();
  });
});
