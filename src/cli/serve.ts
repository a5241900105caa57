// `holdfast serve`: the same UI and typed contract as the desktop app, over loopback HTTP.
import { findAppPath } from '../core/appPaths';
import { HoldfastError } from '../core/errors';
import { createHandlers } from '../core/service';
import { startServer } from '../server/http';

export async function serveCommand(opts: { port?: number; out: (s: string) => void }): Promise<void> {
  const rendererDir = findAppPath('out/renderer', 'index.html', process.env.HOLDFAST_RENDERER_DIR);
  if (!rendererDir) {
    throw new HoldfastError('NOT_FOUND', 'the UI has not been built yet', { hint: 'Run `npm run build` once, then `holdfast serve` again.' });
  }
  const handlers = createHandlers();
  const server = await startServer({ handlers, rendererDir, ...(opts.port ? { port: opts.port } : {}) });
  opts.out(`Holdfast is serving on ${server.url}`);
  opts.out('Open that URL in a browser on this machine; press Ctrl-C to stop.');
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      void Promise.all([server.close(), handlers.dispose()]).finally(resolve);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
