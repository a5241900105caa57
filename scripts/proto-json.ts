// `npm run proto:json`: writes proto/containerd/descriptors.json (the reflection the containerd
// client loads at start; see src/core/containerd/protoRoot.ts) and src/core/containerd/
// codecs.generated.ts (its messages' static codecs; see scripts/protoCodecs.ts) from the .proto
// files. Run it after changing a .proto file: a unit test fails while they disagree.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { DESCRIPTORS_JSON, descriptorsJson } from '../src/core/containerd/protoRoot';
import { CODECS_FILE, codecsSource } from './protoCodecs';

const dir = path.resolve(import.meta.dirname, '..', 'proto', 'containerd');
writeFileSync(path.join(dir, DESCRIPTORS_JSON), descriptorsJson(dir));
console.log(`wrote proto/containerd/${DESCRIPTORS_JSON}`);
writeFileSync(CODECS_FILE, await codecsSource(dir));
console.log(`wrote ${path.relative(process.cwd(), CODECS_FILE)}`);
