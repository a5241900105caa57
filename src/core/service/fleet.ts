// Fleet runs (fleet.*): inspect many nodes at once, results streaming out as fleet.node events
// and the report as fleet.done. A run is a task of the service's TaskRunner, in the group
// 'fleet': one run at a time, a new one replacing the last (which then reports nothing);
// fleet.cancel stops it and its report still arrives. The last report is kept for fleet.export.
import { fleetInWords, type FleetReport } from '../../shared/fleet';
import { selectNodes } from '../../shared/nodeSelection';
import { parsePinSet, PIN_SET_CONFIG_MAP, PinSetError, pinSetOf, pinSetText, type PinSetFileKind } from '../../shared/pinSet';
import { HoldfastError } from '../errors';
import { limit } from '../limits';
import { logger } from '../log';
import { fleetCsv, fleetHtml, surveyFleet } from '../usecases/fleet';
import type { HandlersOf, ServiceParts } from './parts';

const log = logger('service');

const FLEET = 'fleet';

/** The pin set's text, checked by reading it back with the parser guard uses: a bad name or reference is refused, naming the field and the fix. */
async function pinSetFile(name: string, images: string[], as: PinSetFileKind): Promise<{ filename: string; mime: string; content: string }> {
  const set = pinSetOf(name, images);
  const content = await pinSetText(set, as);
  try {
    await parsePinSet(await pinSetText(set, 'pinset'), `pin set ${name}`, limit('pinSet.bytes'));
  } catch (e) {
    if (!(e instanceof PinSetError)) throw e;
    throw new HoldfastError('INVALID_INPUT', `This pin set cannot be written: ${e.message}`, { hint: `Fix: ${e.fix}.` });
  }
  return { filename: as === 'pinset' ? `${name}.pinset.yaml` : `${PIN_SET_CONFIG_MAP.name}-${name}.yaml`, mime: 'application/yaml', content };
}

export function fleetHandlers({ opts, store, ctx, credentials, tasks, emit }: ServiceParts): HandlersOf<'fleet.start' | 'fleet.cancel' | 'fleet.last' | 'fleet.export' | 'pinset.save'> {
  let lastFleet: FleetReport | null = null;
  return {
    'fleet.start': async ({ nodes, group, concurrency, timeout, diskPicture }) => {
      const sel = selectNodes(await store.list(), { names: nodes, group });
      if ('problem' in sel) throw new HoldfastError(sel.problem.code, sel.problem.message, { hint: sel.problem.hint, ...(sel.problem.remedy ? { remedy: sel.problem.remedy } : {}) });
      const defs = sel.nodes;
      // Results stream to the UI as nodes answer; the run goes on if the window goes away.
      const run = tasks.start(
        async (task) => {
          const runId = task.id;
          try {
            const report = await surveyFleet(defs, {
              ctx,
              signal: task.signal,
              // In the app a node that needs a secret asks for it; the dialog queues several prompts.
              open: { resolveNode: (n) => store.get(n), ...(opts.fleetCredentials === false ? {} : { credentials }) },
              ...(opts.openSession ? { openSession: opts.openSession } : {}),
              ...(concurrency !== undefined ? { concurrency } : {}),
              ...(timeout !== undefined ? { timeoutMs: Math.round(timeout * 1000) } : {}),
              ...(diskPicture ? { diskPicture } : {}),
              onNode: (result) => emit({ type: 'fleet.node', payload: { runId, result } }),
            });
            // Replaced by a newer run, or the service closing: nothing more to say.
            if (task.stoppedBy !== null && task.stoppedBy !== 'cancelled') return;
            lastFleet = report;
            emit({ type: 'fleet.done', payload: { runId, report } });
          } catch (err) {
            log.debug('fleet run failed', { runId, err });
          }
        },
        { group: FLEET },
      );
      return { runId: run.id, nodes: defs.map((d) => d.name) };
    },
    'fleet.cancel': async ({ runId }) => ({ cancelled: tasks.stop(runId, 'cancelled', FLEET) }),
    'fleet.last': async () => lastFleet,
    'fleet.export': async ({ format }) => {
      if (!lastFleet) throw new HoldfastError('NOT_FOUND', 'no fleet report yet', { hint: 'Inspect the fleet first.' });
      const stamp = lastFleet.generatedAt.replace(/[:.]/g, '-');
      if (format === 'html') return { filename: `holdfast-fleet-${stamp}.html`, mime: 'text/html', content: fleetHtml(lastFleet, opts.remedyCommand) };
      if (format === 'csv') return { filename: `holdfast-fleet-${stamp}.csv`, mime: 'text/csv', content: fleetCsv(lastFleet, opts.remedyCommand) };
      return { filename: `holdfast-fleet-${stamp}.json`, mime: 'application/json', content: JSON.stringify(fleetInWords(lastFleet, opts.remedyCommand), null, 2) };
    },
    'pinset.save': async ({ name, images, as }) => {
      const file = await pinSetFile(name, images, as);
      if (!opts.saveFile) return { download: file };
      return { saved: await opts.saveFile({ title: as === 'pinset' ? 'Save the pin set' : 'Save the pin set as a ConfigMap manifest', filename: file.filename, content: file.content }) };
    },
  };
}
