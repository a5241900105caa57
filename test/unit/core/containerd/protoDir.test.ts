// Where the .proto files come from: the repo's proto/ when run from source or out/, and
// <resources>/proto in a packaged app (electron-builder's extraResources).
import { cpSync, mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

const repoProto = path.resolve(import.meta.dirname, '../../../../proto');
const proc = process as unknown as { resourcesPath?: string };
const savedEnv = process.env.HOLDFAST_PROTO_DIR;

async function freshProtoDir(): Promise<string> {
  vi.resetModules(); // protoDir() caches its answer per module instance
  return (await import('../../../../src/core/containerd/protoDir')).protoDir();
}

function resourcesWithProto(): string {
  const res = mkdtempSync(path.join(os.tmpdir(), 'hf-res-'));
  cpSync(repoProto, path.join(res, 'proto'), { recursive: true });
  return res;
}

afterEach(() => {
  delete proc.resourcesPath;
  if (savedEnv === undefined) delete process.env.HOLDFAST_PROTO_DIR;
  else process.env.HOLDFAST_PROTO_DIR = savedEnv;
});

describe('protoDir', () => {
  it('finds the repo proto/ outside Electron', async () => {
    delete process.env.HOLDFAST_PROTO_DIR;
    expect(await freshProtoDir()).toBe(repoProto);
  });

  it('takes <resourcesPath>/proto in a packaged app', async () => {
    delete process.env.HOLDFAST_PROTO_DIR;
    const res = resourcesWithProto();
    proc.resourcesPath = res;
    expect(await freshProtoDir()).toBe(path.join(res, 'proto'));
  });

  it('goes on searching when resourcesPath has no proto/ (Electron run unpackaged)', async () => {
    delete process.env.HOLDFAST_PROTO_DIR;
    const res = mkdtempSync(path.join(os.tmpdir(), 'hf-res-'));
    mkdirSync(path.join(res, 'proto'));
    proc.resourcesPath = res;
    expect(await freshProtoDir()).toBe(repoProto);
  });

  it('lets HOLDFAST_PROTO_DIR win over both', async () => {
    const res = resourcesWithProto();
    const other = resourcesWithProto();
    proc.resourcesPath = res;
    process.env.HOLDFAST_PROTO_DIR = path.join(other, 'proto');
    expect(await freshProtoDir()).toBe(path.join(other, 'proto'));
  });
});
