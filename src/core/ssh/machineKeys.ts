// The host keys each configured node's known_hosts records for it: how `node ls` tells one
// machine configured twice (shared/sameMachine) without connecting. A key recorded under a
// wildcard pattern (`*.site`) is left out: one key for many names says nothing of one machine.
import { promises as fsp } from 'node:fs';
import type { NodeDef } from '../../shared/domain/nodes';
import type { MachineIdentity } from '../../shared/sameMachine';
import { hostKeyFingerprint, lookupHostKeys } from './knownHosts';

export async function recordedHostKeys(defs: readonly Pick<NodeDef, 'name' | 'host' | 'port' | 'knownHosts'>[]): Promise<MachineIdentity[]> {
  const files = new Map<string, Promise<string>>();
  const read = (file: string) => {
    let text = files.get(file);
    if (!text) {
      // Missing or unreadable: nothing recorded (connecting says what is wrong with it).
      text = fsp.readFile(file, 'utf8').catch(() => '');
      files.set(file, text);
    }
    return text;
  };
  return Promise.all(
    defs.map(async (d) => {
      const text = d.knownHosts ? await read(d.knownHosts) : '';
      const entries = text ? lookupHostKeys(text, d.host, d.port) : [];
      const keys = entries.filter((e) => e.marker === null && !/[*?]/.test(e.hosts)).map((e) => hostKeyFingerprint(e.keyBlob));
      return { node: d.name, hostKeys: [...new Set(keys)] };
    }),
  );
}
