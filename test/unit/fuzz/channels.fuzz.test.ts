// Fuzz of every IPC/HTTP channel with invalid arguments (issue #11): random JSON, wrong types,
// missing and extra keys, huge strings, deep nesting, cycles and values only structured clone
// carries — through the real dispatcher (src/server/dispatch.ts), Electron main's registration
// (src/main/ipc.ts) and `holdfast serve` (src/server/http.ts, over loopback), backed by the real
// service on a throw-away home. 0 crashes: every answer is an error envelope, nothing throws, no
// HTTP 500. Only arguments the channel's own schema refuses are sent (checked per case), so no
// handler ever runs. Fixed seed, bounded count; one line of figures is printed.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandlers, type Service } from '../../../src/core/service';
import { registerIpc, type IpcInvokeEventLike } from '../../../src/main/ipc';
import { dispatch } from '../../../src/server/dispatch';
import { startServer, TOKEN_HEADER, type RunningServer } from '../../../src/server/http';
import { channels, type Channel, type Envelope } from '../../../src/shared/contract';
import { dockerTagBomb, ociIndexBomb, zstdWindowBomb } from '../../../lab/hostile';
import { deeplyNested, randomJson, Rng } from './random';

const SEED = 0x11f022;
const PER_CHANNEL = 30; // per transport
const CHANNELS = Object.keys(channels) as Channel[];
const HINTS = ['n1', 'edge-01', 'a', '/abs/path.tar', 'relative.tar', 'sha256:' + 'a'.repeat(64), 'SHA256:' + 'A'.repeat(43), 'pin', 'unpin', 'html', 'docker.io/library/x:1', 'k8s.io', '../x'];

let home: string;
let service: Service;
let server: RunningServer;
let invoke: (channel: string, ...args: unknown[]) => Promise<unknown>;

beforeAll(async () => {
  home = mkdtempSync(path.join(os.tmpdir(), 'hf-fuzz-ch-'));
  const renderer = path.join(home, 'renderer');
  mkdirSync(renderer);
  writeFileSync(path.join(renderer, 'index.html'), '<!doctype html><title>x</title>');
  service = createHandlers({ home: path.join(home, 'home') });
  server = await startServer({ handlers: service, rendererDir: renderer });
  // Electron's ipcMain, as far as registerIpc uses it: handle() keeps the listener, invoke calls it.
  const listeners = new Map<string, (e: IpcInvokeEventLike, ...a: unknown[]) => Promise<unknown>>();
  registerIpc({ handle: (c, l) => void listeners.set(c, l), removeHandler: (c) => void listeners.delete(c) }, service);
  invoke = (c, ...a) => listeners.get(c)!({ senderFrame: { url: 'file:///app/index.html' } }, ...a);
});

afterAll(async () => {
  await server?.close();
  await service?.dispose();
  rmSync(home, { recursive: true, force: true });
});

/** The keys a channel's schema names (its strictObject shape), to build near-miss arguments. */
function keysOf(c: Channel): string[] {
  const shape = (channels[c].args as unknown as { shape?: Record<string, unknown> }).shape;
  return shape ? Object.keys(shape) : [];
}

/** One candidate: near-misses built on the channel's keys, or something else entirely. */
function candidate(rng: Rng, c: Channel, transport: 'ipc' | 'json'): unknown {
  const keys = keysOf(c);
  switch (rng.int(transport === 'ipc' ? 9 : 7)) {
    case 0:
      return randomJson(rng, HINTS);
    case 1: {
      // the right keys, random values
      const o: Record<string, unknown> = {};
      for (const k of keys) if (rng.chance(0.8)) o[k] = randomJson(rng, HINTS);
      return o;
    }
    case 2: {
      // the right keys plus one it does not know
      const o: Record<string, unknown> = {};
      for (const k of keys) o[k] = rng.pick(HINTS);
      o[rng.pick(['__proto__', 'constructor', 'extra', 'prototype'])] = randomJson(rng, HINTS);
      return o;
    }
    case 3: {
      // a huge string somewhere: over zod's max, or over ipc.payloadBytes
      const o: Record<string, unknown> = {};
      for (const k of keys) o[k] = rng.pick(HINTS);
      o[keys.length ? rng.pick(keys) : 'x'] = 'x'.repeat(rng.chance(0.8) ? 5_000 : 1_100_000);
      return o;
    }
    case 4: {
      const o: Record<string, unknown> = {};
      for (const k of keys) o[k] = rng.pick(HINTS);
      o[keys.length ? rng.pick(keys) : 'x'] = deeplyNested(rng.chance(0.5) ? 10 : 40 + rng.int(2_000), rng.chance(0.5));
      return o;
    }
    case 5:
      return Array.from({ length: rng.int(3) }, () => randomJson(rng, HINTS));
    case 6: {
      // many keys
      const o: Record<string, unknown> = {};
      for (let i = 0; i < 500 + rng.int(5_000); i++) o[`k${i}`] = i;
      return o;
    }
    case 7: {
      // structured clone only: a cycle, a Map, a typed array, a Date, a BigInt
      const o: Record<string, unknown> = {};
      for (const k of keys) o[k] = rng.pick(HINTS);
      const odd = rng.int(5);
      const k = keys.length ? rng.pick(keys) : 'x';
      if (odd === 0) o[k] = o;
      else if (odd === 1) o[k] = new Map([['node', 'n1']]);
      else if (odd === 2) o[k] = new Uint8Array(rng.chance(0.8) ? 8 : 2_000_000);
      else if (odd === 3) o[k] = new Date(0);
      else o[k] = 10n ** 30n;
      return o;
    }
    default:
      return rng.pick([undefined, null, 0, '', 'nodes.list', true, [], NaN]);
  }
}

/** Invalid for the channel's schema (what the real parse would say), else null: not sent. */
function invalid(c: Channel, raw: unknown): unknown | null {
  try {
    return channels[c].args.safeParse(raw ?? {}).success ? null : raw;
  } catch {
    return raw; // the schema itself choked on it: all the more reason to send it
  }
}

const isErrorEnvelope = (e: unknown): e is Envelope<never> & { ok: false } =>
  !!e && typeof e === 'object' && (e as { ok?: unknown }).ok === false && typeof (e as { error?: { code?: unknown } }).error?.code === 'string';

describe('fuzz: every channel, invalid arguments', () => {
  it('dispatch, IPC and HTTP answer each with an error envelope: 0 crashes', { timeout: 120_000 }, async () => {
    const rng = new Rng(SEED);
    const memBefore = process.memoryUsage();
    const crashes: string[] = [];
    const codes = new Map<string, number>();
    let cases = 0;
    let skipped = 0;
    const note = (where: string, c: string, answer: unknown, i: number): void => {
      cases++;
      if (!isErrorEnvelope(answer)) {
        crashes.push(`${where} ${c} case ${i}: ${JSON.stringify(answer)?.slice(0, 200)}`);
        return;
      }
      codes.set(answer.error.code, (codes.get(answer.error.code) ?? 0) + 1);
      if (typeof answer.error.message !== 'string' || answer.error.message === '') crashes.push(`${where} ${c} case ${i}: error without a message`);
    };

    for (const c of CHANNELS) {
      for (let i = 0; i < PER_CHANNEL; i++) {
        // dispatch: what both transports run
        const a = invalid(c, candidate(rng, c, 'ipc'));
        if (a === null) skipped++;
        else note('dispatch', c, await dispatch(service, c, a).catch((e: unknown) => `threw ${String(e)}`), i);

        // IPC: registerIpc's listener, one or several arguments
        const b = invalid(c, candidate(rng, c, 'ipc'));
        if (b === null) skipped++;
        else note('ipc', c, await invoke(c, ...(rng.chance(0.1) ? [b, b] : [b])).catch((e: unknown) => `threw ${String(e)}`), i);

        // HTTP: a JSON body (or not JSON at all), judged as the server will parse it
        const j = candidate(rng, c, 'json');
        const text = JSON.stringify(j) ?? 'undefined';
        const body = rng.chance(0.1) ? text.slice(0, -1 - rng.int(3)) : text;
        let onWire: unknown;
        try {
          onWire = body === '' ? {} : JSON.parse(body);
        } catch {
          onWire = Symbol('not JSON');
        }
        if (typeof onWire !== 'symbol' && invalid(c, onWire) === null) {
          skipped++;
          continue;
        }
        const res = await fetch(`http://127.0.0.1:${server.port}/api/${c}`, {
          method: 'POST',
          headers: { [TOKEN_HEADER]: server.token, 'content-type': 'application/json' },
          body,
        }).catch((e: unknown) => e as Error);
        if (res instanceof Error) {
          crashes.push(`http ${c} case ${i}: ${res.message}`);
          continue;
        }
        if (res.status >= 500) crashes.push(`http ${c} case ${i}: status ${res.status}`);
        note('http', c, await res.json().catch(() => 'not JSON'), i);
      }
    }
    // Unknown channels, on every transport.
    for (let i = 0; i < 30; i++) {
      const c = rng.pick(['', 'nodes', 'nodes.list.x', '__proto__', 'constructor', 'toString', 'x'.repeat(300), '../nodes.list']);
      note('dispatch', c, await dispatch(service, c, {}), i);
      const res = await fetch(`http://127.0.0.1:${server.port}/api/${encodeURIComponent(c)}`, {
        method: 'POST',
        headers: { [TOKEN_HEADER]: server.token, 'content-type': 'application/json' },
        body: '{}',
      });
      if (res.status >= 500) crashes.push(`http unknown ${c}: status ${res.status}`);
      note('http', c, await res.json().catch(() => 'not JSON'), i);
    }
    const after = process.memoryUsage();
    const peak = process.resourceUsage().maxRSS * 1024;
    console.log(
      `channel fuzz: ${cases} cases (${skipped} candidates valid, not sent), ${crashes.length} crashes, codes ${JSON.stringify(Object.fromEntries(codes))}, ` +
        `RSS+ArrayBuffers ${((memBefore.rss + memBefore.arrayBuffers) / 2 ** 20).toFixed(0)} → ${((after.rss + after.arrayBuffers) / 2 ** 20).toFixed(0)} MiB, peak RSS ${(peak / 2 ** 20).toFixed(0)} MiB`,
    );
    expect(crashes).toEqual([]);
    expect(cases).toBeGreaterThan(CHANNELS.length * PER_CHANNEL * 2);
    // Everything sent was invalid input or an unknown channel.
    expect([...codes.keys()].sort()).toEqual(['INVALID_INPUT', 'NOT_FOUND']);
    expect(after.rss + after.arrayBuffers - (memBefore.rss + memBefore.arrayBuffers)).toBeLessThan(512 * 2 ** 20);
  });

  it('local.inspect of the crafted archives (holdfast serve and IPC): a REFUSED envelope, and the process lives on', async () => {
    const files: [string, Buffer][] = [
      ['tags.tar', await dockerTagBomb(40_000, 40_000)],
      ['nested.tar', await ociIndexBomb(5, 40)],
      ['window.tar.zst', zstdWindowBomb()],
    ];
    for (const [name, data] of files) {
      const file = path.join(home, name);
      writeFileSync(file, data);
      const res = await fetch(`http://127.0.0.1:${server.port}/api/local.inspect`, {
        method: 'POST',
        headers: { [TOKEN_HEADER]: server.token, 'content-type': 'application/json' },
        body: JSON.stringify({ path: file }),
      });
      expect(res.status).toBe(200);
      const viaHttp = (await res.json()) as Envelope<unknown>;
      expect(viaHttp).toMatchObject({ ok: false, error: { code: 'REFUSED', message: expect.stringContaining(`${name} was refused:`) } });
      expect(await invoke('local.inspect', { path: file })).toEqual(viaHttp);
    }
    expect(await dispatch(service, 'nodes.list', {})).toEqual({ ok: true, result: [] });
  });

  it('the bounds name their limits', async () => {
    const big = await dispatch(service, 'nodes.add', { node: { name: 'x'.repeat(2_000_000) } });
    expect(big).toEqual({ ok: false, error: { code: 'INVALID_INPUT', message: 'The arguments of nodes.add are larger than 1 MiB: over the limit ipc.payloadBytes (1 MiB).' } });
    const deep = await dispatch(service, 'nodes.add', { node: deeplyNested(100, false) });
    expect(deep).toEqual({ ok: false, error: { code: 'INVALID_INPUT', message: 'The arguments of nodes.add are nested more than 32 levels deep: over the limit ipc.payloadDepth (32).' } });
    const cycle: Record<string, unknown> = {};
    cycle['node'] = cycle;
    expect(await invoke('nodes.add', cycle)).toMatchObject({ ok: false, error: { message: expect.stringContaining('ipc.payloadDepth') } });
    const res = await fetch(`http://127.0.0.1:${server.port}/api/nodes.list`, {
      method: 'POST',
      headers: { [TOKEN_HEADER]: server.token, 'content-type': 'application/json' },
      body: JSON.stringify({ pad: 'x'.repeat(1_100_000) }),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ ok: false, error: { code: 'INVALID_INPUT', message: 'The request body exceeds 1048576 bytes: over the limit http.bodyBytes (1 MiB).' } });
  });
});
