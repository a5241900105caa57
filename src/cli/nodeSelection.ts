// The nodes a command names (`holdfast inspect`, `holdfast prune`): NODE..., --group G or --all.
import { HoldfastError } from '../core/errors';
import { selectNodes as pickNodes } from '../shared/nodeSelection';
import type { NodeDef } from '../shared/domain/nodes';
import type { Cli } from './context';

/** The nodes a command names: NODE..., --group G, or (--all / nothing) every node. */
export async function selectNodes(cli: Cli, names: string[], o: { all?: boolean; group?: string }): Promise<NodeDef[]> {
  if (names.length && (o.all || o.group)) throw new HoldfastError('INVALID_INPUT', 'name nodes, or use --all or --group, not both');
  if (o.all && o.group) throw new HoldfastError('INVALID_INPUT', '--all and --group exclude each other');
  const sel = pickNodes(await cli.store().list(), { names, group: o.group });
  if ('problem' in sel) throw new HoldfastError(sel.problem.code, sel.problem.message, { hint: sel.problem.hint, ...(sel.problem.remedy ? { remedy: sel.problem.remedy } : {}) });
  return sel.nodes;
}
