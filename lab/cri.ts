// A small CRI client for tests: asks a lab node's containerd what kubelet would ask it
// (runtime.v1 ImageService over the node's containerd socket, host side), so a test asserts
// what kubelet's image garbage collector sees — not only which labels containerd stores.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { join } from 'node:path';
import type { LabNodeView } from './node.ts';

export interface CriImage {
  /** Image id: the config digest CRI groups every reference of one image by. */
  id: string;
  repoTags: string[];
  repoDigests: string[];
  size: number;
  /** What kubelet's image GC honours: a pinned image is never garbage-collected. */
  pinned: boolean;
}

/* oxlint-disable typescript/no-explicit-any -- grpc-js loads the services at run time: untyped stubs and messages */
let ctor: grpc.ServiceClientConstructor | undefined;
function imageServiceCtor(): grpc.ServiceClientConstructor {
  if (ctor) return ctor;
  const def = protoLoader.loadSync(join(import.meta.dirname, 'proto', 'cri.proto'), { keepCase: true, longs: Number, defaults: true });
  const pkg = grpc.loadPackageDefinition(def) as any;
  ctor = pkg.runtime.v1.ImageService as grpc.ServiceClientConstructor;
  return ctor;
}

function toImage(i: any): CriImage {
  return {
    id: i.id,
    repoTags: [...(i.repo_tags ?? [])],
    repoDigests: [...(i.repo_digests ?? [])],
    size: Number(i.size ?? 0),
    pinned: Boolean(i.pinned),
  };
}

function call<T>(node: LabNodeView, method: 'ListImages' | 'ImageStatus', req: unknown): Promise<T> {
  const Ctor = imageServiceCtor();
  const client = new Ctor(`unix:${node.hostSocket}`, grpc.credentials.createInsecure()) as grpc.Client & Record<string, any>;
  return new Promise<T>((resolve, reject) => {
    client[method](req, { deadline: Date.now() + 10_000 }, (err: grpc.ServiceError | null, res: T) => {
      client.close();
      if (err) reject(new Error(`${node.name}: CRI ${method}: ${err.details || err.message}`));
      else resolve(res);
    });
  });
}

/** Every image CRI reports for the node (kubelet's view; CRI serves the k8s.io namespace). */
export async function criImages(node: LabNodeView): Promise<CriImage[]> {
  const res = await call<{ images: unknown[] }>(node, 'ListImages', {});
  return res.images.map(toImage);
}

/** CRI's status of one reference (tag, digest ref or image id), or null when CRI has none. */
export async function criImageStatus(node: LabNodeView, ref: string): Promise<CriImage | null> {
  const res = await call<{ image: unknown | null }>(node, 'ImageStatus', { image: { image: ref } });
  return res.image ? toImage(res.image) : null;
}

/**
 * Whether kubelet would see `ref`'s image as pinned. CRI updates its image cache from
 * containerd's image events, a moment after each label change: this polls (bounded) until CRI
 * reports `want`, then returns what it reports last.
 */
export async function criPinned(node: LabNodeView, ref: string, want?: boolean, timeoutMs = 5000): Promise<boolean | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const img = await criImageStatus(node, ref);
    const got = img ? img.pinned : null;
    if (want === undefined || got === want || Date.now() > deadline) return got;
    await new Promise((r) => setTimeout(r, 50));
  }
}
