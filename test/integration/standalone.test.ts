// The standalone executable (npm run build:cli-exe) as a technician without Node runs it: built
// once here, started with nothing on PATH (no `node` to fall back on), from an empty directory,
// with its own HOLDFAST_HOME, against a lab node — node add, images, pin, the same node read on
// the spot (--local: its containerd socket, no SSH) for images and metrics, and serve with the
// UI and the API it carries inside itself.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulateK3sStart, labelsOf, startLab, writeImageArchive, type Lab } from '../../lab';
import type { ImageRef } from '../../src/shared/domain/images';
import type { PinPlan } from '../../src/shared/domain/pins';
import { TOKEN_HEADER } from '../../src/server/http';
import { unpackEnvelope } from '../../src/shared/wirePack';
// @ts-expect-error -- plain JavaScript build script, no declarations
import { buildExe } from '../../scripts/build-cli-exe.mjs';

let lab: Lab;
let exe: string;
let home: string;
let cwd: string;
/** The whole environment: an empty PATH, a private home — nothing from this test runner. */
let env: NodeJS.ProcessEnv;
const REF = 'docker.io/library/standalone:1';
const K3S = 'io.cattle.k3s.pinned';
const CRI = 'io.cri-containerd.pinned';

beforeAll(async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hf-exe-'));
  [exe, lab] = await Promise.all([buildExe(path.join(dir, 'holdfast')) as Promise<string>, startLab({ nodes: ['sa1'] })]);
  await writeImageArchive(path.join(lab.node('sa1').hostImagesDir, 'standalone.tar'), { format: 'oci', images: [{ name: REF }] });
  await emulateK3sStart(lab.node('sa1'));
  home = mkdtempSync(path.join(os.tmpdir(), 'hf-exe-home-'));
  cwd = mkdtempSync(path.join(os.tmpdir(), 'hf-exe-cwd-'));
  env = { PATH: mkdtempSync(path.join(os.tmpdir(), 'hf-exe-path-')), HOME: home, HOLDFAST_HOME: home };
}, 300_000);

afterAll(async () => {
  await lab?.stop();
});

function holdfast(args: string[]) {
  const r = spawnSync(exe, args, { cwd, env, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('the standalone holdfast executable', () => {
  it('finds no node on the PATH it runs with, and is one file', () => {
    expect(spawnSync('/bin/sh', ['-c', 'command -v node'], { env }).status).not.toBe(0);
    expect(readdirSync(path.dirname(exe))).toEqual(['holdfast']);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('adds a node, lists its images and makes a pin durable', () => {
    const n = lab.node('sa1');
    const add = holdfast(['node', 'add', 'sa1', '--host', n.host, '--port', String(n.port), '--identity', lab.clientKey, '--known-hosts', lab.knownHosts]);
    expect(add.stderr).toBe('');
    expect(add.code).toBe(0);
    expect(add.stdout).toMatch(/^added sa1: containerd /);

    const before = holdfast(['images', 'sa1', '--json']);
    expect(before.code).toBe(0);
    const ref = (JSON.parse(before.stdout) as ImageRef[]).find((i) => i.name === REF);
    expect(ref).toMatchObject({ pin: 'distro', afterRestart: 'pinned', archive: 'standalone.tar' });

    const pin = holdfast(['pin', 'sa1', REF, '--json']);
    expect(pin.code).toBe(0);
    expect((JSON.parse(pin.stdout) as PinPlan).changes.map((c) => c.ref)).toContain(REF);
    const after = (JSON.parse(holdfast(['images', 'sa1', '--json']).stdout) as ImageRef[]).find((i) => i.name === REF);
    expect(after?.pin).toBe('durable');

    expect(readdirSync(cwd)).toEqual([]); // nothing written where it was started
  });

  it('pinned on the node itself, as containerd records it', async () => {
    const labels = await labelsOf(lab.node('sa1'), REF);
    expect(labels[CRI]).toBe('pinned');
    expect(labels[K3S]).toBeUndefined();
  });

  it('runs on the node itself (--local): its images and metrics from the containerd socket, no SSH', async () => {
    const n = lab.node('sa1');
    const here = ['--local', '--name', 'sa1', '--socket', n.hostSocket, '--images-dir', n.hostImagesDir];
    const images = holdfast(['images', ...here, '--json']);
    expect(images.stderr).toBe('');
    expect(images.code).toBe(0);
    expect((JSON.parse(images.stdout) as ImageRef[]).find((i) => i.name === REF)).toMatchObject({ pin: 'durable', archive: 'standalone.tar' });

    const m = holdfast(['metrics', ...here]);
    expect(m.stderr).toBe('');
    expect(m.code).toBe(0);
    execFileSync('promtool', ['check', 'metrics'], { input: m.stdout, stdio: ['pipe', 'pipe', 'pipe'] }); // Debian's promtool
    const value = (series: string) => Number(m.stdout.split('\n').find((l) => l.startsWith(`${series} `))?.slice(series.length + 1));
    // The one image on the node, made durable above: what containerd holds, as the series say it.
    expect(value('holdfast_images{state="durable"}')).toBe(1);
    expect(value('holdfast_images{state="k3s"}')).toBe(0);
    expect(value('holdfast_images{state="unpinned"}')).toBe(0);
    expect(value('holdfast_check_success')).toBe(1);
    const fs = await statfs(n.hostImagesDir);
    expect(value('holdfast_imagefs_capacity_bytes')).toBe(fs.blocks * fs.bsize);
    expect(value('holdfast_gc_high_threshold_ratio')).toBe(0.85);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('serves the UI and the API it carries, behind its token', async () => {
    const server = spawn(exe, ['serve'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = new URL(await printedUrl(server));
      expect(url.hostname).toBe('127.0.0.1');
      const token = url.searchParams.get('token')!;
      expect(token.length).toBeGreaterThanOrEqual(16);

      const page = await fetch(url);
      expect(page.status).toBe(200);
      const html = await page.text();
      // Its own copy: nothing beside the file or in its cwd to serve from.
      expect(html).toContain('<title>Holdfast</title>');
      expect(html).toContain('<div id="root"></div>');
      for (const [pattern, type] of [[/src="\.\/(assets\/[^"]+\.js)"/, 'text/javascript'], [/href="\.\/(assets\/[^"]+\.css)"/, 'text/css']] as const) {
        const asset = pattern.exec(html)![1]!;
        const r = await fetch(new URL(asset, url));
        expect(r.status, asset).toBe(200);
        expect(r.headers.get('content-type')).toContain(type);
        expect((await r.arrayBuffer()).byteLength).toBeGreaterThan(1000);
      }

      const api = (token?: string) =>
        fetch(new URL('/api/nodes.list', url), { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { [TOKEN_HEADER]: token } : {}) }, body: '{}' });
      expect((await api()).status).toBe(401);
      const listed = await api(token);
      expect(listed.status).toBe(200);
      // Record lists cross packed (src/shared/wirePack.ts), as the UI's api unpacks them.
      const body = unpackEnvelope((await listed.json()) as { ok: boolean; result: { name: string }[] });
      expect(body.ok).toBe(true);
      expect(body.result.map((d) => d.name)).toEqual(['sa1']);
    } finally {
      server.kill('SIGTERM');
    }
    const code = await new Promise<number | null>((resolve) => server.once('exit', (c) => resolve(c)));
    expect(code).toBe(0);
  });
});

/** The URL `holdfast serve` prints on stdout. */
function printedUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`no URL printed within 30 s\n${out}${err}`)), 30_000);
    child.stderr!.on('data', (d) => (err += d));
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /serving on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code}\n${out}${err}`)));
  });
}
