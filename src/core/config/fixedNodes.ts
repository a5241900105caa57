// A node list given by the caller instead of the home's nodes.json: `--local` runs on the node
// itself, whose one node is this machine (core/node/localSession.ts). Lookups answer from the
// list; nothing is ever added, changed or removed (the user's nodes.json is not touched).
import type { NodeDef } from '../../shared/domain/nodes';
import { HoldfastError } from '../errors';
import { NodeStore } from './nodes';

const fixed = () => new HoldfastError('REFUSED', 'the node list is fixed here (--local reads this machine only)', { hint: 'Run the command without --local to change the configured nodes.' });

export class FixedNodeStore extends NodeStore {
  constructor(
    home: string,
    private readonly nodes: readonly NodeDef[],
  ) {
    super(home);
  }

  override async list(): Promise<NodeDef[]> {
    return this.nodes.map((n) => ({ ...n }));
  }

  override async add(): Promise<NodeDef> {
    throw fixed();
  }

  override async addMany(): Promise<NodeDef[]> {
    throw fixed();
  }

  override async update(): Promise<NodeDef> {
    throw fixed();
  }

  /** The session follows a detected images dir itself (LocalNodeSession.open): nothing to record. */
  override async adoptImagesDir(): Promise<NodeDef | null> {
    return null;
  }

  override async remove(): Promise<void> {
    throw fixed();
  }
}
