// Image records for the lab's k3s emulation, through containerd's Images API on a node's
// host-side socket. `ctr images import` names tag-only OCI entries `import-<date>:<tag>` where
// k3s's importer (containerd's client.Import without a ref translator) names them `<tag>`; the
// emulation renames them with these calls, exactly as client.Import stores a name: Update with
// mask `target` (the labels an existing image carries are kept), Create when it does not exist.
// Test tooling only.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { join } from 'node:path';
import type { LabNodeView } from './node.ts';

export interface LabDescriptor {
  media_type: string;
  digest: string;
  size: number;
  annotations: Record<string, string>;
}

export interface LabImageRecord {
  name: string;
  labels: Record<string, string>;
  target: LabDescriptor;
}

/* oxlint-disable typescript/no-explicit-any -- grpc-js loads the services at run time: untyped stubs and messages */
let ctor: grpc.ServiceClientConstructor | undefined;
function imagesCtor(): grpc.ServiceClientConstructor {
  if (ctor) return ctor;
  // Holdfast's own images.proto (it has Get, Create, Update and Delete): one copy of the service.
  const dir = join(import.meta.dirname, '..', 'proto', 'containerd');
  const def = protoLoader.loadSync(join(dir, 'images.proto'), { keepCase: true, longs: Number, defaults: true, includeDirs: [dir] });
  ctor = (grpc.loadPackageDefinition(def) as any).containerd.services.images.v1.Images as grpc.ServiceClientConstructor;
  return ctor;
}

const NOT_FOUND = 5;

function call<T>(node: LabNodeView, method: 'Get' | 'Create' | 'Update' | 'Delete', req: unknown): Promise<T> {
  const Ctor = imagesCtor();
  const client = new Ctor(`unix:${node.hostSocket}`, grpc.credentials.createInsecure()) as grpc.Client & Record<string, any>;
  const md = new grpc.Metadata();
  md.set('containerd-namespace', 'k8s.io');
  return new Promise<T>((resolve, reject) => {
    client[method](req, md, { deadline: Date.now() + 10_000 }, (err: grpc.ServiceError | null, res: T) => {
      client.close();
      if (err) reject(Object.assign(new Error(`${node.name}: Images.${method}: ${err.details || err.message}`), { code: err.code }));
      else resolve(res);
    });
  });
}

/** The image record named `name`, or null when there is none. */
export async function getImageRecord(node: LabNodeView, name: string): Promise<LabImageRecord | null> {
  try {
    const res = await call<{ image: LabImageRecord }>(node, 'Get', { name });
    return res.image;
  } catch (e) {
    if ((e as { code?: number }).code === NOT_FOUND) return null;
    throw e;
  }
}

/** What containerd's client.Import does with each name it imports: Update target, else Create. */
export async function storeImageName(node: LabNodeView, name: string, target: LabDescriptor): Promise<void> {
  try {
    await call(node, 'Update', { image: { name, labels: {}, target }, update_mask: { paths: ['target'] } });
  } catch (e) {
    if ((e as { code?: number }).code !== NOT_FOUND) throw e;
    await call(node, 'Create', { image: { name, labels: {}, target } });
  }
}

export async function deleteImageRecord(node: LabNodeView, name: string): Promise<void> {
  await call(node, 'Delete', { name, sync: false });
}
