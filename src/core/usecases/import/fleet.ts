// The import across many nodes: in parallel (bounded), each node on its own — a failure on
// one leaves the others' work intact and reported.
import type { JobNodeProgress } from '../../../shared/domain/jobs';
import type { OpsContext } from '../inventory';
import type { NodeSession } from '../../node/session';
import { DEFAULT_IMPORT_PARALLEL, type ImportOptions, type ImportTuning } from '../../../shared/importOptions';
import { mapLimit } from '../../../shared/mapLimit';
import type { InspectedArchive } from './localArchive';
import { importToNode, type NodeImportResult } from './run';

export interface FleetImportOptions extends ImportOptions, ImportTuning {
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
  return mapLimit(nodes, opts.parallel ?? DEFAULT_IMPORT_PARALLEL, async (node): Promise<NodeOutcome> => {
    if (opts.signal?.aborted) return { node, ok: false, error: Object.assign(new Error('cancelled'), { name: 'AbortError' }) };
    opts.onNode?.(node, { state: 'running', phase: 'checking', message: 'connecting' });
    try {
      const result = await withSession(node, (s) =>
        importToNode(s, ctx, archive, {
          pin: opts.pin,
          removeArchive: opts.removeArchive,
          ...(opts.timeout !== undefined ? { timeout: opts.timeout } : {}),
          ...(opts.signal ? { signal: opts.signal } : {}),
          onProgress: (p) => opts.onNode?.(node, p),
        }),
      );
      return { node, ok: true, result };
    } catch (error) {
      return { node, ok: false, error };
    }
  });
}
