// electron-builder reads this file by its name (electron-builder.ts). Desktop packages: AppImage and deb (Linux), NSIS (Windows), dmg (macOS). `npm run dist` builds
// for the host OS, `npm run pack:dir` only the unpacked app directory (dist/<os>-unpacked).
//
// Offline by design: `publish: null` (no update feed, no app-update.yml, no upload), nothing in
// the app fetches anything at run time, and Electron's own binaries come from a local copy when
// one is named (see electronDist below and docs/install.md).
import type { Configuration } from 'electron-builder';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(fileURLToPath(import.meta.url));

/** build/linux/holdfast.desktop's [Desktop Entry] keys (Exec and Icon are electron-builder's). */
function desktopEntry(): Record<string, string> {
  const entry: Record<string, string> = {};
  for (const line of readFileSync(path.join(root, 'build/linux/holdfast.desktop'), 'utf8').split(/\r?\n/)) {
    const m = /^([A-Za-z][A-Za-z0-9-]*)=(.*)$/.exec(line.trim());
    if (m && m[1] !== 'Exec' && m[1] !== 'Icon') entry[m[1]!] = m[2]!;
  }
  return entry;
}

const BINARY: Partial<Record<string, string>> = { linux: 'electron', win32: 'electron.exe', darwin: 'Electron.app', mas: 'Electron.app' };

/**
 * Where electron-builder takes Electron from, per target platform and arch, instead of
 * downloading it. First match wins:
 *  - HOLDFAST_ELECTRON_DIST: a directory of release zips (electron-v<version>-<platform>-<arch>.zip,
 *    e.g. an @electron/get cache; any target), or an unpacked Electron for the host;
 *  - ELECTRON_OVERRIDE_DIST_PATH (the electron package's own override) and
 *    node_modules/electron/dist (after `npx install-electron`): an unpacked Electron for the host.
 * An unpacked directory is used only for the host's platform and arch: copying a Linux binary
 * into a Windows installer would build a broken package without a word. Nothing found: null,
 * and electron-builder downloads the release (where a network is).
 */
function electronDist(o: { platformName: string; arch: string; version: string }): string | null {
  const zip = `electron-v${o.version}-${o.platformName}-${o.arch}.zip`;
  const host = o.platformName === process.platform && o.arch === process.arch;
  const candidates = [process.env.HOLDFAST_ELECTRON_DIST, process.env.ELECTRON_OVERRIDE_DIST_PATH, path.join(root, 'node_modules/electron/dist')];
  for (const dir of candidates) {
    if (!dir || !existsSync(dir)) continue;
    if (readdirSync(dir).includes(zip)) return dir;
    const binary = BINARY[o.platformName];
    if (host && binary && existsSync(path.join(dir, binary))) return dir;
  }
  return null;
}

const config: Configuration = {
  appId: 'io.holdfast.desktop',
  productName: 'Holdfast',
  copyright: 'Apache-2.0',
  directories: { output: 'dist', buildResources: 'build' },
  // The hook's type says string, but electron-builder takes null as "no local copy: download".
  electronDist: electronDist as (o: { platformName: string; arch: string; version: string }) => string,
  publish: null,

  // What goes into app.asar: the built app and package.json. electron-builder adds the
  // production dependencies itself (never devDependencies: electron, vite, vitest, playwright,
  // typescript, electron-builder…); the patterns below trim what the app does not load.
  files: [
    'package.json',
    'out/main/**',
    'out/preload/**',
    'out/renderer/**',
    '!**/*.map',
    // tsx (with esbuild), commander and cli-table3 serve the CLI run from source; the app never
    // loads them, and the CLI shipped in the app is its own bundle (out/cli, below).
    '!node_modules/{tsx,esbuild,@esbuild,get-tsconfig,resolve-pkg-maps,commander,cli-table3,@colors}{,/**}',
    // Type declarations only (protobufjs lists @types/node as a dependency).
    '!node_modules/{@types,undici-types}{,/**}',
    // Native builds for the Bare runtime: tar-stream and streamx load bare-* only under Bare and
    // use Node's built-ins under Node and Electron (their JavaScript stays, ~7 MB of binaries go).
    '!node_modules/bare-*/prebuilds{,/**}',
    // ssh2's optional native crypto is NOT shipped. ssh2 tries require('cpu-features') and its
    // sshcrypto.node inside try/catch and otherwise uses Node's own crypto (plus its bundled
    // poly1305 WebAssembly, kept). The .node files in node_modules were compiled for the Node
    // that ran `npm ci`, not for Electron's ABI; rebuilding them (npmRebuild) would need a
    // compiler and Electron's headers per target and buy speed Holdfast does not need. So:
    // no rebuild, no binary, one code path on every platform.
    '!node_modules/{cpu-features,buildcheck}{,/**}',
    '!node_modules/nan{,/**}',
    '!node_modules/ssh2/lib/protocol/crypto/{build,src,binding.gyp}{,/**}',
    '!**/*.node',
    '!node_modules/**/{test,tests,__tests__,docs,example,examples,.github}{,/**}',
    '!node_modules/**/*.{md,markdown,ts,mts,cts,map}',
  ],
  // See above: nothing native to rebuild, and a rebuild would fetch Electron's headers.
  npmRebuild: false,
  nodeGypRebuild: false,
  buildDependenciesFromSource: false,

  // asar on. Nothing inside it needs to be a real file: the .proto files are read by
  // protobufjs from resources/proto (extraResources), no native module is shipped, and
  // child processes run the system's own tools (zstd, lz4), never a file of ours.
  asar: true,
  asarUnpack: [],

  // Electron's fuses, flipped in the packaged binary before signing (docs/app.md, "Security").
  // The app never runs Electron as Node: the shipped CLI runs under the system's node, and
  // nothing forks the main process. So no ELECTRON_RUN_AS_NODE, NODE_OPTIONS (or
  // NODE_EXTRA_CA_CERTS) and no --inspect/SIGUSR1 debugger; the app's code is only the signed
  // app.asar (its integrity checked on macOS and Windows); file:// pages get no extra powers, as
  // the renderer is served from app:// (src/main/appProtocol.ts).
  electronFuses: {
    runAsNode: false,
    enableNodeOptionsEnvironmentVariable: false,
    enableNodeCliInspectArguments: false,
    enableEmbeddedAsarIntegrityValidation: true,
    onlyLoadAppFromAsar: true,
    enableCookieEncryption: true,
    grantFileProtocolExtraPrivileges: false,
  },

  extraResources: [
    // containerd's service definitions; src/core/containerd/protoDir.ts looks in
    // process.resourcesPath/proto when packaged.
    { from: 'proto', to: 'proto', filter: ['**/*.proto', '**/descriptors.json'] },
    // The compiled `holdfast` CLI (`npm run build:cli` writes out/cli), shipped beside the app as
    // Rancher Desktop ships rdctl: resources/cli/.
    { from: 'out/cli', to: 'cli', filter: ['**/*', '!**/*.map'] },
  ],

  linux: {
    target: ['AppImage', 'deb'],
    // `holdfast` on PATH is the CLI's name; the desktop app's launcher is holdfast-desktop.
    executableName: 'holdfast-desktop',
    icon: 'build/icons',
    category: 'Development',
    synopsis: 'Durable image pins and safe air-gap imports for k3s nodes',
    maintainer: 'Holdfast maintainers <maintainers@holdfast.invalid>',
    desktop: { entry: desktopEntry() },
  },
  deb: { packageCategory: 'admin', priority: 'optional' },
  appImage: { artifactName: '${productName}-${version}-${arch}.${ext}' },

  win: { target: ['nsis'], icon: 'build/icon.ico' },
  nsis: {
    oneClick: false,
    perMachine: false,
    allowToChangeInstallationDirectory: true,
    // Update metadata is for auto-update, which Holdfast does not do.
    differentialPackage: false,
    artifactName: '${productName}-Setup-${version}-${arch}.${ext}',
  },

  mac: {
    target: ['dmg'],
    icon: 'build/icon.icns',
    category: 'public.app-category.developer-tools',
    hardenedRuntime: true,
    gatekeeperAssess: false,
    entitlements: 'build/entitlements.mac.plist',
    entitlementsInherit: 'build/entitlements.mac.plist',
  },
  dmg: { writeUpdateInfo: false, artifactName: '${productName}-${version}-${arch}.${ext}' },
};

export default config;
