// Typed doubles of the renderer's API (ClientApi, DesktopBridge) and of the jobs it reports.
// A test gives only the operations it expects to be called; every other operation of the
// contract rejects with "<op> not expected in this test", so the double still implements the
// whole interface without casting.
import { operations } from '../../src/shared/channels';
import type { HoldfastApi, LiveApi, ResultOf } from '../../src/shared/contract';
import type { Job } from '../../src/shared/domain/jobs';

// src/renderer/api's ClientApi and DesktopBridge, spelled from the contract: that module needs the
// DOM, and this file is also type-checked with Node's types only (tsconfig.node.json).
/** What the store talks to (src/renderer/api: ClientApi). */
export type ClientApi = HoldfastApi & Partial<LiveApi>;
/** The desktop preload's bridge (src/renderer/api: DesktopBridge). */
export type DesktopBridge = ClientApi & { pathForFile?: (file: File) => string };

/** The operations a test gives, without those it gives as undefined (absent, as from an older server). */
type Given<T> = { [K in keyof T as T[K] extends undefined ? never : K]: T[K] };

function withAllOperations(impl: Partial<DesktopBridge>): DesktopBridge {
  const unexpected: Record<string, () => Promise<never>> = {};
  for (const op of Object.keys(operations)) unexpected[op] = () => Promise.reject(new Error(`${op} not expected in this test`));
  return { ...unexpected, ...impl } as DesktopBridge;
}

/**
 * The store's API with the given operations (and live events); the rest reject if called. An
 * operation given as undefined is absent, as from an older server (the store leaves it out).
 * The result keeps the given operations' own types (a vi.fn() stays a Mock).
 */
export function fakeApi<T extends Partial<ClientApi>>(impl: T): ClientApi & Given<T>;
export function fakeApi(impl: Partial<ClientApi>): ClientApi {
  return withAllOperations(impl);
}

/** The desktop preload's bridge with the given operations (and pathForFile); the rest reject if called. */
export function fakeBridge<T extends Partial<DesktopBridge>>(impl: T): DesktopBridge & Given<T>;
export function fakeBridge(impl: Partial<DesktopBridge>): DesktopBridge {
  return withAllOperations(impl);
}

/** A complete Job: a running import of one archive to no nodes, unless `over` says otherwise. */
export function job(over: Partial<Job> = {}): Job {
  return {
    id: 'j1',
    kind: 'import',
    title: 'Import a.tar',
    state: 'running',
    createdAt: '2026-01-01T00:00:00Z',
    finishedAt: null,
    progress: 0,
    nodes: [],
    archive: { path: '/home/tech/a.tar', size: 1, sha256: null },
    options: { pin: true, removeArchive: false },
    ...over,
  };
}

/** An images report (images.report) with nothing in it: no images, no lost pins, k3s on containerd 2.0.4, no source of needs. */
export function imagesReport(): ResultOf<'images.report'> {
  return {
    images: [],
    lost: [],
    info: { containerdVersion: '2.0.4', containerdRevision: 'r', distro: 'k3s', distroVersion: null },
    needs: { basis: 'provenance', sources: [], noSource: 'no source of needs in this test', notes: [], missing: [], atRisk: 0 },
  };
}
