// The CLI's way into the application service: the same handlers (src/core/service.ts) that
// Electron main calls over IPC and `holdfast serve` over HTTP, run in this process through the
// same validate → run → envelope step (dispatch), so every rule the service holds (argument
// schemas, forced removal and prune confirmations, lost pins, adopting a detected images dir)
// applies to the CLI as it does to the app. The CLI keeps only the presentation.
//
// Loaded when a command first calls an operation: `--help`, a typo and commands that never
// call one start without the service (nor ssh2, grpc-js, protobufjs under it).
import { HoldfastError } from '../core/errors';
import type { Service } from '../core/service';
import type { ArgsOf, Channel, Envelope, ResultOf } from '../shared/contract';

export interface CliService {
  /** Runs one contract operation; its error envelope is thrown as a HoldfastError (main maps its code to the exit code). */
  call<C extends Channel>(channel: C, args: ArgsOf<C>): Promise<ResultOf<C>>;
  /** Closes the sessions the operations opened (once the command is done). */
  close(): Promise<void>;
}

type Loaded = { service: Service; dispatch: (h: Service, channel: string, raw: unknown) => Promise<Envelope<unknown>> };

export function lazyService(): CliService {
  let loaded: Promise<Loaded> | undefined;
  const load = () =>
    (loaded ??= Promise.all([import('../core/service'), import('../server/dispatch'), import('./prompt')]).then(([{ createHandlers }, { dispatch }, { ttyCredentials }]) => ({
      // Passphrases, passwords, keyboard-interactive answers: asked on the terminal, kept nowhere.
      service: createHandlers({ credentials: ttyCredentials() }),
      dispatch,
    })));
  return {
    async call(channel, args) {
      const { service, dispatch } = await load();
      const answer = await dispatch(service, channel, args);
      if (answer.ok) return answer.result as ResultOf<typeof channel>;
      const { code, message, ...extra } = answer.error;
      throw new HoldfastError(code, message, extra);
    },
    async close() {
      const l = await loaded?.catch(() => undefined); // a service that failed to load has nothing open
      await l?.service.dispose();
    },
  };
}
