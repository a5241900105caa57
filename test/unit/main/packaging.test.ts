// electron-builder.ts and build/: what the packages promise (offline, no rebuild, hardened
// runtime without a server entitlement, icons of every size) and where Electron comes from.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import config from '../../../electron-builder';

const root = path.resolve(import.meta.dirname, '../../..');
const build = (f: string) => path.join(root, 'build', f);
type DistHook = (o: { platformName: string; arch: string; version: string }) => string | null;
const electronDist = config.electronDist as unknown as DistHook;
const saved = { ...process.env };
afterEach(() => {
  for (const k of ['HOLDFAST_ELECTRON_DIST', 'ELECTRON_OVERRIDE_DIST_PATH']) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

/** Width and height from a PNG's IHDR chunk. */
function pngSize(file: string): [number, number] {
  const b = readFileSync(file);
  expect(b.subarray(1, 4).toString('latin1')).toBe('PNG');
  return [b.readUInt32BE(16), b.readUInt32BE(20)];
}

describe('desktop package configuration', () => {
  it('targets AppImage, deb, NSIS and dmg, publishes nothing and rebuilds no native module', () => {
    expect(config.linux?.target).toEqual(['AppImage', 'deb']);
    expect(config.win?.target).toEqual(['nsis']);
    expect(config.mac?.target).toEqual(['dmg']);
    expect(config.publish).toBeNull();
    expect(config.npmRebuild).toBe(false);
    expect(config.asar).toBe(true);
    expect(config.files).toEqual(expect.arrayContaining(['out/main/**', 'out/preload/**', 'out/renderer/**', '!**/*.node']));
    expect(config.extraResources).toEqual(expect.arrayContaining([expect.objectContaining({ from: 'proto', to: 'proto' }), expect.objectContaining({ from: 'out/cli', to: 'cli' })]));
  });

  it("flips Electron's fuses: no run-as-node, NODE_OPTIONS or inspector; the app only from an integrity-checked asar", () => {
    expect(config.electronFuses).toEqual({
      runAsNode: false,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
      enableCookieEncryption: true,
      grantFileProtocolExtraPrivileges: false,
    });
    // onlyLoadAppFromAsar needs an app.asar to load.
    expect(config.asar).toBe(true);
  });

  it('signs macOS with the hardened runtime and no network server entitlement', () => {
    expect(config.mac).toMatchObject({ hardenedRuntime: true, entitlements: 'build/entitlements.mac.plist', entitlementsInherit: 'build/entitlements.mac.plist' });
    const plist = readFileSync(build('entitlements.mac.plist'), 'utf8').replace(/<!--[\s\S]*?-->/g, '');
    const keys = [...plist.matchAll(/<key>([^<]+)<\/key>/g)].map((m) => m[1]);
    expect(keys).toEqual(['com.apple.security.cs.allow-jit']);
  });

  it('has the icon in every size the platforms use, and the Linux desktop entry', () => {
    for (const s of [16, 24, 32, 48, 64, 128, 256, 512]) expect(pngSize(build(`icons/${s}x${s}.png`))).toEqual([s, s]);
    expect(pngSize(build('icon.png'))).toEqual([1024, 1024]);
    const ico = readFileSync(build('icon.ico'));
    expect([ico.readUInt16LE(2), ico.readUInt16LE(4)]).toEqual([1, 7]); // an icon with 7 images
    const icns = readFileSync(build('icon.icns'));
    expect(icns.subarray(0, 4).toString('latin1')).toBe('icns');
    expect(icns.readUInt32BE(4)).toBe(icns.length);
    expect(config.linux?.desktop?.entry).toMatchObject({ Name: 'Holdfast', Categories: 'Development;System;', StartupWMClass: 'Holdfast', Terminal: 'false' });
    expect(config.linux?.desktop?.entry).not.toHaveProperty('Exec');
  });

  it('takes Electron from a local copy: release zips for any target, an unpacked copy for the host only', () => {
    const version = '45.5.0';
    const zips = mkdtempSync(path.join(os.tmpdir(), 'hf-zips-'));
    writeFileSync(path.join(zips, `electron-v${version}-win32-x64.zip`), '');
    process.env.HOLDFAST_ELECTRON_DIST = zips;
    delete process.env.ELECTRON_OVERRIDE_DIST_PATH;
    expect(electronDist({ platformName: 'win32', arch: 'x64', version })).toBe(zips);

    const unpacked = mkdtempSync(path.join(os.tmpdir(), 'hf-unpacked-'));
    const binary = { linux: 'electron', win32: 'electron.exe', darwin: 'Electron.app' }[process.platform as 'linux'];
    if (binary.endsWith('.app')) mkdirSync(path.join(unpacked, binary));
    else writeFileSync(path.join(unpacked, binary), '');
    process.env.HOLDFAST_ELECTRON_DIST = unpacked;
    expect(electronDist({ platformName: process.platform, arch: process.arch, version })).toBe(unpacked);
    // Never a host binary inside another platform's or arch's package.
    const other = process.platform === 'linux' ? 'win32' : 'linux';
    const otherArch = process.arch === 'x64' ? 'arm64' : 'x64';
    expect(electronDist({ platformName: other, arch: process.arch, version })).not.toBe(unpacked);
    expect(electronDist({ platformName: process.platform, arch: otherArch, version })).not.toBe(unpacked);
  });
});
