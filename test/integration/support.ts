// Shared helpers for integration tests: lab + a private HOLDFAST_HOME + the real CLI.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, createReadStream, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { defaultLabDistro, type Lab, type LabDistro, type LabNodeHandle } from '../../lab';
import { completeNode } from '../../src/core/config/nodes';
import type { NodeDef, NodeInput } from '../../src/shared/domain/nodes';
import { criPinning } from '../../src/shared/versions';
import { shellQuote } from '../../src/core/ssh/quote';

export const repoRoot = path.resolve(import.meta.dirname, '..', '..');

export function tempHome(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'hf-home-'));
}

/**
 * The node definition a technician would add for a lab node. On an RKE2-shaped node, with RKE2's
 * images dir: `holdfast node add` finds it when the service first connects (core/service/nodes),
 * which a session opened straight from this definition skips.
 */
export function labNodeDef(lab: Lab, node: LabNodeHandle, over: Partial<NodeInput> = {}): NodeDef {
  return completeNode({
    name: node.name,
    host: node.host,
    port: node.port,
    user: node.user,
    identity: lab.clientKey,
    knownHosts: lab.knownHosts,
    ...(node.distro === 'k3s' ? {} : { imagesDir: labDistro(node.distro).imagesDir }),
    ...over,
  });
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs the real `holdfast` bin as a user would. */
export function runCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 180_000): Promise<CliResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'holdfast.mjs'), ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/**
 * `holdfast node add` for a lab node into `home`, as a technician types it (the lab's key and
 * known_hosts; `extra` options after them); the CLI must accept it silently.
 */
export async function addLabNode(lab: Lab, node: LabNodeHandle, home: string, opts: { name?: string; extra?: string[] } = {}): Promise<void> {
  const args = ['node', 'add', opts.name ?? node.name, '--host', node.host, '--port', String(node.port), '--identity', lab.clientKey, '--known-hosts', lab.knownHosts];
  const r = await runCli([...args, ...(opts.extra ?? [])], { HOLDFAST_HOME: home });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
}

/** The SHA-256 of a file, read in 1 MiB chunks (archives here run to hundreds of MiB). */
export function sha256File(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(file, { highWaterMark: 1024 * 1024 })
      .on('data', (d) => h.update(d))
      .on('error', reject)
      .on('end', () => resolve(h.digest('hex')));
  });
}

/** Whether the node's containerd's CRI honours io.cri-containerd.pinned at all (1.6: never). */
export async function criPinsHonoured(node: LabNodeHandle): Promise<boolean> {
  return criPinning(await node.containerdVersion()) !== 'none';
}

export interface CtrImage {
  ref: string;
  digest: string;
  labels: Record<string, string>;
}

/**
 * Parses `ctr images ls` (containerd 1.6, 1.7 and 2.x): a header line then
 * `REF  TYPE  DIGEST  SIZE  PLATFORMS  LABELS`, columns separated by runs of spaces/tabs,
 * SIZE itself containing a space ("1.2 KiB"), LABELS as k=v,k=v or "-".
 */
export function parseCtrImages(output: string): CtrImage[] {
  const lines = output.trim().split('\n');
  const out: CtrImage[] = [];
  for (const line of lines.slice(1)) {
    if (!line.trim()) continue;
    const cols = line.trim().split(/\s+/);
    const ref = cols[0]!;
    // REF TYPE DIGEST …: by position, since CRI's own records are named sha256:<id> too
    const digest = cols[2]!;
    const labelCol = cols[cols.length - 1]!;
    const labels: Record<string, string> = {};
    if (labelCol !== '-') {
      for (const kv of labelCol.split(',')) {
        const i = kv.indexOf('=');
        labels[kv.slice(0, i)] = kv.slice(i + 1);
      }
    }
    out.push({ ref, digest, labels });
  }
  return out;
}

/**
 * What a suite asserts that depends on the distro its lab nodes are shaped as
 * ($HOLDFAST_LAB_DISTRO: the integration-rke2 project runs the pin, fate, import and inspect
 * suites on RKE2 nodes). Stated here from the facts sheet (docs/k3s-facts.md, "Where things live
 * on a node"), not read from src/shared/distro.ts: a suite must be able to show that wrong.
 */
export interface LabDistroFacts {
  distro: LabDistro;
  /** How Holdfast's text names it. */
  name: 'k3s' | 'RKE2';
  /** The label the distro puts on what it imports, and strips at its next start. */
  label: string;
  /** Its images dir inside the node (default data-dir). */
  imagesDir: string;
  /** Its kubectl and kubeconfig on a server node. */
  kubectl: string;
  kubeconfig: string;
  /** The distro's release on a k3s release's line and patch: v1.33.2+k3s1 → v1.33.2+rke2r1. */
  release(k3sRelease: string): string;
  /** `.cache.json`'s key for a file of the images dir (an absolute in-node path). */
  cacheKey(rel: string): string;
}

export function labDistro(distro: LabDistro = defaultLabDistro()): LabDistroFacts {
  const imagesDir = `/var/lib/rancher/${distro}/agent/images`;
  return {
    distro,
    name: distro === 'k3s' ? 'k3s' : 'RKE2',
    label: `io.cattle.${distro}.pinned`,
    imagesDir,
    kubectl: distro === 'k3s' ? 'k3s kubectl' : '/var/lib/rancher/rke2/bin/kubectl',
    kubeconfig: `/etc/rancher/${distro}/${distro}.yaml`,
    release: (k3sRelease) => (distro === 'k3s' ? k3sRelease : k3sRelease.replace(/\+k3s(\d+)$/, '+rke2r$1')),
    cacheKey: (rel) => `${imagesDir}/${rel}`,
  };
}

/**
 * Writes a node's own /etc/rancher tree (relative paths → text, optional modes) and mounts it over
 * /etc/rancher inside the node's mount namespace only (once; later calls rewrite the files under
 * it). The host needs an /etc/rancher to mount over: made here.
 */
export async function etcRancher(node: LabNodeHandle, files: Record<string, string>, modes: Record<string, number> = {}): Promise<void> {
  mkdirSync('/etc/rancher', { recursive: true });
  const dir = path.join(node.root, 'etc-rancher');
  // Emptied, not replaced: the bind mount holds on to this very directory.
  mkdirSync(dir, { recursive: true });
  for (const e of readdirSync(dir)) rmSync(path.join(dir, e), { recursive: true, force: true });
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  for (const [rel, mode] of Object.entries(modes)) chmodSync(path.join(dir, rel), mode);
  if (!(await node.execInNode(['sh', '-c', 'grep -q " /etc/rancher " /proc/self/mountinfo && echo yes || true'])).includes('yes')) {
    await node.execInNode(['mount', '--bind', dir, '/etc/rancher']);
  }
}

/**
 * The node's own /var/lib/holdfast (where deploy/'s guard keeps its home): a dir under the node's
 * root, mounted over /var/lib/holdfast inside the node's mount namespace only (once). Returns its
 * host path: a guard run with it as HOLDFAST_HOME writes what the node would hold there.
 */
export async function nodeHoldfastHome(node: LabNodeHandle): Promise<string> {
  mkdirSync('/var/lib/holdfast', { recursive: true });
  const dir = path.join(node.root, 'var-lib-holdfast');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (!(await node.execInNode(['sh', '-c', 'grep -q " /var/lib/holdfast " /proc/self/mountinfo && echo yes || true'])).includes('yes')) {
    await node.execInNode(['mount', '--bind', dir, '/var/lib/holdfast']);
  }
  return dir;
}

/**
 * The CLI on a pseudo-terminal `cols` wide (util-linux `script`; stdout and stderr both on it, as
 * for a person): the lines as the terminal shows them, escape sequences and overwritten text gone.
 * `raw` gets what the terminal received, for tests that check every output.
 */
export function onTerminal(args: string[], cols: number, env: NodeJS.ProcessEnv, raw?: (out: string) => void): Promise<string[]> {
  const command = `stty cols ${cols} rows 50; exec ${shellQuote([process.execPath, path.join(repoRoot, 'bin', 'holdfast.mjs'), ...args])}`;
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(timer);
      raw?.(out);
      // oxlint-disable-next-line no-control-regex -- escape sequences are what this removes
      resolve(out.split('\n').map((l) => l.replace(/\r$/, '')).map((l) => l.slice(l.lastIndexOf('\r') + 1).replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '')));
    });
  });
}
