// No password, passphrase, private key or serve token ever reaches a log line. Real connections
// to a lab node — a password-authenticated non-root user (a wrong password first), an encrypted
// Ed25519 key (a wrong passphrase first) — run through the core with the logger at debug, and a
// real `holdfast serve --verbose` takes a password through its credentials channel; every line
// either writes is searched for every secret.
import { spawn, execFileSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labUserName, startLab, type Lab } from '../../lab';
import { formatRecord, setLogSink } from '../../src/core/log';
import { NodeSession } from '../../src/core/node/session';
import type { NodeDef } from '../../src/shared/domain/nodes';
import { unpackEnvelope } from '../../src/shared/wirePack';
import { labNodeDef, repoRoot, tempHome } from './support';

const USER = labUserName('hfpw');
const PASSWORD = 'S3cret-pw-91c4 "quoted" $(echo no)';
const WRONG_PASSWORD = 'S3cret-wrong-5d2e';
const PASSPHRASE = 'S3cret-kp-77ab passphrase';
const WRONG_PASSPHRASE = 'S3cret-wrongkp-0c1f';

let lab: Lab;
let work: string;
let keyFile: string;
let keyLines: string[]; // the base64 lines of the encrypted private key file

const lines: string[] = [];

/** Every secret of this file that occurs in `text`, by name. */
function leaks(text: string, extra: Record<string, string> = {}): string[] {
  const secrets: Record<string, string> = { PASSWORD, WRONG_PASSWORD, PASSPHRASE, WRONG_PASSPHRASE, ...extra };
  const found = Object.entries(secrets).filter(([, v]) => text.includes(v)).map(([k]) => k);
  // A fragment is enough to be a leak: the distinctive part of each secret, and any key line.
  for (const [k, v] of Object.entries(secrets)) if (!found.includes(k) && text.includes(v.split(' ')[0]!)) found.push(`${k} (part)`);
  if (keyLines.some((l) => text.includes(l))) found.push('private key material');
  return found;
}

beforeAll(async () => {
  lab = await startLab({ nodes: ['n1'], users: [{ name: USER, password: PASSWORD, sudo: 'nopasswd' }] });
  await lab.node('n1').configureSshd({ passwordAuthentication: true });
  work = mkdtempSync(path.join(os.tmpdir(), 'hf-logsecrets-'));
  keyFile = path.join(work, 'id_ed25519_enc');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', PASSPHRASE, '-C', 'logsecrets', '-f', keyFile]);
  appendFileSync(path.join(lab.dir, 'authorized_keys'), readFileSync(keyFile + '.pub'));
  keyLines = readFileSync(keyFile, 'utf8').split('\n').filter((l) => l && !l.startsWith('-----'));
  expect(keyLines.length).toBeGreaterThan(2);
  setLogSink((r) => lines.push(formatRecord(r)), 'debug');
});

afterAll(async () => {
  setLogSink(null);
  await lab?.stop();
});

const passwordDef = (): NodeDef => {
  const def = labNodeDef(lab, lab.node('n1'), { user: USER, sudo: true, auth: 'password' });
  delete def.identity;
  return def;
};

describe('secrets never reach a log line', () => {
  it('through the core: a password login (wrong first) and an encrypted key (wrong passphrase first)', async () => {
    const answers = [WRONG_PASSWORD, PASSWORD];
    const s = await NodeSession.open(passwordDef(), { credentials: { password: async () => answers.shift()! } });
    try {
      await s.detect();
      await s.listBaseImages();
    } finally {
      await s.close();
    }
    expect(answers).toEqual([]); // both were asked for and used

    const phrases = [WRONG_PASSPHRASE, PASSPHRASE];
    const k = await NodeSession.open(labNodeDef(lab, lab.node('n1'), { identity: keyFile }), { credentials: { passphrase: async () => phrases.shift()! } });
    try {
      await k.detect();
    } finally {
      await k.close();
    }
    expect(phrases).toEqual([]);

    // A failing login logs its error chain (ssh2's causes included).
    let failed: unknown;
    try {
      await NodeSession.open(passwordDef(), { credentials: { password: async () => WRONG_PASSWORD } });
    } catch (e) {
      failed = e;
    }
    expect(failed).toBeDefined();

    const text = lines.join('\n');
    // The log says what happened, so there was something to leak into…
    expect(text).toMatch(new RegExp(`debug \\[ssh\\] authenticated .*"user":"${USER}".*"auth":"password"`));
    expect(text).toMatch(/debug \[ssh\] authenticated .*"auth":"publickey \(.*id_ed25519_enc\)"/);
    expect(text).toMatch(/debug \[ssh\] connection failed .*"code":"AUTH_FAILED"/);
    expect(text).toMatch(/debug \[ssh\] host key verified .*"fingerprint":"SHA256:/);
    // …and none of it leaked.
    expect(leaks(text)).toEqual([]);
  });

  it('through `holdfast serve --verbose`: the token in the URL and a password answered over its API', { timeout: 240_000 }, async () => {
    const home = tempHome();
    const renderer = mkdtempSync(path.join(os.tmpdir(), 'hf-ui-'));
    writeFileSync(path.join(renderer, 'index.html'), '<!doctype html><title>Holdfast</title>');
    const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [path.join(repoRoot, 'bin', 'holdfast.mjs'), 'serve', '--verbose'], {
      env: { ...process.env, HOLDFAST_HOME: home, HOLDFAST_RENDERER_DIR: renderer, HOLDFAST_LOG: '' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      const url = await new Promise<URL>((resolve, reject) => {
        const onData = () => {
          const m = /https?:\/\/127\.0\.0\.1:\d+\/\?token=\S+/.exec(stdout);
          if (m) resolve(new URL(m[0]));
        };
        child.stdout.on('data', onData);
        void exited.then((code) => reject(new Error(`serve exited ${code}\n${stderr}`)));
      });
      const token = url.searchParams.get('token')!;
      expect(token.length).toBeGreaterThanOrEqual(32);
      const base = `${url.protocol}//${url.host}`;
      const api = async (channel: string, body: unknown, tok = token) => {
        const r = await fetch(`${base}/api/${channel}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-holdfast-token': tok }, body: JSON.stringify(body) });
        // Record lists cross packed (src/shared/wirePack.ts), as the UI's api unpacks them.
        return unpackEnvelope((await r.json()) as { ok: boolean; result?: unknown; error?: { code: string } });
      };

      expect((await fetch(url)).status).toBe(200); // the page, opened as the printed URL (token in the query)
      expect((await api('nodes.list', {}, 'not-the-token-at-all')).ok).toBe(false);
      const def = passwordDef();
      const add = await api('nodes.add', { node: { name: def.name, host: def.host, port: def.port, user: USER, knownHosts: def.knownHosts, sudo: true, auth: 'password' } });
      expect(add.ok).toBe(true);

      // Connecting asks for the password through the credentials channel, as the app's dialog
      // does — once, even though the node's images dir is adopted on this first connect.
      let settled = false;
      const connecting = api('nodes.connect', { name: def.name }).finally(() => (settled = true));
      let answered = 0;
      while (!settled) {
        const pending = (await api('credentials.pending', {})).result as { id: string; kind: string }[];
        for (const ask of pending.filter((p) => p.kind === 'password')) {
          expect((await api('credentials.answer', { id: ask.id, answers: [PASSWORD] })).ok).toBe(true);
          answered++;
        }
        if (!pending.length) await new Promise((r) => setTimeout(r, 50));
      }
      const connected = await connecting;
      expect(answered).toBe(1);
      expect(connected).toMatchObject({ ok: true, result: { state: 'connected' } });
      expect((await api('images.list', { node: def.name })).ok).toBe(true);

      child.kill('SIGTERM');
      await exited;
      expect(stdout).toContain(token); // printed for the person, on purpose
      expect(stderr).toMatch(/debug \[serve\] api call \{"channel":"credentials.answer","ok":true\}/);
      expect(stderr).toMatch(/debug \[serve\] api call \{"channel":"nodes.connect","ok":true\}/);
      expect(stderr).toMatch(/debug \[ssh\] authenticated .*"auth":"password"/);
      expect(leaks(stderr, { token })).toEqual([]);
    } catch (e) {
      throw new Error(`${(e as Error).message}\n--- serve's stderr ---\n${stderr}`);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
