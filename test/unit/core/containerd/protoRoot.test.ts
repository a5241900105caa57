import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DESCRIPTORS_JSON, descriptorsJson, loadProtoRoot, parseProtoFiles } from '../../../../src/core/containerd/protoRoot';
import codecs from '../../../../src/core/containerd/codecs.generated';
import { CODECS_FILE, codecsSource } from '../../../../scripts/protoCodecs';

const dir = path.resolve(import.meta.dirname, '..', '..', '..', '..', 'proto', 'containerd');

describe('containerd definitions loaded from descriptors.json', () => {
  it('are the .proto files (run `npm run proto:json` after changing one)', () => {
    expect(readFileSync(path.join(dir, DESCRIPTORS_JSON), 'utf8')).toBe(descriptorsJson(dir));
  });

  it('encode and decode exactly as the parsed .proto files do', () => {
    const fromJson = loadProtoRoot(dir);
    const parsed = parseProtoFiles(dir);
    const name = 'containerd.services.images.v1.ListImagesResponse';
    const sample = {
      images: [
        {
          name: 'docker.io/rancher/mirrored-pause:3.6',
          labels: { 'io.cattle.k3s.pinned': 'pinned', 'io.cri-containerd.pinned': 'pinned' },
          target: { media_type: 'application/vnd.docker.distribution.manifest.list.v2+json', digest: `sha256:${'7'.repeat(64)}`, size: 2213, annotations: {} },
          created_at: { seconds: 1_764_000_000, nanos: 123_000_000 },
        },
      ],
    };
    const a = fromJson.lookupType(name);
    const b = parsed.lookupType(name);
    const bytes = a.encode(a.fromObject(sample)).finish();
    expect(Buffer.from(bytes)).toEqual(Buffer.from(b.encode(b.fromObject(sample)).finish()));
    const opts = { longs: Number, enums: String, defaults: true, oneofs: true };
    expect(a.toObject(a.decode(bytes), opts)).toEqual(b.toObject(b.decode(bytes), opts));
    for (const svc of ['images.v1.Images', 'content.v1.Content', 'events.v1.Events', 'introspection.v1.Introspection']) {
      const full = `containerd.services.${svc}`;
      expect(fromJson.lookupService(full).methodsArray.map((m) => m.name)).toEqual(parsed.lookupService(full).methodsArray.map((m) => m.name));
    }
  });

  it('codecs.generated.ts is what pbjs writes for the .proto files (run `npm run proto:json` after changing one)', async () => {
    expect(readFileSync(CODECS_FILE, 'utf8')).toBe(await codecsSource(dir));
  }, 30_000);

  it('the static codecs encode and decode every message as the reflection does', () => {
    const parsed = parseProtoFiles(dir);
    const opts = { longs: Number, enums: String, defaults: true, oneofs: true };
    const types: string[] = [];
    const walk = (ns: { nestedArray: unknown[] }) => {
      for (const n of ns.nestedArray as { fullName: string; nestedArray?: unknown[]; fieldsArray?: unknown[] }[]) {
        if (n.fieldsArray) types.push(n.fullName.slice(1));
        if (n.nestedArray) walk(n as { nestedArray: unknown[] });
      }
    };
    walk(parsed);
    expect(types.length).toBeGreaterThan(40);
    const sample = {
      images: [
        {
          name: 'docker.io/rancher/mirrored-pause:3.6',
          labels: { 'io.cattle.k3s.pinned': 'pinned', 'io.cri-containerd.pinned': 'pinned' },
          target: { media_type: 'application/vnd.docker.distribution.manifest.list.v2+json', digest: `sha256:${'7'.repeat(64)}`, size: 9_007_199_254_740_991, annotations: { a: 'b' } },
          created_at: { seconds: 1_764_000_000, nanos: 123_000_000 },
        },
      ],
    };
    for (const full of types) {
      const reflected = parsed.lookupType(full);
      // oxlint-disable-next-line typescript/no-explicit-any -- generated module, untyped
      const fixed = full.split('.').reduce<any>((o, k) => o?.[k], codecs);
      expect(typeof fixed?.decode, full).toBe('function');
      const object = full.endsWith('ListImagesResponse') ? sample : {};
      const bytes = Buffer.from(reflected.encode(reflected.fromObject(object)).finish());
      expect(Buffer.from(fixed.encode(fixed.fromObject(object)).finish()), full).toEqual(bytes);
      expect(fixed.toObject(fixed.decode(bytes), opts), full).toEqual(reflected.toObject(reflected.decode(bytes), opts));
    }
  });
});
