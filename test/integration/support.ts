// Shared helpers for integration tests: lab + a private HOLDFAST_HOME + the real CLI.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Lab, LabNodeHandle } from '../../lab';
import { completeNode } from '../../src/core/config/nodes';
import type { NodeDef, NodeInput } from '../../src/shared/domain';

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
