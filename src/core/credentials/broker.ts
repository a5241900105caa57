// The app's side of asking a person for a secret while connecting: core's credentials
// callbacks become requests pushed to the UI (an event), answered through one validated
// channel. The answer goes straight to ssh2 and is then dropped: it is never stored, logged,
// sent back to the renderer or put into an error. Unanswered requests time out.
import { randomUUID } from 'node:crypto';
import { HoldfastError } from '../errors';
import type { CredentialRequest } from '../../shared/domain/connection';
import type { CredentialsProvider } from '../ssh/credentials';

export type { CredentialRequest };

export class CredentialBroker {
  private readonly pending = new Map<string, { request: CredentialRequest; resolve: (a: string[]) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();

  constructor(
    private readonly emit: (req: CredentialRequest) => void,
    private readonly timeoutMs = 5 * 60_000,
  ) {}

  /** Core's provider: each callback becomes one request to the UI. */
  readonly provider: CredentialsProvider = {
    passphrase: async (keyPath) =>
      (await this.ask({ kind: 'passphrase', subject: keyPath, prompts: [{ prompt: `Passphrase for ${keyPath}`, echo: false }] }))[0] ?? '',
    password: async (user, host) =>
      (await this.ask({ kind: 'password', subject: `${user}@${host}`, prompts: [{ prompt: `Password for ${user}@${host}`, echo: false }] }))[0] ?? '',
    keyboardInteractive: (prompts, ctx) =>
      this.ask({
        kind: 'keyboard-interactive',
        subject: `${ctx.user}@${ctx.host}`,
        prompts,
        ...(ctx.instructions ? { instructions: ctx.instructions } : {}),
      }),
  };

  private ask(req: Omit<CredentialRequest, 'id'>): Promise<string[]> {
    const id = randomUUID();
    return new Promise<string[]>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new HoldfastError('TIMEOUT', 'nobody answered the credentials prompt in time'));
      }, this.timeoutMs);
      const request: CredentialRequest = { id, ...req };
      this.pending.set(id, { request, resolve, reject, timer });
      this.emit(request);
    });
  }

  /** The UI's answer: strings in prompt order, or null for Cancel. */
  answer(id: string, answers: string[] | null): void {
    const p = this.pending.get(id);
    if (!p) throw new HoldfastError('NOT_FOUND', 'that credentials prompt is no longer open');
    this.pending.delete(id);
    clearTimeout(p.timer);
    if (answers === null) p.reject(new Error('cancelled'));
    else p.resolve(answers);
  }

  /** Requests still open, so a reloaded window asks again. */
  open(): CredentialRequest[] {
    return [...this.pending.values()].map((p) => p.request);
  }

  close(): void {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new Error('cancelled'));
      this.pending.delete(id);
    }
  }
}
