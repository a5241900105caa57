// Our containerd .proto files and the JSON written from them (see protoRoot.ts, methods.ts).

/** The services we use (types.proto and Google's well-known types come in through their imports). */
export const PROTO_FILES = [
  'version.proto',
  'namespaces.proto',
  'images.proto',
  'content.proto',
  'events.proto',
  'leases.proto',
  'containers.proto',
  'introspection.proto',
  'snapshots.proto',
  'diff.proto',
];

export const DESCRIPTORS_JSON = 'descriptors.json';
