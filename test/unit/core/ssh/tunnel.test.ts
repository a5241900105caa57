// openTunnel against a fake ssh2 Client: channels are in-process duplex pairs whose far end
// behaves like the remote socket (echo), so piping, mode selection and teardown are exercised
// without a network. The real-sshd path was checked by hand (see the ssh module report).
import { EventEmitter } from 'node:events';
import { existsSync, statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { BRIDGE_PROBE_SCRIPT, loginShellRefusal, openTunnel, probeOutcome, type TunnelChannel, type TunnelClient } from '../../../../src/core/ssh/tunnel';

/** A channel-like duplex that echoes what is written to it. */
class EchoChannel extends PassThrough implements TunnelChannel {
  stderr = new PassThrough();
}

function echoChannel(): EchoChannel {
  return new EchoChannel();
}

class FakeClient extends EventEmitter implements TunnelClient {
  connected = true;
  streamlocal: 'ok' | 'refused' = 'ok';
  probeExit = 0;
  /** As sshd does now and then: close the channel without its exit status. */
  probeSendsStatus = true;
  /** What the bridge probe prints: the bridges that run on the "node". */
  probeOut = 'socat python3 perl\n';
  execCommands: string[] = [];
  channels: EchoChannel[] = [];
  streamlocalChannels: EchoChannel[] = [];
  openssh_forwardOutStreamLocal(_p: string, cb: (err: Error | undefined, ch: TunnelChannel) => void) {
    if (!this.connected) throw new Error('Not connected');
    setImmediate(() => {
      // ssh2's callback type always carries a channel; on a failed open it is never used.
      if (this.streamlocal === 'refused') return cb(new Error('(SSH) Channel open failure: open failed'), echoChannel().destroy());
      const ch = echoChannel();
      this.channels.push(ch);
      this.streamlocalChannels.push(ch);
      cb(undefined, ch);
    });
    return this;
  }
  exec(cmd: string, cb: (err: Error | undefined, ch: TunnelChannel) => void) {
    if (!this.connected) throw new Error('Not connected');
    this.execCommands.push(cmd);
    setImmediate(() => {
      const ch = echoChannel();
      if (cmd.includes('holdfast-probe') || cmd === "'true'") {
        // probe: exit at once with the configured status
        ch.on('finish', () => {
          if (this.probeSendsStatus || !cmd.includes('holdfast-probe')) ch.emit('exit', this.probeExit);
          if (cmd.includes('holdfast-probe') && this.probeExit === 0) ch.emit('data', Buffer.from(this.probeOut));
          if (cmd.includes('holdfast-probe')) ch.emit('data', Buffer.from(`holdfast-probe-exit:${this.probeExit}\n`));
          ch.push(null);
          ch.stderr.end();
          setImmediate(() => ch.emit('close'));
        });
      }
      this.channels.push(ch);
      cb(undefined, ch);
    });
    return this;
  }
  drop() {
    this.connected = false;
    for (const ch of this.channels) ch.destroy();
    this.emit('close');
  }
}

function roundTrip(p: string, payload: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(p);
    let got = '';
    s.setEncoding('utf8');
    s.on('data', (d: string) => {
      got += d;
      if (got.length >= payload.length) {
        s.end();
        resolve(got);
      }
    });
    s.on('error', reject);
    s.write(payload);
  });
}

describe('openTunnel', () => {
  it('listens on a short path in a fresh 0700 directory and pipes each connection over streamlocal', async () => {
    const client = new FakeClient();
    const t = await openTunnel(client, '/run/k3s/containerd/containerd.sock');
    expect(t.mode).toBe('streamlocal');
    expect(t.localPath.length).toBeLessThan(100);
    expect(statSync(path.dirname(t.localPath)).mode & 0o777).toBe(0o700);
    // one trivial exec session, so sshd switches its side of the TCP connection to TCP_NODELAY
    expect(client.execCommands).toEqual(["'true'"]);
    const answers = await Promise.all(['a', 'b', 'c'].map((x) => roundTrip(t.localPath, x.repeat(100_000))));
    expect(answers).toEqual(['a', 'b', 'c'].map((x) => x.repeat(100_000)));
    await t.close();
    expect(existsSync(path.dirname(t.localPath))).toBe(false);
    expect(t.closed).toBe(true);
  });

  it("hands the probe's channel to the first connection (one round trip fewer), opens one per later connection, and closes an unused one", async () => {
    const client = new FakeClient();
    const t = await openTunnel(client, '/run/k3s/containerd/containerd.sock');
    expect(client.streamlocalChannels).toHaveLength(1);
    expect(await roundTrip(t.localPath, 'first')).toBe('first');
    expect(client.streamlocalChannels).toHaveLength(1);
    expect(await roundTrip(t.localPath, 'second')).toBe('second');
    expect(client.streamlocalChannels).toHaveLength(2);
    await t.close();

    // The node closed the probe's channel before anyone dialled: a new one serves the connection.
    const gone = new FakeClient();
    const t2 = await openTunnel(gone, '/run/k3s/containerd/containerd.sock');
    gone.streamlocalChannels[0]!.destroy();
    await new Promise((r) => setImmediate(r));
    expect(await roundTrip(t2.localPath, 'fresh')).toBe('fresh');
    expect(gone.streamlocalChannels).toHaveLength(2);
    await t2.close();

    // Nobody dialled: closing the tunnel closes the probe's channel too.
    const idle = new FakeClient();
    const t3 = await openTunnel(idle, '/run/k3s/containerd/containerd.sock');
    await t3.close();
    expect(idle.streamlocalChannels[0]!.destroyed).toBe(true);
  });

  it('falls back to a quoted socat exec bridge when streamlocal is refused', async () => {
    const client = new FakeClient();
    client.streamlocal = 'refused';
    const t = await openTunnel(client, '/run/k3s/containerd/containerd.sock');
    expect(t.mode).toBe('exec');
    expect(await roundTrip(t.localPath, 'hello')).toBe('hello');
    expect(client.execCommands.at(-1)).toBe("'socat' '-' 'UNIX-CONNECT:/run/k3s/containerd/containerd.sock'");
    await t.close();
  });

  it('uses sudo -n for the bridge when asked', async () => {
    const client = new FakeClient();
    const t = await openTunnel(client, '/run/x.sock', { sudo: true });
    expect(t.mode).toBe('exec');
    await roundTrip(t.localPath, 'x');
    expect(client.execCommands.at(-1)).toBe("'sudo' '-n' 'socat' '-' 'UNIX-CONNECT:/run/x.sock'");
    await t.close();
  });

  it('reports a missing socat or socket from the exec probe', async () => {
    const client = new FakeClient();
    client.streamlocal = 'refused';
    client.probeExit = 65;
    await expect(openTunnel(client, '/run/x.sock')).rejects.toMatchObject({ code: 'CONTAINERD_UNAVAILABLE', message: expect.stringMatching(/socat/) });
    client.probeExit = 66;
    await expect(openTunnel(client, '/run/x.sock')).rejects.toMatchObject({ code: 'CONTAINERD_UNAVAILABLE', message: expect.stringMatching(/no unix socket/) });
  });

  it('never hands socat a path it would misparse: python3 takes it as an argument; refuses relative paths', async () => {
    const client = new FakeClient();
    const t = await openTunnel(client, '/run/a,fork.sock', { mode: 'exec' });
    expect(t.bridge).toBe('python3');
    await roundTrip(t.localPath, 'x');
    expect(client.execCommands.at(-1)).toMatch(/^'python3' '-c' '.*' '\/run\/a,fork\.sock'$/s);
    await t.close();
    client.probeOut = 'socat\n';
    await expect(openTunnel(client, '/run/a,fork.sock', { mode: 'exec' })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(openTunnel(client, 'run/x.sock')).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('falls back to python3, then perl, when socat does not run on the node (under sudo too)', async () => {
    const client = new FakeClient();
    client.probeOut = 'python3 perl\n';
    let t = await openTunnel(client, '/run/x.sock', { sudo: true });
    expect(t.bridge).toBe('python3');
    expect(await roundTrip(t.localPath, 'hello')).toBe('hello');
    expect(client.execCommands.at(-1)).toMatch(/^'sudo' '-n' 'python3' '-c' '[^]*' '\/run\/x\.sock'$/);
    await t.close();
    client.probeOut = 'perl\n';
    t = await openTunnel(client, '/run/x.sock', { sudo: true });
    expect(t.bridge).toBe('perl');
    expect(await roundTrip(t.localPath, 'hi')).toBe('hi');
    expect(client.execCommands.at(-1)).toMatch(/^'sudo' '-n' 'perl' '-e' '[^]*' '\/run\/x\.sock'$/);
    await t.close();
  });

  it('reads the probe\'s printed verdict when sshd closes the channel without the exit status', async () => {
    const client = new FakeClient();
    client.streamlocal = 'refused';
    client.probeSendsStatus = false;
    client.probeExit = 66;
    await expect(openTunnel(client, '/run/x.sock')).rejects.toMatchObject({ code: 'CONTAINERD_UNAVAILABLE', message: expect.stringMatching(/no unix socket/) });
    client.probeExit = 0;
    const t = await openTunnel(client, '/run/x.sock');
    expect(t.mode).toBe('exec');
    await t.close();
    expect(probeOutcome(null, '')).toEqual({ code: null, found: [] });
    expect(probeOutcome(3, 'holdfast-probe-exit:66\n')).toMatchObject({ code: 3 }); // the status, when it came, decides
  });

  it('the probe script prints each verdict it exits with (run by this machine\'s sh)', () => {
    const run = (socket: string) => {
      try {
        return { code: 0, out: execFileSync('sh', ['-c', BRIDGE_PROBE_SCRIPT, 'holdfast-probe', socket, ''], { encoding: 'utf8' }) };
      } catch (e) {
        const err = e as { status: number; stdout: string };
        return { code: err.status, out: err.stdout };
      }
    };
    const missing = run('/nonexistent/holdfast.sock');
    expect(missing.code).toBe(66);
    expect(probeOutcome(null, missing.out).code).toBe(66);
  });

  it('runs the probe as a fixed script with the socket path and the sudo flag as positional parameters', async () => {
    const client = new FakeClient();
    const evil = "/run/x';touch /tmp/pwned;'.sock";
    await openTunnel(client, evil, { sudo: true }).then((t) => t.close());
    const probe = client.execCommands.find((c) => c.includes('holdfast-probe'))!;
    expect(probe.startsWith("'sh' '-c' 'end() {")).toBe(true);
    expect(probe.endsWith(`'holdfast-probe' '/run/x'\\'';touch /tmp/pwned;'\\''.sock' 'sudo'`)).toBe(true);
  });

  it('names what to install or configure when sudo or a bridge is missing', async () => {
    const client = new FakeClient();
    client.probeExit = 65;
    await expect(openTunnel(client, '/run/x.sock', { sudo: true })).rejects.toMatchObject({ code: 'CONTAINERD_UNAVAILABLE', hint: expect.stringMatching(/install socat/i) });
    client.probeExit = 67;
    await expect(openTunnel(client, '/run/x.sock', { sudo: true, user: 'ops' })).rejects.toMatchObject({ hint: expect.stringContaining('ops ALL=(root) NOPASSWD: ALL') });
    client.probeExit = 68;
    await expect(openTunnel(client, '/run/x.sock', { sudo: true, user: 'ops' })).rejects.toMatchObject({ code: 'REFUSED', hint: expect.stringContaining('ops ALL=(root) NOPASSWD: ALL') });
  });

  it('tells a login shell that refuses commands (nologin, false) from a probe that ran; a missing home is only noted (#49)', () => {
    const chdir = 'Could not chdir to home directory /nonexistent: No such file or directory\n';
    // nologin, as sshd runs it for a system user: its answer on stdout, sshd's warning on stderr.
    expect(loginShellRefusal(1, 'This account is currently not available.\n', chdir)).toEqual({ said: 'This account is currently not available.', home: '/nonexistent' });
    // The exit status lost (sshd closes the channel without it now and then): the answer decides.
    expect(loginShellRefusal(null, 'This account is currently not available.\n', '')).toEqual({ said: 'This account is currently not available.', home: null });
    // false: exit 1 and not a word.
    expect(loginShellRefusal(1, '', chdir)).toEqual({ said: null, home: '/nonexistent' });
    // The probe ran (its verdict is there): never the shell, whatever else was printed.
    expect(loginShellRefusal(66, 'holdfast-probe-exit:66\n', chdir)).toBeNull();
    expect(loginShellRefusal(1, 'This account is currently not available.\nholdfast-probe-exit:69\n', '')).toBeNull();
    // Killed, or another failure with words of its own: not claimed as the shell.
    expect(loginShellRefusal(null, '', '')).toBeNull();
    expect(loginShellRefusal(1, '', 'sh: 1: socat: not found\n')).toBeNull();
  });

  it('maps a closed client (synchronous "Not connected") to UNREACHABLE', async () => {
    const client = new FakeClient();
    client.connected = false;
    await expect(openTunnel(client, '/run/x.sock')).rejects.toMatchObject({ code: 'UNREACHABLE' });
  });

  it('destroys local sockets and stops listening when the SSH connection drops', async () => {
    const client = new FakeClient();
    const t = await openTunnel(client, '/run/x.sock');
    const s = net.connect(t.localPath);
    s.on('error', () => {});
    s.write('ping');
    await new Promise((r) => s.once('data', r));
    expect(t.activeConnections).toBe(1);
    const closed = new Promise((r) => s.once('close', r));
    client.drop();
    await closed;
    await new Promise((r) => setTimeout(r, 20));
    expect(t.closed).toBe(true);
    expect(existsSync(t.localPath)).toBe(false);
    await t.close(); // idempotent
  });

  it('an error on one connection only tears down that pair', async () => {
    const client = new FakeClient();
    const t = await openTunnel(client, '/run/x.sock');
    const a = net.connect(t.localPath);
    const b = net.connect(t.localPath);
    a.on('error', () => {});
    a.write('1');
    b.write('2');
    await Promise.all([new Promise((r) => a.once('data', r)), new Promise((r) => b.once('data', r))]);
    const chA = client.streamlocalChannels[0]!; // a, dialled first, took the probe's channel
    const aClosed = new Promise((r) => a.once('close', r));
    chA.destroy(new Error('boom'));
    await aClosed;
    expect(await roundTrip(t.localPath, 'still fine')).toBe('still fine');
    b.write('3');
    expect(String(await new Promise((r) => b.once('data', r)))).toBe('3');
    b.destroy();
    await t.close();
  });
});
