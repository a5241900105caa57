// A node's registry mirrors for the fleet report: read over the inspection's own connection (one
// exec, core/node/registries.ts), with where the node would pull each needed image it lacks. The
// same reading gives the embedded registry its mirror names (core/node/embeddedRegistry.ts).
import { missingPulls, type NodeRegistries } from '../../../shared/registryMirrors';
import type { NodeSession } from '../../node/session';
import { readRegistries, registriesOptions, type RegistriesRead } from '../../node/registries';

export async function nodeRegistries(s: NodeSession): Promise<RegistriesRead> {
  return readRegistries(s.ssh, registriesOptions(s.def, await s.info()));
}

/** The report's registries with the pulls of the needed images the node lacks (when a mirror serves them). */
export function withMissingPulls(reg: NodeRegistries, missing: readonly string[]): NodeRegistries {
  const pulls = reg.mirrors.length ? missingPulls(missing, reg.mirrors) : [];
  return pulls.length ? { ...reg, pulls } : reg;
}
