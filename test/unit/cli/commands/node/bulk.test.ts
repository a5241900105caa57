// cli/commands/node/bulk: what node import-ssh-config prints as JSON (#47, item 2: core hands the
// remedy of a skipped alias as data; the CLI words it).
import { describe, expect, it } from 'vitest';
import { sshImportJson } from '../../../../../src/cli/commands/node/bulk';

describe('node import-ssh-config --json', () => {
  it("words a skipped alias's remedy into its reason, as the text has always said it", () => {
    const plan = { nodes: [], skipped: [{ alias: 'e 1', reason: 'a node named "e 1" is already configured', remedy: { action: 'node-edit' as const, node: 'e 1' } }], notes: [] };
    expect(sshImportJson(true, plan, []).skipped).toEqual([{ alias: 'e 1', reason: "a node named \"e 1\" is already configured (change it with `holdfast node edit 'e 1'`)" }]);
  });
});
