// The CLI runs the app's service in process (src/cli/service.ts): its arguments meet the
// contract's schemas, its errors come back through the envelope with their code (the exit code)
// and hint, and its node changes are the service's.
import { describe, expect, it } from 'vitest';
import { createHandlers } from '../../../src/core/service';
import { dispatch } from '../../../src/server/dispatch';
import { runCli, useTempHome } from '../../support/cliInProcess';

const home = useTempHome('hf-cli-service-');
const run = (...args: string[]) => runCli(args);

describe('the CLI through the service', () => {
  it('checks arguments with the contract before anything: a path out of the images dir is a usage error (2)', async () => {
    const r = await run('rm-archive', 'edge', '../etc/passwd');
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('holdfast: Invalid input: path: a path inside the images dir');
  });

  it("passes the service's errors on with their code and hint", async () => {
    const r = await run('images', 'ghost');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('holdfast: no node named "ghost" — List nodes with `holdfast node ls`; add one with `holdfast node add`.');
    const forced = await run('rm-archive', 'ghost', 'bundle.tar', '--force');
    expect(forced.code).toBe(1);
    expect(forced.stderr).toContain('no node named "ghost"');
  });

  it('adds and removes nodes through nodes.add and nodes.remove', async () => {
    expect((await run('node', 'add', 'edge', '--host', '10.0.0.7', '--no-check')).code).toBe(0);
    const listed = JSON.parse((await run('node', 'ls', '--json')).stdout) as { name: string; host: string }[];
    expect(listed.map((n) => [n.name, n.host])).toEqual([['edge', '10.0.0.7']]);
    const rm = await run('node', 'rm', 'edge');
    expect(rm).toEqual({ code: 0, stdout: 'removed edge', stderr: '' });
    expect(JSON.parse((await run('node', 'ls', '--json')).stdout)).toEqual([]);
    const again = await run('node', 'rm', 'edge');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('no node named "edge"');
  });

  it('node edit saves through nodes.update, only if nobody changed the node since it was read', async () => {
    expect((await run('node', 'add', 'edge', '--host', '10.0.0.7', '--no-check')).code).toBe(0);
    const edit = await run('node', 'edit', 'edge', '--group', 'site-a', '--no-check');
    expect(edit).toEqual({ code: 0, stdout: 'updated edge:\n  group: (none) → site-a', stderr: '' });

    const svc = createHandlers({ home: home() });
    try {
      const read = (await svc['nodes.list']({}))[0]!;
      expect(read.group).toBe('site-a');
      // Someone else changes it meanwhile: a save expecting the old copy is refused, nothing saved.
      expect((await run('node', 'edit', 'edge', '--port', '2222', '--no-check')).code).toBe(0);
      const stale = await dispatch(svc, 'nodes.update', { name: 'edge', node: { ...read, group: 'site-b' }, expect: read });
      expect(stale).toMatchObject({ ok: false, error: { code: 'CONFLICT' } });
      const now = (await svc['nodes.list']({}))[0]!;
      expect([now.port, now.group]).toEqual([2222, 'site-a']);
    } finally {
      await svc.dispose();
    }
  });
});
