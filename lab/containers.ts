// Container records for lab nodes: kubelet's image GC and Holdfast's prune treat an image a
// container record names as in use. A real container needs an unpacked snapshot and a task;
// a record is enough for "in use", so this creates just the record (id, image, runtime, labels
// and an empty OCI spec, which containerd requires but does not read) through containerd's
// Containers API on the node's host-side socket. Test tooling only.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import type { LabNodeHandle } from './node.ts';

/** What CRI puts on the records it creates: kubelet sees only containers and sandboxes with it. */
export const CRI_KIND_LABEL = 'io.cri-containerd.kind';

export interface LabContainerSpec {
  id: string;
  /** The image reference the record names (a tag, a digest reference or an image id). */
  image: string;
  labels?: Record<string, string>;
  /** Namespace; default k8s.io (where CRI keeps kubelet's containers). */
  namespace?: string;
}

/* oxlint-disable typescript/no-explicit-any -- grpc-js loads the services at run time: untyped stubs and messages */
let ctor: grpc.ServiceClientConstructor | undefined;
function containersCtor(): grpc.ServiceClientConstructor {
  if (ctor) return ctor;
  ctor = (grpc.loadPackageDefinition(containersDefinition()) as any).containerd.services.containers.v1.Containers as grpc.ServiceClientConstructor;
  return ctor;
}

/**
 * Holdfast's own containers.proto (one home for the container record: id, labels, image,
 * runtime), plus what only the lab needs and the app leaves out on purpose, since it only lists
 * records: the Create and Delete calls, and the spec (field 5) containerd refuses a container
 * without but stores unread. Field numbers are containerd's.
 */
function containersDefinition(): protoLoader.PackageDefinition {
  const dir = join(import.meta.dirname, '..', 'proto', 'containerd');
  const root = new protobuf.Root().loadSync([join(dir, 'containers.proto'), 'google/protobuf/any.proto', 'google/protobuf/empty.proto'], {
    keepCase: true,
  });
  const v1 = root.lookup('containerd.services.containers.v1') as protobuf.Namespace;
  root.lookupType('containerd.services.containers.v1.Container').add(new protobuf.Field('spec', 5, 'google.protobuf.Any'));
  v1.add(new protobuf.Type('CreateContainerRequest').add(new protobuf.Field('container', 1, 'Container')));
  v1.add(new protobuf.Type('CreateContainerResponse').add(new protobuf.Field('container', 1, 'Container')));
  v1.add(new protobuf.Type('DeleteContainerRequest').add(new protobuf.Field('id', 1, 'string')));
  const service = root.lookupService('containerd.services.containers.v1.Containers');
  service.add(new protobuf.Method('Create', 'rpc', 'CreateContainerRequest', 'CreateContainerResponse'));
  service.add(new protobuf.Method('Delete', 'rpc', 'DeleteContainerRequest', 'google.protobuf.Empty'));
  root.resolveAll();
  return protoLoader.fromJSON(root.toJSON(), { keepCase: true, longs: Number, defaults: true });
}

function call(node: LabNodeHandle, namespace: string, method: 'Create' | 'Delete', req: unknown): Promise<unknown> {
  const Ctor = containersCtor();
  const client = new Ctor(`unix:${node.hostSocket}`, grpc.credentials.createInsecure()) as grpc.Client & Record<string, any>;
  const md = new grpc.Metadata();
  md.set('containerd-namespace', namespace);
  return new Promise((resolve, reject) => {
    client[method](req, md, { deadline: Date.now() + 10_000 }, (err: grpc.ServiceError | null, res: unknown) => {
      client.close();
      if (err) reject(new Error(`${node.name}: Containers.${method}: ${err.details || err.message}`));
      else resolve(res);
    });
  });
}

const OCI_SPEC_TYPE = 'types.containerd.io/opencontainers/runtime-spec/1/Spec';

/** Creates a container record naming `spec.image` (no snapshot, no task: nothing runs). */
export async function createContainerRecord(node: LabNodeHandle, spec: LabContainerSpec): Promise<void> {
  await call(node, spec.namespace ?? 'k8s.io', 'Create', {
    container: {
      id: spec.id,
      image: spec.image,
      labels: spec.labels ?? {},
      runtime: { name: 'io.containerd.runc.v2' },
      spec: { type_url: OCI_SPEC_TYPE, value: Buffer.from(JSON.stringify({ ociVersion: '1.1.0' })) },
    },
  });
}

export async function deleteContainerRecord(node: LabNodeHandle, id: string, namespace = 'k8s.io'): Promise<void> {
  await call(node, namespace, 'Delete', { id });
}
