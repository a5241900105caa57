// What `holdfast upload`, `import` and `log` show on a terminal and in a log, over lab nodes:
// per-node progress (a live view on a real pseudo-terminal, plain lines otherwise), the local
// inspection and the node-side hashing as spinners, Ctrl-C on a clean line, no listener leak,
// why a partial upload is or is not resumed (after a real kill -9 too), and a closed stdout pipe.
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, readSync, closeSync, statSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startK3sWatcher, startLab, writeImageArchive, type K3sWatcher, type Lab } from '../../lab';
import { AuditLog } from '../../src/core/audit/log';
import { shellQuote } from '../../src/core/ssh/quote';
import { Screen } from '../support/screen';
import { repoRoot, runCli, tempHome } from './support';

const MiB = 1024 * 1024;
const COLUMNS = 160;
const bin = path.join(repoRoot, 'bin', 'holdfast.mjs');
let lab: Lab;
let home: string;
let watchers: K3sWatcher[] = [];
const work = mkdtempSync(path.join(os.tmpdir(), 'hf-terminal-'));

beforeAll(async () => {
  lab = await startLab({ nodes: ['t1', 't2', 't3'] });
  home = tempHome();
  for (const n of lab.nodes) {
    const r = await runCli(['node', 'add', n.name, '--host', n.host, '--port', String(n.port), '--identity', lab.clientKey, '--known-hosts', lab.knownHosts], { HOLDFAST_HOME: home });
    expect(r.code).toBe(0);
  }
  watchers = [startK3sWatcher(lab.node('t1')), startK3sWatcher(lab.node('t2'))]; // t3: k3s is down
});

afterAll(async () => {
  for (const w of watchers) await w.stop();
  await lab?.stop();
});

interface TtyRun {
  code: number | null;
  /** Every distinct screen seen while it ran, in order, then the last one. */
  screens: string[][];
  final: string[];
}

/**
 * Runs the CLI on a real pseudo-terminal (util-linux `script`, 160×40) and replays its output on
 * a test terminal, keeping the screen as it was at the end of every frame the board drew (each
 * redraw starts by moving the cursor up), however the output was chunked. `onScreen` sees each
 * screen and may type (e.g. Ctrl-C).
 */
function runOnTty(args: string[], onScreen?: (lines: string[], type: (s: string) => void) => void): Promise<TtyRun> {
  // Fixed words and shell-quoted arguments: nothing is interpreted by the shell script starts.
  const command = `stty cols ${COLUMNS} rows 40; exec ${shellQuote([process.execPath, bin, ...args])}`;
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], { env: { ...process.env, HOLDFAST_HOME: home }, stdio: ['pipe', 'pipe', 'pipe'] });
    const screen = new Screen(COLUMNS);
    let pending = '';
    const screens: string[][] = [];
    const type = (s: string) => child.stdin.write(s);
    const snapshot = () => {
      const lines = screen.text();
      const last = screens[screens.length - 1];
      if (!last || last.join('\n') !== lines.join('\n')) screens.push(lines);
      onScreen?.(lines, type);
    };
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      pending += d;
      // An escape sequence cut by the chunking waits for its end.
      // oxlint-disable-next-line no-control-regex -- escape sequences are what this matches
      const cut = /\x1b(\[[?0-9;]*)?$/.exec(pending)?.index ?? pending.length;
      // oxlint-disable-next-line no-control-regex -- escape sequences are what this matches
      for (const piece of pending.slice(0, cut).split(/(?=\x1b\[\d+A)/)) {
        screen.write(piece);
        snapshot();
      }
      pending = pending.slice(cut);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, screens, final: screen.write(pending).text() });
    });
  });
}

async function bundle(name: string, mib: number, images = 2): Promise<string> {
  const file = path.join(work, name);
  await writeImageArchive(file, {
    format: 'oci',
    compression: 'zstd',
    images: Array.from({ length: images }, (_, i) => ({ name: `registry.local/term/${name.replace(/[^a-z0-9]/g, '-')}-${i}:1`, layerBytes: mib * MiB })),
  });
  return file;
}

const SPINNER = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/;

describe('holdfast import on a terminal', () => {
  it('shows one live line per node, the inspection and the node-side hashing as spinners, and leaves only the results', async () => {
    const file = await bundle('live.tar.zst', 24);
    const r = await runOnTty(['import', 't1', 't2', file, '--pin']);
    expect(r.code).toBe(0);
    // The local inspection had a spinner with how far it read.
    expect(r.screens.some((s) => s.some((l) => /^. inspecting live\.tar\.zst…/.test(l) && SPINNER.test(l[0]!)))).toBe(true);
    // Both nodes at once, each on its own line, redrawn in place (never two nodes on one line).
    const both = r.screens.filter((s) => s.some((l) => /^t1 {2}\S/.test(l)) && s.some((l) => /^t2 {2}\S/.test(l)));
    expect(both.length).toBeGreaterThan(3);
    for (const s of r.screens) {
      expect(s.filter((l) => /^t1 {2}/.test(l)).length).toBeLessThanOrEqual(1);
      expect(s.some((l) => /t1 .*t2 |t2 .*t1 /.test(l))).toBe(false);
    }
    // Hashing on the node: a spinner with a label, not a bar stuck at 100 %.
    expect(r.screens.some((s) => s.some((l) => new RegExp(`^t[12] {2}${SPINNER.source} verifying \\(sha256 on the node\\)…`).test(l)))).toBe(true);
    expect(r.screens.some((s) => s.some((l) => /^t[12] {2}━+─* uploading \d+% · /.test(l)))).toBe(true);
    // At the end the live lines are gone: the archive line, then one result per node (the archive
    // stays, so each ends with what the next start makes of its pins; the terminal wraps it).
    expect(r.final[0]).toMatch(/^live\.tar\.zst: oci archive, zstd, [\d.]+ MiB, 2 images, sha256 [0-9a-f]{64}$/);
    expect(r.final.slice(1).join('')).toMatch(/^t1: ok — uploaded and imported, \d+ references pinned and verified .+-managed again.+t2: ok — uploaded and imported, \d+ references pinned and verified .+-managed again.+$/);
    expect(r.final.some((l) => SPINNER.test(l) || /━|inspecting|uploading|waiting for/.test(l))).toBe(false);
  }, 180_000);

  it('Ctrl-C during the wait for k3s: the live lines go, the message gets its own line; no listener leak after many waits', async () => {
    const file = await bundle('wait.tar.zst', 1, 1);
    let pressed = false;
    const r = await runOnTty(['import', 't3', file, '--pin', '--timeout', '60'], (lines, type) => {
      // Twelve seconds into the wait is twelve rounds of it: more than Node's 10-listener warning.
      if (!pressed && lines.some((l) => /^t3 {2}. waiting for k3s to import .*… (1[2-9]|[2-9]\d) s$/.test(l))) {
        pressed = true;
        type('\x03');
      }
    });
    expect(pressed).toBe(true);
    expect(r.code).toBe(1);
    const all = r.screens.flat();
    expect(all.some((l) => l.includes('MaxListenersExceededWarning'))).toBe(false);
    expect(r.final).toContain('holdfast: cancelling — run the same command again to resume (Ctrl-C again quits at once)');
    expect(r.final).toContain('t3: FAILED — cancelled');
    // No progress line is left over, and nothing was written onto one.
    expect(r.final.some((l) => SPINNER.test(l) || /waiting for k3s/.test(l))).toBe(false);
    expect(r.final.some((l) => /holdfast:/.test(l) && !l.startsWith('holdfast:'))).toBe(false);
    expect(r.final.at(-1)).toBe("holdfast: 1 of 1 node failed; the others' work is done and kept. Run the same command again to retry.");
  }, 180_000);
});

describe('holdfast upload on a terminal', () => {
  it('Ctrl-C during the local inspection clears its spinner and says so on a line of its own', async () => {
    const file = await bundle('inspect-cancel.tar.zst', 48, 1);
    let pressed = false;
    const r = await runOnTty(['upload', 't1', file], (lines, type) => {
      if (!pressed && lines.some((l) => /inspecting inspect-cancel\.tar\.zst…/.test(l))) {
        pressed = true;
        type('\x03');
      }
    });
    expect(pressed).toBe(true);
    expect(r.code).toBe(1);
    expect(r.final.filter((l) => l.trim() !== '^C')).toEqual([
      'holdfast: cancelling — run the same command again to resume (Ctrl-C again quits at once)',
      'holdfast: the inspection of inspect-cancel.tar.zst was cancelled; nothing was sent',
    ]);
    expect(existsSync(path.join(lab.node('t1').hostImagesDir, '.inspect-cancel.tar.zst.holdfast-partial'))).toBe(false);
  }, 180_000);
});

describe('holdfast import in a log (stderr not a terminal)', () => {
  it('prints plain per-node lines at phase changes: no carriage returns, no escape sequences', async () => {
    const file = await bundle('plain.tar.zst', 8);
    const r = await runCli(['import', 't1', 't2', file, '--pin'], { HOLDFAST_HOME: home }, 120_000);
    expect(r.code).toBe(0);
    // oxlint-disable-next-line no-control-regex -- escape sequences are what this matches
    expect(r.stderr).not.toMatch(/[\r\x1b]/);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe('inspecting plain.tar.zst…');
    expect(lines[1]).toMatch(/^plain\.tar\.zst: oci archive, zstd, [\d.]+ MiB, 2 images, sha256 [0-9a-f]{64}$/);
    for (const l of lines.slice(2)) expect(l).toMatch(/^t[12]: /);
    for (const n of ['t1', 't2']) {
      const mine = lines.filter((l) => l.startsWith(`${n}: `)).map((l) => l.slice(4));
      // In order, each phase once; within a phase, how far it got repeats every few seconds.
      const phases = mine.filter((l, i) => !(l.startsWith('uploading') && mine[i - 1]?.startsWith('uploading')) && !l.startsWith('waiting for k3s to import ('));
      expect(phases).toEqual([
        'connecting…',
        'checking what the node already has…',
        'checking the images dir…',
        expect.stringMatching(/^uploading 0% · 0 B of [\d.]+ MiB/),
        'verifying (sha256 on the node)…',
        'moving it into place…',
        'waiting for k3s to import the archive…',
        expect.stringMatching(/^making the pins durable.*…$/),
        expect.stringMatching(/^done — uploaded and imported, \d+ references pinned and verified .+-managed again/),
      ]);
    }
  }, 180_000);
});

describe('a partial upload from an earlier run', () => {
  const staging = (name: string) => path.join(lab.node('t3').hostImagesDir, `.${name}.holdfast-partial`);
  const upload = (file: string) => runCli(['upload', 't3', file], { HOLDFAST_HOME: home }, 120_000);

  it('says why it starts over: 0 bytes, larger than the file, not the file\'s first bytes', async () => {
    const file = await bundle('stale.tar.zst', 2, 1);
    const size = statSync(file).size;

    writeFileSync(staging('stale.tar.zst'), '');
    let r = await upload(file);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('t3: the partial upload on t3 was 0 bytes: starting over\n');
    expect(r.stdout).not.toContain('resumed');

    const other = await bundle('other.tar.zst', 3, 1);
    writeFileSync(staging('other.tar.zst'), Buffer.alloc(statSync(other).size + 10, 1));
    r = await upload(other);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^t3: the partial upload on t3 \([\d.]+ MiB\) is larger than the local file \([\d.]+ MiB\), so it is from another archive: starting over$/m);

    const third = await bundle('third.tar.zst', 2, 1);
    writeFileSync(staging('third.tar.zst'), Buffer.alloc(100_000, 7));
    r = await upload(third);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      "t3: the partial upload on t3 (97.7 KiB) does not match the local file's first 97.7 KiB, so it is from another archive or the file changed since: starting over\n",
    );
    expect(size).toBeGreaterThan(0);
  }, 180_000);

  it('resumes a partial upload that is the file\'s first bytes, and says so', async () => {
    const file = await bundle('prefix.tar.zst', 4, 1);
    const head = Buffer.alloc(MiB);
    const fd = openSync(file, 'r');
    readSync(fd, head, 0, MiB, 0);
    closeSync(fd);
    writeFileSync(staging('prefix.tar.zst'), head);
    const r = await upload(file);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^t3: resuming the partial upload on t3 at 1 MiB of [\d.]+ MiB: it matches the local file's first 1 MiB$/m);
    expect(r.stdout).toMatch(/^t3: uploaded prefix\.tar\.zst \([\d.]+ MiB, resumed from 1 MiB, sha256 [0-9a-f]{64} verified on the node\)$/m);
  });

  it('after a kill -9 mid-upload, the next run resumes where the node\'s copy ends', async () => {
    const file = await bundle('killed.tar.zst', 48, 2);
    const child = spawn(process.execPath, [bin, 'upload', 't3', file], { env: { ...process.env, HOLDFAST_HOME: home }, stdio: 'ignore' });
    const partial = staging('killed.tar.zst');
    const deadline = Date.now() + 90_000;
    while (!(existsSync(partial) && statSync(partial).size > 0)) {
      if (Date.now() > deadline) throw new Error('the upload never started');
      await new Promise((r) => setTimeout(r, 5));
    }
    child.kill('SIGKILL');
    await new Promise((r) => child.on('close', r));
    expect(existsSync(path.join(lab.node('t3').hostImagesDir, 'killed.tar.zst'))).toBe(false);

    const r = await upload(file);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^t3: resuming the partial upload on t3 at [\d.]+ [KM]iB of [\d.]+ MiB: it matches the local file's first [\d.]+ [KM]iB$/m);
    expect(r.stdout).toMatch(/, resumed from [\d.]+ [KM]iB, sha256 [0-9a-f]{64} verified on the node\)$/m);
  }, 180_000);
});

describe('holdfast log | head -3', () => {
  it('stops quietly with status 0 when the reader closes the pipe', async () => {
    const h = tempHome();
    const audit = new AuditLog(h);
    // Far more than a pipe buffer holds, so writes go on after head has gone.
    for (let i = 0; i < 400; i++) {
      await audit.append({ node: 'n1', action: 'pin', changes: [{ ref: `registry.local/app:${i}`, imageId: null, before: {}, after: { 'io.cri-containerd.pinned': 'pinned' } }] });
    }
    // The pipeline as a person types it; node and the bin come in as $0 and $1, never as text of
    // the script. bash's PIPESTATUS is holdfast's own status, not head's.
    const pipeline = spawn('bash', ['-c', '"$0" "$1" log | head -3; exit "${PIPESTATUS[0]}"', process.execPath, bin], {
      env: { ...process.env, HOLDFAST_HOME: h },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let shown = '';
    let stderr = '';
    pipeline.stdout.on('data', (d) => (shown += d));
    pipeline.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise((r) => pipeline.on('close', r));
    expect(shown.split('\n').filter(Boolean)).toHaveLength(3);
    // One change is "1 reference", not "1 references".
    expect(shown.split('\n')[0]).toMatch(/ {2}n1 {2}pin 1 reference$/);
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});
