// Direct delivery across many nodes: the archive is spooled once on this machine, then each
// node (a bounded number at a time) is sent only the blobs it lacks. A node that fails leaves
// the others' work intact and reported; running the same command again resumes it.
import type { JobNodeProgress, ImportPhase } from '../../../shared/domain/jobs';
import { DEFAULT_IMPORT_PARALLEL } from '../../../shared/importOptions';
import { mapLimit } from '../../../shared/mapLimit';
import { formatBytes } from '../../../shared/format';
import { plural } from '../../../shared/wording';
import { HoldfastError } from '../../errors';
import type { NodeSession } from '../../node/session';
import type { OpsContext } from '../inventory';
import { ProgressMeter } from '../upload/progress';
import type { SpooledBundle } from './bundle';
import { deliverDirect, type DirectNodeResult, type DirectPhase, type DirectProgress } from './write';

export interface DirectFleetOptions {
  parallel?: number;
  signal?: AbortSignal;
  onNode?: (node: string, patch: Partial<Omit<JobNodeProgress, 'node'>>) => void;
}

export type DirectOutcome = { node: string; ok: true; result: DirectNodeResult } | { node: string; ok: false; error: unknown };

/** The job's phases for direct delivery's steps (the job model is the import's). */
const PHASE: Record<DirectPhase, ImportPhase> = {
  checking: 'checking',
  sending: 'uploading',
  unpacking: 'importing',
  pinning: 'pinning',
  verifying: 'verifying',
  done: 'done',
};

function message(p: DirectProgress): string {
  switch (p.phase) {
    case 'checking':
      return 'asking the node which blobs it holds';
    case 'sending':
      return `sending ${p.blobsSent} of ${plural(p.blobsToSend, 'missing blob')}`;
    case 'unpacking':
      return 'unpacking layers for CRI';
    case 'pinning':
      return 'writing image records, pinned durably';
    case 'verifying':
      return 'reading every reference back';
    case 'done':
      return 'done';
  }
}


/** One sentence: what direct delivery did on a node. */
export function directSummary(r: DirectNodeResult): string {
  const sent =
    r.blobsSent === 0
      ? `sent no layer (the node held all ${plural(r.blobs, 'blob')})`
      : `sent ${formatBytes(r.bytesSent)} in ${plural(r.blobsSent, 'blob')}${r.bytesSent < r.bytesMissing ? ` (resumed: ${formatBytes(r.bytesMissing - r.bytesSent)} were there from an earlier run)` : ''}, ${r.blobsPresent} of ${r.blobs} were already there`;
  const unpacked = r.layersUnpacked ? `, unpacked ${plural(r.layersUnpacked, 'layer')} (${r.snapshotter})` : '';
  return `${sent}${unpacked}, ${plural(r.references.length, 'reference')} pinned durably${r.verification.ok ? ', verified' : ''}`;
}

export async function deliverToNodes(
  nodes: string[],
  withSession: <T>(node: string, fn: (s: NodeSession) => Promise<T>) => Promise<T>,
  ctx: OpsContext,
  bundle: SpooledBundle,
  opts: DirectFleetOptions,
): Promise<DirectOutcome[]> {
  return mapLimit(nodes, opts.parallel ?? DEFAULT_IMPORT_PARALLEL, async (node): Promise<DirectOutcome> => {
    if (opts.signal?.aborted) return { node, ok: false, error: Object.assign(new Error('cancelled'), { name: 'AbortError' }) };
    opts.onNode?.(node, { state: 'running', phase: 'checking', message: 'connecting' });
    try {
      const result = await withSession(node, (s) => {
        let meter: ProgressMeter | null = null;
        let phase: DirectPhase | null = null;
        return deliverDirect(s, ctx, bundle, {
          ...(opts.signal ? { signal: opts.signal } : {}),
          onProgress: (p) => {
            // Nothing to send: no transfer to show, straight on to unpacking. Done: the job's
            // result (the summary) says so in one step.
            if ((p.phase === 'sending' && p.bytesToSend === 0) || p.phase === 'done') return;
            if (p.phase === 'sending' && !meter) {
              meter = new ProgressMeter({
                bytesTotal: p.bytesToSend,
                onProgress: (u) => opts.onNode?.(node, { state: 'running', phase: 'uploading', bytesDone: u.bytesDone, bytesTotal: u.bytesTotal, rate: u.rate, eta: u.eta, message: message(p) }),
              });
              meter.setPhase('uploading', 0);
            }
            if (p.phase === 'sending') {
              meter!.update(p.bytesSent);
              if (phase === 'sending') return;
            }
            if (p.phase !== phase) {
              phase = p.phase;
              opts.onNode?.(node, { state: 'running', phase: PHASE[p.phase], bytesDone: p.bytesSent, bytesTotal: p.bytesToSend, message: message(p) });
            }
          },
        });
      });
      if (!result.verification.ok) {
        throw new HoldfastError('CONFLICT', `the images written to ${node} did not verify: ${result.verification.problems.join('; ')}`, {
          hint: 'Nothing was removed. Run the same command again: it sends only what is still missing and checks again.',
        });
      }
      return { node, ok: true, result };
    } catch (error) {
      return { node, ok: false, error };
    }
  });
}
