// The real service (src/core/service.ts: the handlers Electron main and `holdfast serve` run)
// over fake nodes (e2e/fake-node.ts) holding the fake data (e2e/fake-data.ts), in a throwaway
// HOLDFAST_HOME with the fake audit log, and the technician's local archives (e2e/fake-bundles.ts). Records every call, so specs can assert what the UI
// asked for; everything the UI is answered comes from core.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHandlers } from '../src/core/service';
import type { Handlers } from '../src/shared/handlers';
import type { LiveEvent } from '../src/shared/contract';
import { elsewhere, fakeNodeSpecs, type Scenario } from './fake-data';
import { writeBundles } from './fake-bundles';
import { fakeOpener, FakeNode } from './fake-node';

export type { Scenario };

export async function fakeService(scenario: Scenario = {}) {
  const home = mkdtempSync(path.join(os.tmpdir(), 'holdfast-e2e-'));
  // The local archives the import wizard is given (e2e/fake-bundles.ts).
  writeBundles();
  const { specs, audit, inputs } = fakeNodeSpecs(scenario);
  const nodes = new Map(specs.map((s) => [s.def.name, new FakeNode(s)]));
  // holdImages: edge-01's images arrive only when the test says so.
  let releaseImages: () => void = () => undefined;
  if (scenario.holdImages) nodes.get('edge-01')!.containerd.hold = new Promise<void>((resolve) => (releaseImages = resolve));
  // The audit log as the nodes' history left it (time and user as recorded).
  writeFileSync(path.join(home, 'audit.jsonl'), audit.map((e) => JSON.stringify(e) + '\n').join(''), { mode: 0o600 });
  const service = createHandlers({
    home,
    openSession: fakeOpener(nodes, elsewhere),
    ...(scenario.dialogPaths ? { pickArchives: async () => [...scenario.dialogPaths!] } : {}),
  });
  for (const input of inputs) await service['nodes.add']({ node: input });

  const calls: { channel: string; args: unknown }[] = [];
  const listeners = new Set<(e: LiveEvent) => void>();
  const handlers = {} as Record<string, (args: never) => Promise<unknown>>;
  for (const [channel, fn] of Object.entries(service)) {
    if (channel === 'events' || channel === 'dispose') continue;
    handlers[channel] = (args: never) => {
      // Recorded without secrets: tests assert they are nowhere.
      const recorded = channel === 'credentials.answer' ? { id: (args as { id: string }).id, answered: (args as { answers: unknown }).answers !== null } : args;
      calls.push({ channel, args: recorded });
      return (fn as (a: never) => Promise<unknown>)(args);
    };
  }
  if (!scenario.noEvents) {
    Object.assign(handlers, {
      events: {
        subscribe(cb: (e: LiveEvent) => void) {
          listeners.add(cb);
          const off = service.events.subscribe(cb);
          return () => {
            listeners.delete(cb);
            off();
          };
        },
      },
    });
  }
  return {
    handlers: handlers as unknown as Handlers,
    calls,
    nodes,
    listeners,
    home,
    releaseImages: () => releaseImages(),
    /** A node by name (its containerd, images dir and disk). */
    node: (name: string) => nodes.get(name)!,
    async dispose() {
      await service.dispose();
      rmSync(home, { recursive: true, force: true });
    },
  };
}
