// The guard container image (#50) for the suites that run it: built by
// scripts/build-guard-image.sh with buildah, loaded into podman storage private to a test's work
// dir, and run as the DaemonSet runs it (uid 0, read-only root, no network) with a lab node's
// socket, images dir, pin set, home and textfile dir mounted at the DaemonSet's paths.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { LabNodeHandle } from '../../lab';
import { repoRoot } from './support';

const run = promisify(execFile);
const VERSION = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
export const IMAGE = `localhost/holdfast:${VERSION}`;

export type Podman = (args: string[]) => Promise<{ stdout: string; stderr: string }>;

/** podman on storage and state private to `work` (vfs: any filesystem), never the machine's. */
export function podmanIn(work: string): Podman {
  writeFileSync(path.join(work, 'registries.conf'), '');
  const storage = ['--root', path.join(work, 'storage'), '--runroot', path.join(work, 'run'), '--storage-driver', 'vfs', '--tmpdir', path.join(work, 'libpod'), '--events-backend', 'none'];
  const env = { ...process.env, TMPDIR: work, CONTAINERS_REGISTRIES_CONF: path.join(work, 'registries.conf') };
  return (args) => run('podman', [...storage, ...args], { env, maxBuffer: 16 * 1024 * 1024, timeout: 180_000 });
}

/** Builds the image's OCI archive into `outDir` (holdfast-guard.tar), as CI does. */
export async function buildGuardImage(work: string, outDir: string): Promise<string> {
  await run('bash', [path.join(repoRoot, 'scripts', 'build-guard-image.sh'), '--out', outDir], { cwd: work, maxBuffer: 16 * 1024 * 1024, timeout: 280_000 });
  return path.join(outDir, 'holdfast-guard.tar');
}

/** Where a node's files are on this machine, for the DaemonSet's mounts. */
export interface GuardMounts {
  node: LabNodeHandle;
  pinSet: string;
  home: string;
  textDir: string;
}

/**
 * `podman run` arguments for one guard run of the image as the DaemonSet runs it: read-only root
 * (not even a tmpfs on /tmp), no network, the mounts at the DaemonSet's paths. Podman as root
 * raises nofile and nproc to 1M by default, which a CI runner without CAP_SYS_RESOURCE cannot:
 * both are set lower. `guardArgs` follow `guard`.
 */
export function guardRunArgs(m: GuardMounts, guardArgs: string[]): string[] {
  const mounts = [
    `${m.node.hostSocket}:/run/k3s/containerd/containerd.sock:ro`,
    `${m.node.hostImagesDir}:/var/lib/rancher/k3s/agent/images:ro`,
    `${m.pinSet}:/etc/holdfast/pinset.yaml:ro`,
    `${m.home}:/var/lib/holdfast`,
    `${m.textDir}:/textfile`,
  ].flatMap((v) => ['--volume', v]);
  const limits = ['--ulimit', 'nofile=4096:4096', '--ulimit', 'nproc=4096:4096'];
  return ['run', '--rm', '--network=none', '--read-only', '--read-only-tmpfs=false', ...limits, ...mounts, IMAGE, 'guard', ...guardArgs];
}
