// `npm run proto:json`: writes proto/containerd/descriptors.json from the .proto files beside it
// (what the containerd client loads at start; see src/core/containerd/protoRoot.ts). Run it after
// changing a .proto file: a unit test fails while the two disagree.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { DESCRIPTORS_JSON, descriptorsJson } from '../src/core/containerd/protoRoot';

const dir = path.resolve(import.meta.dirname, '..', 'proto', 'containerd');
writeFileSync(path.join(dir, DESCRIPTORS_JSON), descriptorsJson(dir));
console.log(`wrote proto/containerd/${DESCRIPTORS_JSON}`);
