// `holdfast serve`: the same UI and typed contract as the desktop app, over loopback HTTP.
import { findAppPath } from '../core/appPaths';
import { rendererDirOverride } from '../core/env';
import { HoldfastError } from '../core/errors';
import { createHandlers } from '../core/service';
import { remedyCommand } from './remedyText';
import { startServer } from '../server/http';

/** Why 127.0.0.1:PORT could not be listened on, and what to do (else the error as it came). */
function listenError(e: unknown, port: number): unknown {
  const code = e instanceof Error && 'code' in e ? e.code : undefined;
  if (code === 'EADDRINUSE') {
    return new HoldfastError('CONFLICT', `port ${port} on 127.0.0.1 is already in use`, { hint: 'Choose another --port, or --port 0 for any free port.', cause: e });
  }
  if (code === 'EACCES') {
    return new HoldfastError('INVALID_INPUT', `not allowed to listen on port ${port} (ports below 1024 need privileges)`, { hint: 'Choose a port from 1024 up, or --port 0 for any free port.', cause: e });
  }
  return e;
}

export async function serveCommand(opts: { port?: number; out: (s: string) => void }): Promise<void> {
  const rendererDir = findAppPath('out/renderer', 'index.html', rendererDirOverride());
  if (!rendererDir) {
    throw new HoldfastError('NOT_FOUND', 'the UI has not been built yet', { hint: 'Run `npm run build` once, then `holdfast serve` again.' });
  }
  const handlers = createHandlers({ remedyCommand });
  // 0 (or no --port): the OS picks a free port; the URL printed carries the one it picked.
  const port = opts.port ?? 0;
  const server = await startServer({ handlers, rendererDir, port }).catch(async (e: unknown) => {
    await handlers.dispose();
    throw listenError(e, port);
  });
  opts.out(`Holdfast is serving on ${server.url}`);
  opts.out(`Open that URL in a browser on this machine (port ${server.port}); press Ctrl-C to stop.`);
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
