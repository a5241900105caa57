// The import across many nodes: in parallel (bounded), each node on its own — a failure on
// one leaves the others' work intact and reported.
import type { JobNodeProgress } from '../../shared/domain';
import type { OpsContext } from '../node/operations';
import type { NodeSession } from '../node/session';
import type { InspectedArchive } from './inspectLocal';
import { importToNode, type NodeImportResult } from './run';

export interface FleetImportOptions {
  pin: boolean;
  removeArchive: boolean;
  parallel?: number;
  importTimeoutMs?: number;
  signal?: AbortSignal;
  onNode?: (node: string, patch: Partial<Omit<JobNodeProgress, 'node'>>) => void;
}

export type NodeOutcome = { node: string; ok: true; result: NodeImportResult } | { node: string; ok: false; error: unknown };

export async function importToNodes(
  nodes: string[],
  withSession: <T>(node: string, fn: (s: NodeSession) => Promise<T>) => Promise<T>,
  ctx: OpsContext,
  archive: InspectedArchive,
  opts: FleetImportOptions,
): Promise<NodeOutcome[]> {
  const out: NodeOutcome[] = new Array(nodes.length);
  let next = 0;
  const worker = async () => {
    while (next < nodes.length) {
      const i = next++;
      const node = nodes[i]!;
      if (opts.signal?.aborted) {
        out[i] = { node, ok: false, error: Object.assign(new Error('cancelled'), { name: 'AbortError' }) };
        continue;
      }
      opts.onNode?.(node, { state: 'running', phase: 'checking', message: 'connecting' });
      try {
        const result = await withSession(node, (s) =>
          importToNode(s, ctx, archive, {
            pin: opts.pin,
            removeArchive: opts.removeArchive,
            ...(opts.importTimeoutMs !== undefined ? { importTimeoutMs: opts.importTimeoutMs } : {}),
            ...(opts.signal ? { signal: opts.signal } : {}),
            onProgress: (p) => opts.onNode?.(node, p),
          }),
        );
        out[i] = { node, ok: true, result };
      } catch (error) {
        out[i] = { node, ok: false, error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(opts.parallel ?? 4, nodes.length)) }, worker));
  return out;
}
