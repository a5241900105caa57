// The desktop package's app directory, built by electron-builder itself from electron-builder.ts.
//
// Why this route: electron-builder cannot run without an Electron distribution to copy, and none
// can be downloaded here. Its `electronDist` option takes a local unpacked Electron, so the test
// hands it a stand-in (an `electron` placeholder file with a fuse wire, a locales dir) through
// HOLDFAST_ELECTRON_DIST — the same path electronDist() in the config takes for a real one. Every
// step that decides what the package CONTAINS is electron-builder's own and runs for real: the
// config file, the `files` globs, its production-dependency collector, npmRebuild: false, asar
// packing and extraResources. Only the Electron runtime (which the app directory merely sits
// beside) is fake, so the test checks the app directory and, of the executable, only the fuse
// wire electron-builder flips in it (electronFuses). Building the
// file set by hand with the same globs would test a copy of electron-builder, not electron-builder.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { META_CONTENT_SECURITY_POLICY } from '../../src/shared/webSecurity';

const root = path.resolve(import.meta.dirname, '../..');
const bin = (name: string) => path.join(root, 'node_modules', '.bin', name);
// @electron/asar is what electron-builder packs with; take the copy app-builder-lib uses.
const asar = createRequire(createRequire(path.join(root, 'package.json')).resolve('app-builder-lib/package.json'))('@electron/asar') as {
  listPackage(archive: string): string[];
  statFile(archive: string, file: string): { size?: number; files?: unknown };
  extractFile(archive: string, file: string): Buffer;
  extractAll(archive: string, dest: string): void;
};
// @electron/fuses, the copy electron-builder flips the fuses with, and the sentinel it looks for.
const fusesRequire = createRequire(createRequire(createRequire(path.join(root, 'package.json')).resolve('app-builder-lib/package.json')).resolve('@electron/fuses'));
const fuses = fusesRequire('@electron/fuses') as { getCurrentFuseWire(binary: string): Promise<Record<string, string | number>> };
const { SENTINEL } = fusesRequire('./constants.js') as { SENTINEL: string };
/** Electron 45's fuse wire as released: version 1, nine fuses (1 on, 0 off), the last WasmTrapHandlers. */
const RELEASED_WIRE = [1, 9, ...'101100011'].map((c) => (typeof c === 'number' ? c : c.charCodeAt(0)));

const work = mkdtempSync(path.join(os.tmpdir(), 'hf-pack-'));
let appDir: string; // dist/linux-unpacked (the directory AppImage and deb are made from)
let binary: string; // the stand-in Electron, renamed to the launcher's name
let archive: string;
let files: Set<string>; // paths inside app.asar, without the leading slash

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  // Without vitest's variables: electron-builder silences its own log when it sees VITEST.
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST')));
  const r = spawnSync(cmd, args, { cwd: root, env: { ...base, ...env }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`${path.basename(cmd)} ${args.join(' ')} exited ${r.status}\n${r.stdout}\n${r.stderr}`);
  return r.stdout + r.stderr;
}

function walk(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? walk(full, base) : [path.relative(base, full).split(path.sep).join('/')];
  });
}

const dirSize = (dir: string) => walk(dir).reduce((n, f) => n + statSync(path.join(dir, f)).size, 0);
const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;

beforeAll(() => {
  run(bin('electron-vite'), ['build']);
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  // The compiled CLI is another build's output; build it when that build exists, as `npm run dist` does.
  if (pkg.scripts['build:cli']) run('npm', ['run', 'build:cli']);

  const standIn = path.join(work, 'electron-standin');
  mkdirSync(path.join(standIn, 'locales'), { recursive: true });
  mkdirSync(path.join(standIn, 'resources'));
  // A real Electron carries its fuse wire after a sentinel; electron-builder flips it (electronFuses).
  const script = '#!/bin/sh\necho "stand-in for the Electron binary (package test)" >&2\nexit 1\n';
  writeFileSync(path.join(standIn, 'electron'), Buffer.concat([Buffer.from(script), Buffer.from(SENTINEL), Buffer.from(RELEASED_WIRE)]));
  chmodSync(path.join(standIn, 'electron'), 0o755);
  writeFileSync(path.join(standIn, 'locales', 'en-US.pak'), '');
  writeFileSync(path.join(standIn, 'LICENSE'), '');

  const out = path.join(work, 'dist');
  const log = run(bin('electron-builder'), ['--linux', 'dir', '--publish', 'never', `-c.directories.output=${out}`], { HOLDFAST_ELECTRON_DIST: standIn });
  expect(log).toContain('loaded configuration');
  expect(log).toContain('npmRebuild is set to false'); // the native modules were not rebuilt
  const unpacked = readdirSync(out).find((d) => /^linux(-[a-z0-9]+)?-unpacked$/.test(d));
  expect(unpacked).toBeDefined();
  appDir = path.join(out, unpacked!);
  binary = path.join(appDir, 'holdfast-desktop');
  archive = path.join(appDir, 'resources', 'app.asar');
  files = new Set(asar.listPackage(archive).map((f) => f.replace(/^[\\/]/, '').split(path.sep).join('/')));

  const asarBytes = statSync(archive).size;
  const resources = dirSize(path.join(appDir, 'resources'));
  const pkgs = topPackages();
  console.log(
    `packed app directory (without Electron itself): resources/ ${mib(resources)} — app.asar ${mib(asarBytes)} ` +
      `(${files.size} entries, ${pkgs.size} packages: ${[...pkgs].sort().join(', ')}); proto/ + cli/ ${mib(resources - asarBytes)}`,
  );
}, 600_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

const isFile = (f: string) => files.has(f) && asar.statFile(archive, f).files === undefined;
const topPackages = () => {
  const names = new Set<string>();
  for (const f of files) {
    const m = /^node_modules\/((?:@[^/]+\/)?[^/]+)\/package\.json$/.exec(f);
    if (m) names.add(m[1]!);
  }
  return names;
};

describe('the packed app directory', () => {
  it('holds the built main, preload and renderer, byte for byte, and no source maps', () => {
    for (const part of ['out/main', 'out/preload', 'out/renderer']) {
      const built = walk(path.join(root, part)).filter((f) => !f.endsWith('.map'));
      expect(built.length).toBeGreaterThan(0);
      for (const f of built) {
        const inAsar = `${part}/${f}`;
        expect(isFile(inAsar), inAsar).toBe(true);
        expect(asar.extractFile(archive, inAsar).equals(readFileSync(path.join(root, part, f))), inAsar).toBe(true);
      }
    }
    expect(isFile('out/main/index.js') && isFile('out/preload/index.cjs') && isFile('out/renderer/index.html')).toBe(true);
    expect([...files].filter((f) => f.endsWith('.map'))).toEqual([]);
    const pkg = JSON.parse(asar.extractFile(archive, 'package.json').toString('utf8')) as { main: string; type: string };
    expect(pkg).toMatchObject({ main: 'out/main/index.js', type: 'module' });
    // Nothing but the app and its dependencies: no sources, tests, lab, configs.
    expect([...files].filter((f) => !/^(out|node_modules)(\/|$)/.test(f))).toEqual(['package.json']);
  });

  it("has Electron's fuses flipped as electron-builder.ts says, the rest as Electron ships them", async () => {
    const wire = await fuses.getCurrentFuseWire(binary);
    const [on, off] = ['1'.charCodeAt(0), '0'.charCodeAt(0)];
    expect(wire).toEqual({
      version: '1',
      0: off, // RunAsNode
      1: on, // EnableCookieEncryption
      2: off, // EnableNodeOptionsEnvironmentVariable
      3: off, // EnableNodeCliInspectArguments
      4: on, // EnableEmbeddedAsarIntegrityValidation
      5: on, // OnlyLoadAppFromAsar
      6: off, // LoadBrowserProcessSpecificV8Snapshot (not set: as released)
      7: off, // GrantFileProtocolExtraPrivileges
      8: on, // WasmTrapHandlers (not set: as released)
    });
  });

  it('has the CSP <meta> in the packed index.html, written by the build from the one policy', () => {
    const html = asar.extractFile(archive, 'out/renderer/index.html').toString('utf8');
    const metas = [...html.matchAll(/<meta http-equiv="Content-Security-Policy" content="([^"]*)"/g)].map((m) => m[1]);
    expect(metas).toEqual([META_CONTENT_SECURITY_POLICY]);
    // Before any script or stylesheet it governs.
    expect(html.indexOf('Content-Security-Policy')).toBeLessThan(Math.min(html.indexOf('<script'), html.indexOf('<link')));
  });

  it('ships the .proto files and their descriptors.json beside app.asar, where protoDir() looks when packaged', () => {
    const protos = walk(path.join(root, 'proto')).filter((f) => f.endsWith('.proto') || f.endsWith('/descriptors.json'));
    expect(protos).toContain('containerd/images.proto');
    expect(protos).toContain('containerd/descriptors.json');
    const shipped = path.join(appDir, 'resources', 'proto');
    expect(walk(shipped).sort()).toEqual(protos.sort());
    for (const f of protos) expect(readFileSync(path.join(shipped, f)).equals(readFileSync(path.join(root, 'proto', f)))).toBe(true);
  });

  it('ships the compiled CLI from out/cli in resources/cli (no source maps), when it is built', () => {
    const cliOut = path.join(root, 'out', 'cli');
    const shipped = path.join(appDir, 'resources', 'cli');
    if (!existsSync(cliOut)) {
      expect(existsSync(shipped)).toBe(false);
      return;
    }
    const expected = walk(cliOut).filter((f) => !f.endsWith('.map')).sort();
    expect(expected.length).toBeGreaterThan(0);
    expect(walk(shipped).sort()).toEqual(expected);
  });

  it('holds production dependencies only: no dev tools, no native binaries', () => {
    const pkgs = topPackages();
    for (const dev of ['tsx', 'esbuild', 'vite', 'electron', 'electron-vite', 'electron-builder', 'vitest', '@playwright/test', 'playwright', 'playwright-core', 'typescript', 'react', 'react-dom', 'zustand', '@vitejs/plugin-react', 'rolldown', 'app-builder-lib', 'cpu-features', 'nan']) {
      expect(pkgs.has(dev), dev).toBe(false);
    }
    expect([...pkgs].filter((p) => p.startsWith('@esbuild/') || p.startsWith('@rolldown/') || p.startsWith('@types/'))).toEqual([]);
    // ssh2's optional native crypto and every other compiled addon stay out (pure-JS path).
    expect([...files].filter((f) => /\.(node|bare)$/.test(f) || /\/build\/Release\//.test(f))).toEqual([]);
    expect(isFile('node_modules/ssh2/lib/protocol/crypto/poly1305.js')).toBe(true); // its WebAssembly fallback stays
  });

  it('resolves every package the main bundle imports, and each of their dependencies, inside the asar', () => {
    // index.js and the chunks it loads lazily (the core that reaches a node loads on demand)
    const main = [...files]
      .filter((f) => /^out\/main\/.+\.js$/.test(f))
      .map((f) => asar.extractFile(archive, f).toString('utf8'))
      .join('\n');
    const specifiers = new Set([...main.matchAll(/(?:from\s*|import\(\s*|require\(\s*)["']([^"'./][^"']*)["']/g)].map((m) => m[1]!));
    const builtins = new Set(builtinModules);
    const packageOf = (s: string) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]!);
    const isPackageName = (s: string) => /^(@[a-z0-9._-]+\/)?[a-z0-9._-]+(\/[\w./-]+)?$/i.test(s);
    const imported = [...specifiers].filter((s) => isPackageName(s) && !s.startsWith('node:') && !builtins.has(s) && s !== 'electron').map(packageOf);
    expect(imported).toEqual(expect.arrayContaining(['ssh2', '@grpc/grpc-js', 'protobufjs', 'zod', 'electron-log']));

    // Node's lookup: <dir>/node_modules/<name>, then each parent's node_modules.
    const resolveFrom = (fromDir: string, name: string): string | null => {
      for (let d = fromDir; ; d = d.includes('/node_modules/') ? d.slice(0, d.lastIndexOf('/node_modules/')) : '') {
        const candidate = `${d ? `${d}/` : ''}node_modules/${name}`;
        if (files.has(`${candidate}/package.json`)) return candidate;
        if (!d) return null;
      }
    };
    const missing: string[] = [];
    const seen = new Set<string>();
    const visit = (dir: string) => {
      if (seen.has(dir)) return;
      seen.add(dir);
      const pkg = JSON.parse(asar.extractFile(archive, `${dir}/package.json`).toString('utf8')) as { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string> };
      for (const dep of Object.keys(pkg.dependencies ?? {})) {
        if (pkg.optionalDependencies && dep in pkg.optionalDependencies) continue;
        // Type declarations (protobufjs lists @types/node) are left out on purpose: never loaded.
        if (dep.startsWith('@types/')) continue;
        const found = resolveFrom(dir, dep);
        if (found) visit(found);
        else missing.push(`${dir} → ${dep}`);
      }
    };
    for (const name of new Set(imported)) {
      const found = resolveFrom('', name);
      if (found) visit(found);
      else missing.push(`out/main/index.js → ${name}`);
    }
    expect(missing).toEqual([]);
  });

  it('runs ssh2 from the package on its pure-JavaScript crypto, and loads the shipped protos with the packed protobufjs', () => {
    const extracted = path.join(work, 'extracted');
    asar.extractAll(archive, extracted);
    const proto = path.join(appDir, 'resources', 'proto');
    // A child Node with only the extracted app on its resolution path: a loopback SSH handshake
    // with chacha20-poly1305 (the poly1305 WebAssembly) and an ed25519 host key, then the protos
    // and a gRPC client class made from them.
    const script = `
      const ssh2 = require('ssh2');
      const { bindingAvailable } = require('ssh2/lib/protocol/crypto.js');
      const protobuf = require('protobufjs');
      const grpc = require('@grpc/grpc-js');
      const dir = ${JSON.stringify(path.join(proto, 'containerd'))};
      // As src/core/containerd/protoRoot.ts loads them: descriptors.json, then a grpc-js client
      // class for the Images service built from it (client.ts).
      const root = protobuf.Root.fromJSON(JSON.parse(require('fs').readFileSync(require('path').join(dir, 'descriptors.json'), 'utf8')));
      const svc = root.lookupService('containerd.services.images.v1.Images');
      const methods = {};
      for (const m of svc.methodsArray) {
        m.resolve();
        methods[m.name] = { path: '/containerd.services.images.v1.Images/' + m.name, requestStream: false, responseStream: false,
          requestSerialize: (o) => Buffer.from(m.resolvedRequestType.encode(m.resolvedRequestType.fromObject(o)).finish()),
          responseDeserialize: (b) => m.resolvedResponseType.toObject(m.resolvedResponseType.decode(b)) };
      }
      const Images = grpc.makeGenericClientConstructor(methods, 'containerd.services.images.v1.Images');
      const def = { 'containerd.services.images.v1.Images': typeof Images.prototype.List };
      // ssh2's generator writes a malformed ed25519 pair about once in 230 (test/support/sshKeys.ts).
      let hostKey;
      do hostKey = ssh2.utils.generateKeyPairSync('ed25519').private; while (ssh2.utils.parseKey(hostKey) instanceof Error);
      const hostPub = ssh2.utils.parseKey(hostKey).getPublicSSH();
      const server = new ssh2.Server({ hostKeys: [hostKey] }, (client) => {
        client.on('authentication', (ctx) => ctx.accept()).on('ready', () => {}).on('error', () => {});
      });
      server.listen(0, '127.0.0.1', () => {
        const c = new ssh2.Client();
        c.on('handshake', (n) => {
          c.on('ready', () => {
            console.log(JSON.stringify({ bindingAvailable, cipher: n.cs.cipher, services: Object.keys(def).filter((k) => def[k] === 'function') }));
            c.end(); server.close();
          });
        }).on('error', (e) => { console.error(e.message); process.exit(1); });
        c.connect({ host: '127.0.0.1', port: server.address().port, username: 'u', password: 'x',
          hostVerifier: (key) => key.equals(hostPub), algorithms: { cipher: ['chacha20-poly1305@openssh.com'] } });
      });`;
    const out = execFileSync(process.execPath, ['-e', script], { cwd: path.join(extracted, 'out', 'main'), env: { ...process.env, NODE_PATH: '' }, encoding: 'utf8', timeout: 30_000 });
    expect(JSON.parse(out)).toEqual({ bindingAvailable: false, cipher: 'chacha20-poly1305@openssh.com', services: ['containerd.services.images.v1.Images'] });
  });
});
