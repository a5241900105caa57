// `holdfast log | head -3`: once the reader has what it wants it closes the pipe, and the next
// write fails with EPIPE. Node ignores SIGPIPE, so without this the failed write surfaces as an
// error and a stack trace. Like other CLIs, Holdfast then just stops, with status 0: nobody is
// left to read more, and the reader got what it asked for.

type Stream = Pick<NodeJS.WriteStream, 'on'>;

let installed = false;

/**
 * On EPIPE on stdout, ends the process quietly with status 0; on EPIPE on stderr, drops the
 * messages (a closed stderr must not stop work whose result still reaches stdout). Any other
 * write error is rethrown, so the crash handler reports it. Once per process.
 */
export function endQuietlyOnClosedPipe(
  streams: { stdout: Stream; stderr: Stream } = process,
  exit: (code: number) => void = (c) => process.exit(c),
): void {
  if (streams === process) {
    if (installed) return;
    installed = true;
  }
  streams.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    exit(0);
  });
  streams.stderr.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
  });
}
