// Shared helpers for integration tests: lab + a private HOLDFAST_HOME + the real CLI.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import type { Lab, LabNodeHandle } from '../../lab';
import { completeNode } from '../../src/core/config/nodes';
import type { NodeDef, NodeInput } from '../../src/shared/domain';
import { criPinning } from '../../src/shared/versions';

export const repoRoot = path.resolve(import.meta.dirname, '..', '..');

export function tempHome(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'hf-home-'));
}

/** The node definition a technician would add for a lab node. */
export function labNodeDef(lab: Lab, node: LabNodeHandle, over: Partial<NodeInput> = {}): NodeDef {
  return completeNode({
    name: node.name,
    host: node.host,
    port: node.port,
    user: node.user,
    identity: lab.clientKey,
    knownHosts: lab.knownHosts,
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
