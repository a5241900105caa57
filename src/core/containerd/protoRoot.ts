// Our containerd .proto files as protobufjs reflection: what `npm run proto:json` writes
// proto/containerd/descriptors.json from, and what the unit tests hold the static codecs
// (codecs.generated.ts) and the method table (methods.ts) against. The client itself reads no
// reflection at run time: parsing .proto text cost 100–200 ms of CPU at every CLI start, and even
// the JSON form made protobufjs generate every codec anew in each process.
// The .proto files stay the source: they are what a reader compares with containerd's.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import protobuf from 'protobufjs';

import { PROTO_FILES, DESCRIPTORS_JSON } from './protoFiles';

export { PROTO_FILES, DESCRIPTORS_JSON };

/** Parses the .proto files in dir (field names as written: snake_case, like containerd's JSON). */
export function parseProtoFiles(dir: string): protobuf.Root {
  return new protobuf.Root().loadSync(
    PROTO_FILES.map((f) => path.join(dir, f)),
    { keepCase: true },
  );
}

/** The JSON form of parseProtoFiles(dir), as written to descriptors.json. */
export function descriptorsJson(dir: string): string {
  return `${JSON.stringify(parseProtoFiles(dir).toJSON(), null, 1)}\n`;
}

/** The definitions in dir: from descriptors.json when it is there, else parsed from the .proto files. */
export function loadProtoRoot(dir: string): protobuf.Root {
  const json = path.join(dir, DESCRIPTORS_JSON);
  const root = existsSync(json) ? protobuf.Root.fromJSON(JSON.parse(readFileSync(json, 'utf8')) as protobuf.INamespace) : parseProtoFiles(dir);
  return root;
}
