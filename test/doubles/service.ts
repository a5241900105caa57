// The real service (src/core/service/: the handlers Electron main and `holdfast serve` run)
// over fake nodes (test/doubles/node.ts) holding the fake data (test/doubles/data.ts), in a throwaway
// HOLDFAST_HOME with the fake audit log, and the technician's local archives (test/doubles/bundles.ts). Records every call, so specs can assert what the UI
// asked for; everything the UI is answered comes from core.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { remedyCommand } from '../../src/cli/remedyText';
import { createHandlers, type Service } from '../../src/core/service';
import type { Handlers } from '../../src/shared/handlers';
import { channels, type ArgsOf, type Channel, type LiveEvent, type ResultOf } from '../../src/shared/contract';
import { elsewhere, fakeNodeSpecs, type Scenario } from './data';
import { writeBundles } from './bundles';
import { fakeOpener, FakeNode } from './node';

export type { Scenario };

const isChannel = (name: string): name is Channel => Object.hasOwn(channels, name);
const isCredentialsAnswer = (channel: Channel, args: unknown): args is ArgsOf<'credentials.answer'> =>
  channel === 'credentials.answer' && typeof args === 'object' && args !== null && 'answers' in args;

/** Handlers of the channels K (generic: indexing it by a channel C gives C's own handler type). */
type HandlersOf<K extends Channel> = { [C in K]: (args: ArgsOf<C>) => Promise<ResultOf<C>> };

/** Replaces the handler of `channel` by one that tells `onCall` its arguments, then runs it. */
function recordCalls<C extends Channel>(handlers: HandlersOf<C>, channel: C, onCall: (args: unknown) => void): void {
  const run = handlers[channel];
  handlers[channel] = (args: ArgsOf<C>) => {
    // Recorded without secrets: tests assert they are nowhere.
    onCall(isCredentialsAnswer(channel, args) ? { id: args.id, answered: args.answers !== null } : args);
    return run(args);
  };
}

export async function fakeService(scenario: Scenario = {}) {
  const home = mkdtempSync(path.join(os.tmpdir(), 'holdfast-e2e-'));
  // The local archives the import wizard is given (test/doubles/bundles.ts).
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
    // As the app's main process words the HTML report's remedies.
    remedyCommand,
    openSession: fakeOpener(nodes, elsewhere),
    ...(scenario.dialogPaths ? { pickArchives: async () => [...scenario.dialogPaths!] } : {}),
  });
  for (const input of inputs) await service['nodes.add']({ node: input });

  const calls: { channel: Channel; args: unknown }[] = [];
  const listeners = new Set<(e: LiveEvent) => void>();
  // The service's channels, each recorded before it runs; `events` (the live stream `holdfast
  // serve` reads off its handlers) unless the scenario has none.
  const { events, dispose: _dispose, ...channelHandlers } = service;
  const recorded: Handlers = { ...channelHandlers };
  for (const channel of Object.keys(channels)) {
    if (!isChannel(channel)) continue;
    recordCalls(recorded, channel, (args) => calls.push({ channel, args }));
  }
  const handlers: Handlers & { events?: Service['events'] } = recorded;
  if (!scenario.noEvents) {
    handlers.events = {
      subscribe(cb: (e: LiveEvent) => void) {
        listeners.add(cb);
        const off = events.subscribe(cb);
        return () => {
          listeners.delete(cb);
          off();
        };
      },
    };
  }
  return {
    handlers,
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
